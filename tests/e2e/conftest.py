"""Real-terminal helpers: programs run in tmux sessions, screens read with capture-pane."""

from __future__ import annotations

import shlex
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import BIN


def screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-pt", session], capture_output=True, text=True
    ).stdout


def wait_for(session: str, *texts: str, timeout: float = 15) -> str:
    """The screen once every one of `texts` is on it at the same time.

    A screen is drawn in parts: the line a test waits for can be there before the one it
    asserts on next, so a test names here everything it reads from the screen it gets.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = screen(session)
        if all(text in shown for text in texts):
            return shown
        time.sleep(0.1)
    shown = screen(session)
    missing = [text for text in texts if text not in shown]
    raise AssertionError(f"{missing!r} never appeared:\n{shown}")


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 15) -> None:
    """Poll a condition outside the screen (a file written, a config saved)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


@pytest.fixture
def tmux_run(home: Path, tmp_path: Path):
    sessions = []

    def start(*args: str, env_prefix: str = "") -> str:
        session = f"hermes-e2e-{uuid.uuid4().hex[:8]}"
        command = " ".join(shlex.quote(a) for a in [str(BIN / "hermes-tui"), *args])
        shell = (
            f"HERMES_HOME={shlex.quote(str(home))} {env_prefix} {command}; echo EXIT=$?; sleep 60"
        )
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                        "-c", str(tmp_path), shell], check=True)  # fmt: skip
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
