"""The approval prompt of `hermes-tui call` in a real terminal (tmux)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import BIN

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by `make test`"),
]


def screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-pt", session], capture_output=True, text=True
    ).stdout


def wait_for(session: str, text: str, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = screen(session)
        if text in shown:
            return shown
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{screen(session)}")


@pytest.fixture
def tmux_run(home: Path, tmp_path: Path):
    sessions = []

    def start(*args: str) -> str:
        session = f"hermes-e2e-{uuid.uuid4().hex[:8]}"
        command = " ".join(shlex.quote(a) for a in [str(BIN / "hermes-tui"), *args])
        shell = f"HERMES_HOME={shlex.quote(str(home))} {command}; echo EXIT=$?; sleep 60"
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                        "-c", str(tmp_path), shell], check=True)  # fmt: skip
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


@pytest.mark.parametrize(
    ("answer", "kept", "code"), [("d", True, 1), ("", True, 1), ("yes", True, 1), ("o", False, 0)]
)
def test_prompt_denies_unless_explicitly_allowed(
    tmux_run, tmp_path: Path, answer: str, kept: bool, code: int
) -> None:
    (tmp_path / "data.txt").write_text("x")
    session = tmux_run("call", "terminal", "--args", '{"command": "rm data.txt"}')
    shown = wait_for(session, "Allow? [o]nce")
    assert (
        "rm data.txt" in shown
        and "why:   deletes data.txt" in shown
        and "writes: data.txt" in shown
    )
    subprocess.run(["tmux", "send-keys", "-t", session, answer, "Enter"], check=True)
    wait_for(session, f"EXIT={code}")
    assert (tmp_path / "data.txt").exists() is kept


def test_always_is_saved_and_not_asked_again(tmux_run, tmp_path: Path, home: Path) -> None:
    (tmp_path / "a.log").write_text("x")
    session = tmux_run("call", "terminal", "--args", '{"command": "rm -f a.log"}')
    wait_for(session, "Allow? [o]nce")
    subprocess.run(["tmux", "send-keys", "-t", session, "a", "Enter"], check=True)
    wait_for(session, "EXIT=0")
    assert "rm -f a.log" in (home / "config.yaml").read_text()
    second = tmux_run("call", "terminal", "--args", '{"command": "rm -f a.log"}')
    shown = wait_for(second, "EXIT=")
    assert "Allow?" not in shown and "EXIT=0" in shown
