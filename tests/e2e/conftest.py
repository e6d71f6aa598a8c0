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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is end-to-end: `make test` runs them after the others, one
    at a time, and `make check` leaves them out. A module that forgets its marker (or
    overwrites it with another `pytestmark`) is caught here rather than run in parallel."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and item.get_closest_marker("e2e") is None:
            raise pytest.UsageError(f"{item.nodeid}: a test in tests/e2e must be marked e2e")
