"""The tool-use screen (u): cost beside use, suggestions previewed, saved once confirmed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from tests.support.pilot import wait_until
from tests.support.usage import write_known_sessions
from workbench.core.config import config_path, load_config
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.usage import ConfirmChange, UsageScreen

CONFIG = """\
# kept
model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
"""


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_preview_then_apply_writes_the_config(home: Path) -> None:
    write_known_sessions(home)
    config_path(home).parent.mkdir(parents=True, exist_ok=True)
    config_path(home).write_text(CONFIG)
    app = WorkbenchApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        await pilot.press("u")
        screen = app.screen
        assert isinstance(screen, UsageScreen)
        await wait_until(pilot, lambda: screen.report is not None, 60)
        tools = {row[0]: row for row in cells(screen.query_one("#usage-tools", DataTable))}
        assert tools["read_file"][1:5] == ["eager", "198", "6", "5"]  # 6 sessions read
        assert tools["write_file"][3:5] == ["1", "1"]  # the oldest session's call counts
        status = str(screen.query_one("#usage-status", Static).content)
        assert "6 session(s) read, 2.8 requests a session" in status
        suggestions = cells(screen.query_one("#usage-suggestions", DataTable))
        assert [row[0] for row in suggestions] == [  # the largest saving first
            "switch off skill_manage",
            "switch off search_files",
            "switch off patch",
            "switch off skill_view",
        ]
        preview = screen.query_one("#usage-preview", Static)
        assert "would become: [skill_manage]" in str(preview.content)

        await pilot.press("down")
        await wait_until(pilot, lambda: "would become: [search_files]" in str(preview.content))
        await pilot.press("down")  # patch: its own preview
        await wait_until(pilot, lambda: "would become: [patch]" in str(preview.content))
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmChange)
        await pilot.press("n")  # left: nothing saved
        assert app.screen is screen and "disabled" not in config_path(home).read_text()

        await pilot.press("a", "y")
        await wait_until(
            pilot, lambda: load_config(config_path(home)).get("tools.disabled") == ["patch"], 30
        )
        assert config_path(home).read_text().startswith("# kept")
        await wait_until(
            pilot,
            lambda: (
                screen.report is not None
                and {t.name: t.state for t in screen.report.tools}.get("patch") == "off"
            ),
            60,
        )
        assert [s.tool for s in screen.report.suggestions] == [
            "skill_manage",
            "search_files",
            "skill_view",
        ]
