"""terminal: real processes, timeouts that kill, output caps, nothing destructive run unasked."""

from __future__ import annotations

import json
import time
from pathlib import Path

from workbench.core.invoke import call_tool
from workbench.core.registry import registry
from workbench.tools.terminal_tool import MAX_OUTPUT_BYTES, cap_output, run_command


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


def test_output_is_capped_keeping_head_and_tail() -> None:
    data = b"HEAD" + b"x" * (MAX_OUTPUT_BYTES * 2) + b"TAIL"
    text = cap_output(data)
    assert text.startswith("HEAD") and text.endswith("TAIL")
    assert "bytes of output omitted" in text
    assert len(text) < MAX_OUTPUT_BYTES + 100


def test_large_real_output_is_capped(tmp_path: Path) -> None:
    out = term(tmp_path, command="seq 1 100000")
    assert out["output"].startswith("1\n2\n") and out["output"].endswith("99999\n100000\n")
    assert "omitted" in out["output"]


def test_a_destructive_command_is_refused_and_not_run(tmp_path: Path) -> None:
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    for command in ("rm keep.txt", "echo gone > keep.txt", "ls $(rm keep.txt)"):
        out = term(tmp_path, command=command)
        assert out["status"] == "approval_required", command
        assert "Command not run" in out["error"]
    assert victim.read_text() == "precious"
