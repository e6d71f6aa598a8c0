"""For the sandbox's tests: bwrap made unavailable, and a directory that is not under /tmp.

The sandbox replaces /tmp with its own, so a test's "outside" directory under tmp_path is
not read-only in there but absent. Where a test needs the real thing (a write refused as
"Read-only file system"), its outside directory is made in the user's home instead.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.builtins.terminal.terminal_tool import run_spawn
from workbench.core.backends.base import Backend
from workbench.core.backends.sandbox import bwrap_status


def outside_tmp() -> Iterator[Path]:
    """A scratch directory outside /tmp (in the home directory), removed afterwards (a
    fixture's body: `yield from outside_tmp()`)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-tui-test-outside-", dir=Path.home()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with the tools these tests run (bash, touch, ...) and no bwrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("bash", "sh", "touch", "cat", "echo", "ls", "git", "ps"):
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """bubblewrap unavailable in this process (and children given `os.environ`): a PATH
    without it (`bwrap_status` looks bwrap up on PATH each time; a fixture's body)."""
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    assert not bwrap_status()[0]
    yield os.environ["PATH"]


def confined(backend: Backend, command: str, cwd: Path, timeout: float = 60) -> dict[str, Any]:
    """A command run the terminal's way through `backend`, in a session at `cwd`: its argv
    and environment, what the reaper sets up around it (limits, the network); the result
    the model reads."""
    spawn = backend.shell(command, str(cwd), timeout, session=str(cwd))
    return dict(json.loads(run_spawn(spawn, timeout)))
