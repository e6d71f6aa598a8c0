"""SVG snapshots of the workbench (pytest-textual-snapshot). Update with --snapshot-update
only after looking at the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pilot import move_to, wait_until
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.widgets.run_form import RunToolForm
from workbench.tui.widgets.tools_tree import ToolsTree

SIZES = [(120, 40), (80, 24)]


def ready(tool: str | None = None, tab: str | None = None):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        screen = app.screen
        tree = screen.query_one(ToolsTree)
        # the sizes in tokens are measured on a worker, then drawn
        await wait_until(pilot, lambda: screen.controller.rows.costs is not None)
        if tool is not None:
            move_to(tree, "tool", tool)
            await wait_until(pilot, lambda: "x: off" in str(tree.border_subtitle))
        if tab is not None:
            await pilot.press(tab)
            form = screen.query_one(RunToolForm)
            await wait_until(pilot, lambda: form.tool == tool and form.query("#arg-path"))
            # the footer depends on the focus, which F2 gives the first field a moment later;
            # a blinking cursor would be drawn or not by when the picture is taken
            field = form.query_one("#arg-path")
            field.cursor_blink = False
            field.focus()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_main_screen(snap_compare, home: Path, size) -> None:
    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=ready())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_tool_detail(snap_compare, home: Path, size) -> None:
    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=ready("read_file"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_form(snap_compare, home: Path, size) -> None:
    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=ready("read_file", "f2"))
