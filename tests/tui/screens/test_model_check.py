"""The model check (m): the probe of `doctor model` run from the workbench against the
scripted OpenAI-protocol server, each finding shown as it comes, then the advice."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from tests.support.fake_openai import FakeOpenAI
from tests.support.pilot import wait_until
from workbench.core.config import config_path
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.model_check import ModelCheckScreen


def _rows(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_m_probes_the_endpoint_and_says_what_to_change(home: Path, fake: FakeOpenAI) -> None:
    config_path(home).parent.mkdir(parents=True, exist_ok=True)
    config_path(home).write_text(fake.model_config("test-model"))
    fake.mode = "stream-broken"
    app = WorkbenchApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, ModelCheckScreen)
        await wait_until(pilot, lambda: screen.report is not None, 60)
        rows = _rows(screen.query_one("#model-check-findings", DataTable))
        assert [r[:3] for r in rows] == [
            ["minimal", "streamed", "stream-broken"],
            ["minimal", "not streamed", "native"],
            ["agent", "streamed", "stream-broken"],
            ["agent", "not streamed", "native"],
        ]
        assert len(screen.findings) == 4  # each heard as it came, none added twice
        status = str(screen.query_one("#model-check-status", Static).content)
        assert "test-model" in status and "calls are lost" in status
        advice = str(screen.query_one("#model-check-advice", Static).content)
        assert advice.startswith("• stream-broken (minimal, streamed; agent, streamed)")

        fake.mode = "native"
        await pilot.press("g")  # probed again: now it conforms
        await wait_until(pilot, lambda: screen.report is not None and screen.report.ok, 60)
        assert len(fake.requests) == 8
        assert "every request got a proper tool call" in str(
            screen.query_one("#model-check-status", Static).content
        )
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_the_command_palette_opens_it(home: Path, fake: FakeOpenAI) -> None:
    from textual.command import CommandList, CommandPalette

    config_path(home).parent.mkdir(parents=True, exist_ok=True)
    config_path(home).write_text(fake.model_config("test-model"))
    fake.mode = "refused"
    app = WorkbenchApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        palette = app.screen
        await pilot.press(*"Model check")
        hits = palette.query_one(CommandList)
        await wait_until(
            pilot,
            lambda: (
                hits.option_count > 0 and "Model check" in str(hits.get_option_at_index(0).prompt)
            ),
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelCheckScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None, 60)
        assert {f.kind for f in screen.report.findings} == {"refused"}
