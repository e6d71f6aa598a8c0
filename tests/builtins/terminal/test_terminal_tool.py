"""terminal: real processes, timeouts that kill, output caps, nothing destructive run unasked."""

from __future__ import annotations

import json
import time
from pathlib import Path

from workbench.builtins.terminal.terminal_tool import MAX_OUTPUT_BYTES, run_command
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry


def term(cwd: Path, **args) -> dict:
    return json.loads(call_tool(registry, "terminal", args, cwd=str(cwd)))


def test_runs_in_the_session_directory(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("x")
    out = term(tmp_path, command="pwd; ls")
    assert out == {"output": f"{tmp_path}\nmarker.txt\n", "exit_code": 0, "error": None}


def test_workdir_and_exit_code(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert term(tmp_path, command="pwd", workdir="sub")["output"] == f"{tmp_path / 'sub'}\n"
    failed = term(tmp_path, command="ls no-such-file")
    assert failed["exit_code"] == 2 and "no-such-file" in failed["output"]
    assert "does not exist" in term(tmp_path, command="ls", workdir="nope")["error"]


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    # run_command directly: `sleep` behind a pipe is read-only, but the gate is not the point.
    started = time.monotonic()
    out = json.loads(run_command("sleep 30 | cat; echo never", tmp_path, timeout=1))
    assert time.monotonic() - started < 10
    assert out["status"] == "timeout" and out["exit_code"] is None
    assert "timed out after 1s" in out["error"]
    assert "never" not in out["output"]


def test_large_real_output_keeps_head_and_tail_and_says_it_was_not_saved(tmp_path: Path) -> None:
    # Called with no session (no spill directory): cut, and the result says so.
    out = term(tmp_path, command="seq 1 100000")
    assert out["output"].startswith("1\n2\n") and out["output"].endswith("99999\n100000\n")
    assert "omitted and lost" in out["output"] and "no spill directory" in out["output"]
    assert len(out["output"]) < MAX_OUTPUT_BYTES + 500
    assert out["output_bytes"] == len("".join(f"{i}\n" for i in range(1, 100001)))


def test_a_destructive_command_is_refused_and_not_run(tmp_path: Path) -> None:
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    for command in ("rm keep.txt", "echo gone > keep.txt", "ls $(rm keep.txt)"):
        out = term(tmp_path, command=command)
        assert out["status"] == "approval_required", command
        assert "Command not run" in out["error"]
    assert victim.read_text() == "precious"
