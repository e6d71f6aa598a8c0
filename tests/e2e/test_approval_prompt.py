"""The approval prompt of `hermes-tui call` in a real terminal (tmux)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.tmux import wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by `make test`"),
]


@pytest.mark.parametrize(
    ("answer", "kept", "code"), [("d", True, 1), ("", True, 1), ("yes", True, 1), ("o", False, 0)]
)
def test_prompt_denies_unless_explicitly_allowed(
    tmux_run, tmp_path: Path, answer: str, kept: bool, code: int
) -> None:
    (tmp_path / "data.log").write_text("x")  # a log: no checkpoint holds it, so rm asks
    session = tmux_run("call", "terminal", "--args", '{"command": "rm data.log"}')
    wait_for(session, "Allow? [o]nce", "rm data.log", "why:   deletes data.log", "writes: data.log")
    subprocess.run(["tmux", "send-keys", "-t", session, answer, "Enter"], check=True)
    wait_for(session, f"EXIT={code}")
    assert (tmp_path / "data.log").exists() is kept


def test_always_is_saved_and_not_asked_again(tmux_run, tmp_path: Path, home: Path) -> None:
    (tmp_path / "a.log").write_text("x")
    session = tmux_run("call", "terminal", "--args", '{"command": "rm -f a.log"}')
    wait_for(session, "Allow? [o]nce")
    subprocess.run(["tmux", "send-keys", "-t", session, "a", "Enter"], check=True)
    wait_for(session, "EXIT=0")
    assert "rm -f a.log" in (home / "config.yaml").read_text()
    second = tmux_run("call", "terminal", "--args", '{"command": "rm -f a.log"}')
    shown = wait_for(second, "EXIT=0")  # printed after any question would have been
    assert "Allow?" not in shown


def test_a_command_cannot_hide_itself_in_the_prompt(tmux_run, tmp_path: Path) -> None:
    (tmp_path / "data.log").write_text("x")  # a log: no checkpoint holds it, so rm asks
    hidden = "rm -f data.log #\r\x1b[2K\x1b[1A\x1b[2Kls -la\necho second line"
    args = json.dumps({"command": hidden})
    session = tmux_run("call", "terminal", "--args", args)
    shown_whole = r"rm -f data.log #\r\x1b[2K\x1b[1A\x1b[2Kls -la"
    wait_for(session, "Allow? [o]nce", shown_whole, "    echo second line")  # every line
    subprocess.run(["tmux", "send-keys", "-t", session, "d", "Enter"], check=True)
    wait_for(session, "EXIT=1")
    assert (tmp_path / "data.log").exists()
