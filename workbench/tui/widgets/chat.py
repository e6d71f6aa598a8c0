"""The chat pane's pieces: messages, streamed replies, tool-call cards, the prompt.

Long sessions stay fast: at most MAX_MOUNTED widgets are mounted (the oldest are removed
from the screen; everything stays in the transcript) and the log uses `layout: stream`;
replies are widgets.reply.AssistantMessage.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static, TextArea

from workbench.core.edits.diffs import FileDiff
from workbench.tui.widgets.diff_view import diff_text

MAX_MOUNTED = 200
PREVIEW = 600  # characters of a result's head and of its tail in a card
CARD_DIFF_LINES = 12  # diff lines on a collapsed card (expanded, all that were kept)
GLYPH = {
    "running": ("◌", "yellow"),
    "ok": ("✔", "green"),
    "error": ("✖", "red"),
    "timeout": ("◷", "red"),
    "cancelled": ("⊘", "magenta"),
    "skipped": ("⊘", "magenta"),
    "denied": ("⊗", "red"),
    "blocked": ("⊗", "red"),
    "invalid": ("✖", "red"),
    "approval": ("⚠", "yellow"),
}


def summarise(arguments: Any, limit: int = 60) -> str:
    if not isinstance(arguments, dict):
        return ""
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def head_and_tail(text: str, size: int = PREVIEW) -> str:
    if len(text) <= 2 * size:
        return text
    return f"{text[:size]}\n… {len(text) - 2 * size:,} characters not shown …\n{text[-size:]}"


class ToolCard(Vertical, can_focus=True):
    """One tool call: a header line, and on demand its arguments and a result preview."""

    DEFAULT_CSS = """
    ToolCard {
        height: auto;
        margin: 0 1;
        padding: 0 1;
        border-left: wide $primary 40%;
    }

    ToolCard:focus {
        border-left: wide $primary;
        background: $boost;
    }

    ToolCard .card-body {
        display: none;
        color: $text-muted;
    }

    ToolCard.-expanded .card-body {
        display: block;
    }

    ToolCard .card-diff {
        display: none;
    }

    ToolCard.-diff .card-diff {
        display: block;
    }
    """

    BINDINGS = [
        Binding("space,enter", "toggle_card", "Expand / collapse", id="card.toggle"),
        Binding("v", "view", "Open the result in the viewer", id="card.view"),
    ]

    class ViewRequested(Message):
        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, call_id: str, name: str, arguments: Any, label: str = "") -> None:
        super().__init__(classes="tool-card")
        self.call_id, self.tool, self.arguments, self.label = call_id, name, arguments, label
        self.status, self.duration, self.content = "running", 0.0, ""
        self.spilled: str | None = None
        self.diff: FileDiff | None = None
        self.progress = ""  # what a running MCP call last reported

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="card-header")
        yield Static("", classes="card-diff")
        yield Static("", classes="card-body")

    def _header(self) -> Text:
        glyph, style = GLYPH.get(self.status, ("•", ""))
        text = Text.assemble(
            (f"{glyph} ", style), (self.tool, "bold"), f"({summarise(self.arguments)})"
        )
        if self.label:
            text.append(f"  [{self.label}]", "cyan")
        text.append(f"  {self.status}", style)
        if self.status == "running" and self.progress:
            text.append(f"  {self.progress}", "yellow")
        if self.status != "running":
            text.append(f"  {self.duration * 1000:.0f} ms", "dim")
        if self.spilled:
            text.append("  v: full result", "dim")
        return text

    def set_progress(self, progress: str) -> None:
        self.progress = progress
        if self.status == "running":
            self.query_one(".card-header", Static).update(self._header())

    def finish(
        self,
        status: str,
        duration: float,
        content: Any,
        spilled: str | None,
        diff: FileDiff | None = None,
    ) -> None:
        self.status, self.duration, self.spilled, self.diff = status, duration, spilled, diff
        self.content = (
            content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        )
        self.query_one(".card-header", Static).update(self._header())
        self._show_diff()
        if status not in ("ok",):  # failures open by themselves
            self.set_class(True, "-expanded")
            self._fill()

    def action_toggle_card(self) -> None:  # not `toggle`: every node has that (an attribute's)
        self.toggle_class("-expanded")
        self._show_diff()
        self._fill()

    def _show_diff(self) -> None:
        if self.diff is None:
            return
        expanded = self.has_class("-expanded")
        shown = diff_text(
            self.diff, None if expanded else CARD_DIFF_LINES, "" if expanded else " (Enter)"
        )
        self.query_one(".card-diff", Static).update(shown)
        self.add_class("-diff")

    def _fill(self) -> None:
        if not self.has_class("-expanded"):
            return
        args = (
            json.dumps(self.arguments, indent=2, ensure_ascii=False)
            if self.arguments is not None
            else ""
        )
        body = Text.assemble(
            ("arguments\n", "dim"), args, ("\n\nresult\n", "dim"), head_and_tail(self.content)
        )
        self.query_one(".card-body", Static).update(body)

    def action_view(self) -> None:
        self.post_message(self.ViewRequested(self.call_id))


class ChatLog(VerticalScroll):
    """The conversation. Keeps at most MAX_MOUNTED widgets; it scrolls with new output."""

    DEFAULT_CSS = """
    ChatLog {
        height: 1fr;
        layout: stream;
        padding: 0 1;
    }

    ChatLog .user {
        margin-top: 1;
        padding: 0 1;
        background: $boost;
        color: $text;
    }

    ChatLog .note {
        padding: 0 1;
    }

    ChatLog .divider {
        margin-top: 1;
        padding: 0 1;
        border-top: solid $foreground 30%;
        color: $text-muted;
        text-align: center;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cards: dict[str, ToolCard] = {}

    async def add(self, widget: Any) -> Any:
        await self.mount(widget)
        children = list(self.children)
        for old in children[: max(0, len(children) - MAX_MOUNTED)]:
            if isinstance(old, ToolCard):
                self.cards.pop(old.call_id, None)
            await old.remove()
        return widget

    def on_mount(self) -> None:
        self.anchor()  # follow new output until the user scrolls up

    async def note(self, text: Text | str, classes: str = "note") -> None:
        await self.add(Static(text, classes=classes))

    async def user(self, text: str) -> None:
        await self.add(Static(Text(text), classes="user"))

    async def card(self, call_id: str, name: str, arguments: Any, label: str = "") -> ToolCard:
        card = ToolCard(call_id, name, arguments, label)
        self.cards[call_id] = card
        return await self.add(card)


class PromptArea(TextArea):
    """The prompt: Enter sends, ctrl+j adds a line, up/down walk the history."""

    DEFAULT_CSS = """
    PromptArea {
        height: 5;
        border: round $primary 50%;
    }

    PromptArea:focus {
        border: round $primary;
    }
    """

    BINDINGS = [
        # not priority: a priority binding runs ahead of keys still queued for the widget,
        # so text typed just before Enter would be left out; _on_key keeps them in order
        Binding("enter", "submit", "Send", id="prompt.send"),
        Binding("ctrl+j", "newline", "New line", id="prompt.newline"),
        Binding("up", "history(-1)", "Previous prompt", id="prompt.previous", show=False),
        Binding("down", "history(1)", "Next prompt", id="prompt.next", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, **kwargs)
        self.sent: list[str] = []  # earlier prompts (TextArea.history is its undo log)
        self._position = 0

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.sent.append(text)
        self._position = len(self.sent)
        self.text = ""
        self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_history(self, step: int) -> None:
        single_line = "\n" not in self.text
        if not self.sent or not single_line:
            self.action_cursor_up() if step < 0 else self.action_cursor_down()
            return
        self._position = max(0, min(len(self.sent), self._position + step))
        self.text = self.sent[self._position] if self._position < len(self.sent) else ""
        self.move_cursor(self.document.end)
