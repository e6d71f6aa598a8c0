"""A tool card in the chat: Enter or Space opens and closes it."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.support.pilot import wait_until
from workbench.tui.widgets.chat import ToolCard


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolCard("call-1", "read_file", {"path": "notes.txt"})


def _body(card: ToolCard) -> str:
    shown = card.query_one(".card-body", Static).visual
    return shown.plain if isinstance(shown, Text) else str(shown)


async def test_enter_and_space_open_and_close_a_cards_arguments_and_result() -> None:
    app = Host()
    async with app.run_test() as pilot:
        card = app.query_one(ToolCard)
        card.finish("ok", 0.01, "hello from the file", None)
        card.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: card.has_class("-expanded"))
        assert '"path": "notes.txt"' in _body(card)
        assert "hello from the file" in _body(card)
        await pilot.press("space")
        await wait_until(pilot, lambda: not card.has_class("-expanded"))
