"""Real-terminal helpers: programs run in tmux sessions, screens read with capture-pane."""

from __future__ import annotations

import shlex
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.support.cli import BIN


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
