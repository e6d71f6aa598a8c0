"""Calls you can keep, in a real terminal: a call from the run form is in the tool's history
after a restart, saved as a test from there, and `hermes-tui replay` passes it; the file
changed so the check fails, replay exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.tmux import keys, typed, wait_for, wait_until

pytestmark = pytest.mark.e2e


def _to_read_file(session: str) -> None:
    # the sizes in tokens measured: the tree is redrawn with them once, before the filter
    wait_for(session, "Built-in (10)", " tokens ")
    keys(session, "/", *"read_file", "Enter")
    wait_for(session, "1 match")


def test_run_restart_save_as_a_test_and_replay(
    tmux_run, cli_env, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello from notes\n")
    session = tmux_run()
    _to_read_file(session)
    keys(session, "F2")
    wait_for(session, "Run read_file")
    typed(session, "notes.txt")
    keys(session, "C-r")
    wait_for(session, "hello from notes", "ok in")
    keys(session, "C-q")
    wait_for(session, "EXIT=0")

    session = tmux_run()  # a new workbench: the call is still there
    _to_read_file(session)
    keys(session, "F4")
    wait_for(session, "1 kept · F4 to re-run", "by hand", "Save as a test")  # focused: its keys
    keys(session, "t")
    wait_for(session, "Save read_file notes.txt as a test", "tests/tools/read_file.yaml")
    keys(session, *["Tab"] * 5)  # name, file, status, JSON path, its value, contains
    typed(session, "hello from notes")
    keys(session, "C-s")
    wait_for(session, "Saved as a test")
    cases = tmp_path / "tests" / "tools" / "read_file.yaml"
    wait_until(cases.exists, "the case file written")
    keys(session, "C-q")
    wait_for(session, "EXIT=0")

    passed = run(cli_env, "replay", "tests/tools/read_file.yaml", cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("PASS  tests/tools/read_file.yaml #1 read_file notes.txt")
    assert "1 case(s): 1 passed, 0 failed" in passed.stdout

    cases.write_text(cases.read_text().replace("hello from notes", "goodbye"))
    failed = run(cli_env, "replay", "tests/tools/read_file.yaml", cwd=tmp_path)
    assert failed.returncode == 1
    assert "FAIL  tests/tools/read_file.yaml #1" in failed.stdout
    assert 'result does not contain "goodbye"' in failed.stdout
