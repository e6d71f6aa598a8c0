"""Searching past sessions from the command palette, and opening the one found."""

from __future__ import annotations

from pathlib import Path

from tests.support.pilot import loaded, wait_until
from tests.support.transcripts import write_sessions
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.conversation import ConversationScreen
from workbench.tui.screens.session_search import SessionSearchScreen
from workbench.tui.widgets.reply import AssistantMessage


async def test_search_shows_hits_and_enter_opens_the_session(home: Path) -> None:
    write_sessions(home, 150)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        app._search_sessions()
        await wait_until(pilot, lambda: isinstance(app.screen, SessionSearchScreen))
        await pilot.press(*"zebra kubernetes")
        hits = app.screen.query_one("#session-hits")
        await wait_until(pilot, lambda: hits.option_count == 1)
        assert "1 hit(s)" in str(app.screen.query_one("#session-status").content)
        await pilot.press("enter", "enter")  # to the hits, then open the first
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        conversation = app.screen
        await wait_until(pilot, lambda: conversation.loaded)
        assert conversation.path.name == "20260101-0000123-00007b.jsonl"
        users = [str(w.content) for w in conversation.query(".user")]
        assert any("zebra-service" in u for u in users) and len(users) == 2
        assert len(conversation.query(AssistantMessage)) == 2
