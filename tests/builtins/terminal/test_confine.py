"""What the reaper sets up around a command from its request, for real: rlimits in the
command's process only, a pids cgroup made for it and removed after, a descriptor holding a
text; and what it cannot set up stops the command before it runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from workbench.builtins.terminal import terminal_tool
from workbench.core.backends import limits

ROOT = os.geteuid() == 0


def run(command: str, cwd: Path, **confine: object) -> dict:
    out = terminal_tool.run_process(["bash", "-c", command], cwd, 30, confine=confine)
    return dict(json.loads(out))


def test_rlimits_are_the_commands_and_not_the_reapers(tmp_path: Path) -> None:
    rlimits = [["DATA", 64 << 20, 64 << 20], ["CPU", 7, 8]]
    out = run("ulimit -d; ulimit -t; ulimit -Ht", tmp_path, rlimits=rlimits)
    assert out["output"] == f"{64 << 10}\n7\n8\n", out
    server = terminal_tool._SERVER.pid
    limits_text = Path(f"/proc/{server}/limits").read_text()
    assert "Max cpu time              unlimited" in limits_text


def test_a_text_is_given_at_the_descriptor_named(tmp_path: Path) -> None:
    out = run("cat <&5", tmp_path, files={"5": "nameserver 10.0.2.3\n"})
    assert out["output"] == "nameserver 10.0.2.3\n"


@pytest.mark.skipif(not ROOT, reason="only root makes cgroups here")
def test_a_pids_cgroup_is_made_for_the_command_and_removed_after(tmp_path: Path) -> None:
    parent, why = limits.pids_cgroup()
    if parent is None:
        pytest.skip(why)
    asked = {"parent": parent, "max": 17}
    own = "p=$(grep -E ':pids:|^0::' /proc/self/cgroup | head -1 | cut -d: -f3)"
    out = run(f'{own}; echo "$p"; cat "{parent}/${{p##*/}}/pids.max"', tmp_path, pids_cgroup=asked)
    made, most = out["output"].splitlines()
    assert made.rsplit("/", 1)[1].startswith("hermes-tui-") and most == "17", out
    assert not os.path.exists(os.path.join(parent, made.rsplit("/", 1)[1]))


def test_a_process_limit_that_cannot_be_held_runs_nothing(tmp_path: Path) -> None:
    asked = {"parent": str(tmp_path / "not-a-cgroup"), "max": 10}
    out = run("touch ran", tmp_path, pids_cgroup=asked)
    assert not (tmp_path / "ran").exists()
    assert out["exit_code"] == 126 and out["output"].startswith(
        f"hermes-tui: the process limit cannot be held: no pids cgroup in {tmp_path}/not-a-cgroup"
    )
    assert out["output"].endswith("; nothing was run\n")


@pytest.mark.skipif(not ROOT, reason="the exemption is root's")
def test_as_root_the_kernel_does_not_hold_rlimit_nproc(tmp_path: Path) -> None:
    """Why root's process limit is a cgroup: RLIMIT_NPROC of 5, and 20 processes start."""
    spawn = "for i in $(seq 20); do sleep 30 & done; jobs -p | wc -l; kill $(jobs -p)"
    out = run(spawn, tmp_path, rlimits=[["NPROC", 5, 5]])
    assert out["output"] == "20\n", out


def test_a_limit_already_lower_is_kept(tmp_path: Path) -> None:
    """hermes-tui run inside its own sandbox: its commands keep the outer, lower limits
    (which cannot be raised) instead of failing to set theirs."""
    script = tmp_path / "inner.py"
    script.write_text(
        "from workbench.builtins.terminal import terminal_tool as t\n"
        "rlimits = [['DATA', 512 << 20, 512 << 20]]\n"
        "print(t.run_process(['bash', '-c', 'ulimit -d'], None, 30, confine={'rlimits': rlimits}))\n"
    )
    out = run(f"{sys.executable} {script}", tmp_path, rlimits=[["DATA", 256 << 20, 256 << 20]])
    assert json.loads(out["output"])["output"] == f"{256 << 10}\n", out
