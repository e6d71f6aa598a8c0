"""Driving the workbench in a real terminal through tmux: keys, text, waiting for the screen."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from tests.support.waiting import PATIENCE


def screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-pt", session], capture_output=True, text=True
    ).stdout


def wait_for(session: str, *texts: str, timeout: float = PATIENCE) -> str:
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


def wait_until(condition: Callable[[], bool], what: str, timeout: float = PATIENCE) -> None:
    """Poll a condition outside the screen (a file written, a config saved)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


def keys(session: str, *names: str) -> None:
    for name in names:
        subprocess.run(["tmux", "send-keys", "-t", session, name], check=True)
        time.sleep(0.15)


def typed(session: str, words: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, "-l", words], check=True)
