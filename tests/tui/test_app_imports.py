"""The workbench's first frame is cheap: starting the app imports only what that frame draws.
The core, MCP, the model's client, the chat's screen and the tabs behind the tree load after
it (heavy imports load after the first frame)."""

from __future__ import annotations

import json
import subprocess
import sys

LATER = (
    "mcp",
    "openai",
    "yaml",
    "markdown_it",
    "workbench.core.runtime",
    "workbench.core.mcp",
    "workbench.tui.screens.session",
    "workbench.tui.screens.mcp_sources",
    "workbench.tui.widgets.run_form",
    "workbench.tui.widgets.sources",
    "workbench.tui.widgets.tool_detail",
    "workbench.tui.widgets.timeline",
    "textual.widgets._tabbed_content",
)

# What `hermes-tui` with no arguments imports before the app runs (what its first frame then
# imports is recorded with the frame: tests/e2e/test_workbench_terminal.py).
PROBE = """
import json, sys
import workbench.cli.main, workbench.tui.app
workbench.tui.app.WorkbenchApp()
print(json.dumps(sorted(set(sys.argv[1:]) & set(sys.modules))))
"""


def loaded_of(names: tuple[str, ...]) -> list[str]:
    """Which of `names` a fresh interpreter has loaded (this one has loaded everything)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *names],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_starting_the_workbench_leaves_the_core_mcp_and_later_screens_for_later() -> None:
    assert loaded_of(LATER) == []


def test_the_probe_finds_what_the_first_frame_does_import() -> None:
    """The check can fail: the main screen and its tree are there."""
    drawn = ("textual.app", "workbench.tui.screens.main", "workbench.tui.widgets.tools_tree")
    assert loaded_of((*drawn, *LATER)) == sorted(drawn)
