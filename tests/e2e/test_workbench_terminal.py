"""The installed `hermes-tui` in a real terminal (tmux): first screen, a toggle, a tool run, quit."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.support.tmux import keys, wait_for, wait_until
from workbench.core.config import load_config

pytestmark = pytest.mark.e2e


def test_toggle_run_and_quit(tmux_run, home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello from notes\n")
    marker = tmp_path / "first-frame.json"
    session = tmux_run(*[], env_prefix=f"HERMES_TUI_FIRST_FRAME={shlex.quote(str(marker))}")
    wait_for(session, "Built-in (10)")
    wait_until(marker.exists, "the first frame's marker written")
    first = json.loads(marker.read_text())
    assert not any(first["imported"].values()), first  # heavy imports come later
    assert set(first["imported"]) >= {"openai", "mcp", "workbench.core.runtime"}
    keys(session, "/", *"terminal", "Enter", "Space")  # Enter lands on the first match
    wait_for(session, "☐ terminal")
    wait_until(
        lambda: load_config(home / "config.yaml").get("agent.disabled_toolsets") == ["terminal"],
        "the toggle saved to config.yaml",
    )
    keys(session, "/", *["BSpace"] * 8, *"read_file", "Enter", "F2")
    wait_for(session, "Run read_file")
    keys(session, *"notes.txt", "C-r")
    wait_for(session, "hello from notes", "ok in")
    keys(session, "C-q")
    wait_for(session, "EXIT=0")
