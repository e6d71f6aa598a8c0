"""A past conversation, read back from its transcript: a session found by search, or the
conversation of a sub-agent. Shown as the chat shows it (messages, replies, tool cards);
`r` opens the raw transcript in the viewer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header

from workbench.core.agent import transcript
from workbench.core.events import ContextCompressed
from workbench.tui.widgets.chat import MAX_MOUNTED, ChatLog, ToolCard
from workbench.tui.widgets.reply import AssistantMessage

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class ConversationScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Close", id="conversation.close"),
        Binding("r", "raw", "Raw transcript", id="conversation.raw"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield ChatLog(id="chat-log")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = str(self.path)
        self._load()

    @property
    def workbench(self) -> WorkbenchApp:
        """The app, for the viewer it opens (the raw transcript, a spilled result)."""
        return cast("WorkbenchApp", self.app)

    def action_raw(self) -> None:
        self.workbench.open_viewer(self.path)

    @on(ToolCard.ViewRequested)
    def _view_card(self, message: ToolCard.ViewRequested) -> None:
        card = self.query_one(ChatLog).cards.get(message.call_id)
        if card is not None and card.spilled:
            self.workbench.open_viewer(card.spilled)

    @work(exclusive=True, group="conversation")
    async def _load(self) -> None:
        log = self.query_one(ChatLog)
        try:
            records = await asyncio.to_thread(transcript.read, self.path)
        except OSError as exc:
            await log.note(Text(f"cannot read {self.path}: {exc.strerror or exc}", style="red"))
            self.loaded = True
            return
        if records.skipped:
            await log.note(
                Text(
                    f"{records.skipped:,} damaged line(s) could not be read (left out)", style="red"
                )
            )
        header = next((r for r in records if r.get("kind") == "session"), {})
        shown = [r for r in records if _shown(r)]
        skipped = max(0, len(shown) - MAX_MOUNTED)
        if header.get("goal"):
            await log.note(Text(f"🧩 {header.get('id', '')}: {header['goal']}", style="cyan"))
        if skipped:
            await log.note(
                Text(f"… {skipped:,} earlier items (r shows the whole transcript)", style="dim")
            )
        with self.app.batch_update():
            for record in shown[skipped:]:
                await self._show(log, record)
        self.loaded = True

    async def _show(self, log: ChatLog, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "message":
            message = record["message"]
            if message.get("role") == "user":
                await log.user(str(message.get("content") or ""))
            else:
                reply = await log.add(AssistantMessage())
                reply.add_fragment(str(message["content"]))
                reply.finish()
        elif kind == "tool_started":
            label = record.get("label", "")
            await log.card(record["id"], record["name"], record.get("arguments"), label)
        elif kind == "tool_finished" and record.get("id") in log.cards:
            log.cards[record["id"]].finish(
                record.get("status", ""),
                float(record.get("duration") or 0),
                record.get("content", ""),
                record.get("spilled"),
            )
        elif kind == "error":
            await log.note(Text(str(record.get("message", "")), style="red"))
        elif kind == "child_started":
            await log.note(
                Text(f"🧩 {record.get('name')} works on: {record.get('goal')}", style="cyan")
            )
        elif kind == "compressed":
            event = ContextCompressed.from_record(record)
            await log.note(Text(event.describe()), classes="divider")
        elif kind == "context_refused":
            await log.note(Text(str(record.get("note") or ""), style="yellow"))


def _shown(record: dict[str, Any]) -> bool:
    kind = record.get("kind")
    if kind == "message":
        message = record.get("message") or {}
        return message.get("role") == "user" or (
            message.get("role") == "assistant" and bool(message.get("content"))
        )
    return kind in (
        "tool_started", "tool_finished", "error", "child_started", "compressed", "context_refused"
    )  # fmt: skip
