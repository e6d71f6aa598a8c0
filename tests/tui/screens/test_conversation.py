"""A past conversation opened from a damaged transcript: what can be read shows, the rest is said."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.pilot import loaded, wait_until
from tests.support.transcripts import write_damaged_session
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.conversation import ConversationScreen


def notes(screen: ConversationScreen) -> list[str]:
    return [str(w.content) for w in screen.query(".note")]


async def test_damaged_lines_are_left_out_and_said(home: Path) -> None:
    session_id = write_damaged_session(home)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        screen = ConversationScreen(home / "sessions" / f"{session_id}.jsonl")
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded)
        assert "5 damaged line(s) could not be read (left out)" in notes(screen)
        assert [str(w.content) for w in screen.query(".user")] == ["read both"]


async def test_a_fifo_never_blocks_the_screen(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        screen = ConversationScreen(fifo)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded)
        assert notes(screen) == [f"cannot read {fifo}: not a regular file"]


async def test_where_a_conversation_was_compressed_shows_as_a_divider(home: Path) -> None:
    import json

    path = home / "sessions" / "20260101-000000-abcdef.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [
        {"kind": "session", "id": path.stem, "model": "m"},
        {"kind": "message", "message": {"role": "user", "content": "first"}},
        {"kind": "compressed", "messages": [], "before": 25_100, "after": 9_800,
         "window": 32_768, "stubbed": 6, "summarised": 14, "trimmed": 0},
        {"kind": "context_refused", "message": "too long", "note": "The endpoint refused it."},
        {"kind": "compressed", "before": "garbage", "window": None},  # damaged: still shown
        {"kind": "message", "message": {"role": "user", "content": "second"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        screen = ConversationScreen(path)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded)
        dividers = [str(w.content) for w in screen.query(".divider")]
        assert dividers[0] == (
            "context compressed 25.1k → 9.8k / 32k: 6 results stubbed, 14 messages summarised"
        )
        assert len(dividers) == 2 and "The endpoint refused it." in notes(screen)
        assert [str(w.content) for w in screen.query(".user")] == ["first", "second"]
