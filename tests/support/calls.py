"""Tool calls the way `hermes-tui call` makes them with no terminal: every "ask" is a denial.

The CLI's own entry point runs in this process (faster than a subprocess per call); HOME and
HERMES_HOME come from the test's environment, so nothing reaches the real home directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Called:
    exit_code: int
    content: dict[str, Any] | str
    stdout: str

    @property
    def status(self) -> str:
        return self.content.get("status", "") if isinstance(self.content, dict) else ""

    @property
    def ran(self) -> bool:
        return self.exit_code == 0

    @property
    def succeeded(self) -> bool:
        """It ran and, for a command, the command itself exited 0 (a call that ran may hold
        a command that failed, in the sandbox or before it)."""
        return self.ran and (
            not isinstance(self.content, dict) or self.content.get("exit_code", 0) == 0
        )


def call(
    capsys: pytest.CaptureFixture[str],
    tool: str,
    args: dict[str, Any],
    cwd: Path,
    *,
    yes: bool = False,
) -> Called:
    """Run `hermes-tui call TOOL --args ... --cwd CWD [--yes]` in-process, stdin not a TTY."""
    from workbench.cli import main as cli

    capsys.readouterr()
    argv = ["call", tool, "--args", json.dumps(args), "--cwd", str(cwd)]
    code = cli.main([*argv, "--yes"] if yes else argv)
    out = capsys.readouterr().out
    try:
        content: dict[str, Any] | str = json.loads(out)
    except ValueError:
        content = out
    return Called(code, content, out)


def terminal(capsys, command: str, cwd: Path, *, yes: bool = False) -> Called:
    return call(capsys, "terminal", {"command": command}, cwd, yes=yes)


@dataclass
class Scratch:
    """A project directory, a home directory and HERMES_HOME inside it, all under tmp."""

    root: Path
    project: Path
    home: Path
    hermes: Path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scratch:
    home = tmp_path / "home"
    project = tmp_path / "project"
    hermes = home / ".hermes"
    for path in (home, project):
        path.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    monkeypatch.chdir(project)
    from workbench.core.config import ensure_home

    ensure_home(hermes)
    os.chmod(home, 0o700)
    return Scratch(tmp_path, project, home, hermes)
