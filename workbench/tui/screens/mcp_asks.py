"""Modals for what an MCP server asks of the user, and for a template's or prompt's arguments.

- Elicitation: a form built from the server's JSON schema (the run form's fields). ctrl+r
  accepts (checked against the schema first), ctrl+d declines, Esc cancels; the countdown
  declines.
- Sampling: the request as the model would get it (messages, system prompt, token limit).
  Deny has the focus; Enter, Esc, any key but `a` and the countdown deny.
- Arguments: a template's variables or a prompt's arguments, as the run form asks for them.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.core.mcp.asks import (
    ElicitAnswer,
    Elicitation,
    SamplingRequest,
    check_content,
)
from workbench.core.printable import escape
from workbench.core.schema import Node
from workbench.tui.widgets.run_form import RunToolForm


class Countdown:
    """A modal that gives up on its own at the ask's deadline (time.monotonic())."""

    request: Any
    pending: int
    GIVE_UP: Any = None
    SAYS = ""

    def _start_countdown(self) -> None:
        self._ends = self.request.deadline
        self._tick()
        self.set_interval(1.0, self._tick)  # type: ignore[attr-defined]

    def _tick(self) -> None:
        left = self._ends - time.monotonic()
        if left <= 0:  # covered by another screen, it closes when the ask settles (AskQueue)
            if self.is_active:  # type: ignore[attr-defined]
                self.dismiss(self.GIVE_UP)  # type: ignore[attr-defined]
            return
        more = f" · {self.pending} more waiting" if self.pending else ""
        self.query_one(".ask-countdown", Static).update(  # type: ignore[attr-defined]
            Text(f"{self.SAYS} automatically in {left:.0f}s{more}.", style="dim")
        )


class ElicitationScreen(Countdown, ModalScreen[ElicitAnswer | None]):
    """Dismisses with an ElicitAnswer (accept with content, decline, cancel); None declines."""

    CSS_PATH = "mcp_asks.tcss"  # its layout, beside it

    BINDINGS = [
        Binding("ctrl+r", "accept", "Accept", id="elicit.accept", priority=True),
        Binding("ctrl+d", "answer('decline')", "Decline", id="elicit.decline", priority=True),
        Binding("escape", "answer('cancel')", "Cancel", id="elicit.cancel"),
    ]
    SAYS = "Declined"

    def __init__(self, request: Elicitation, pending: int = 0) -> None:
        super().__init__()
        self.request, self.pending = request, pending

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box", classes="-elicitation"):
            yield Static(
                Text(f"MCP server {escape(self.request.server)} asks:", style="bold"),
                classes="ask-title",
            )
            yield Static(Text(escape(self.request.message)), id="elicit-message")
            yield RunToolForm(id="elicit-form")
            yield Static("", classes="ask-countdown")
            with Horizontal(classes="ask-buttons"):
                yield Button("Accept (ctrl+r)", id="accept", variant="primary")
                yield Button("Decline (ctrl+d)", id="decline", variant="error")
                yield Button("Cancel (Esc)", id="cancel")

    async def on_mount(self) -> None:
        form = self.query_one(RunToolForm)
        await form.show("answer", {"parameters": self.request.schema})
        form.query_one("#form-title", Static).display = False
        form.query_one("#form-run", Button).display = False
        fields = form.query("Input, TextArea, Select, Checkbox")
        if fields:
            fields.first().focus()
        self._start_countdown()

    def on_run_tool_form_run_requested(self, message: RunToolForm.RunRequested) -> None:
        message.stop()
        self._accept(message.arguments)

    def action_accept(self) -> None:
        form = self.query_one(RunToolForm)
        try:
            content = form.arguments()
        except ValueError as exc:
            form.set_status(Text(str(exc), style="red"))
            return
        self._accept(content)

    def _accept(self, content: dict[str, Any]) -> None:
        required = Node.of(self.request.schema).required
        missing = [n for n in required if content.get(n) in (None, "")]
        problem = f"needed: {', '.join(missing)}" if missing else ""
        problem = problem or check_content(self.request.schema, content)
        if problem:  # said here, where it can be fixed; never sent
            self.query_one(RunToolForm).set_status(Text(problem, style="red"))
            return
        self.dismiss(ElicitAnswer("accept", content))

    def action_answer(self, action: str) -> None:
        self.dismiss(ElicitAnswer(action))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "accept":
            self.action_accept()
        elif event.button.id in ("decline", "cancel"):
            self.action_answer(event.button.id)


class SamplingScreen(Countdown, ModalScreen[bool]):
    """Dismisses True only on `a` (or its button); everything else refuses."""

    CSS_PATH = "mcp_asks.tcss"  # its layout, beside it

    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("a", "choose(True)", "Approve", id="sampling.approve"),
        Binding("d", "choose(False)", "Deny", id="sampling.deny"),
        Binding("escape", "choose(False)", "Deny", id="sampling.escape", show=False),
    ]
    GIVE_UP = False
    SAYS = "Refused"
    ALLOWED = frozenset({"a", "d", "escape", "enter", "tab", "shift+tab", "left", "right"})
    SCROLL = frozenset({"up", "down", "pageup", "pagedown", "home", "end"})

    def __init__(self, request: SamplingRequest, pending: int = 0) -> None:
        super().__init__()
        self.request, self.pending = request, pending

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="ask-box", classes="-sampling"):
            yield Static(
                Text(
                    f"MCP server {escape(request.server)} asks the model for a completion",
                    style="bold",
                ),
                classes="ask-title",
            )
            with VerticalScroll(id="sampling-request"):
                yield Static(_request_text(request))
            yield Static("", classes="ask-countdown")
            with Horizontal(classes="ask-buttons"):
                yield Button("Deny (d)", id="deny", variant="error")
                yield Button("Approve (a)", id="approve", variant="warning")

    def on_mount(self) -> None:
        self._start_countdown()

    def on_key(self, event: events.Key) -> None:
        # fail closed: a key that is not a choice, a move or a scroll refuses
        if event.key not in self.ALLOWED | self.SCROLL:
            event.stop()
            self.dismiss(False)
        elif event.key in self.SCROLL:
            event.stop()
            self.query_one("#sampling-request", VerticalScroll).scroll_relative(
                y={"up": -1, "down": 1, "pageup": -10, "pagedown": 10}.get(event.key, 0)
            )

    def action_choose(self, approve: bool) -> None:
        self.dismiss(approve is True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "approve")


def _request_text(request: SamplingRequest) -> Text:
    text = Text()
    text.append("system prompt  ", "dim")
    text.append((escape(request.system_prompt) or "(none)") + "\n")
    text.append("max tokens     ", "dim")
    text.append(f"{request.max_tokens}")
    if request.temperature is not None:
        text.append("   temperature ", "dim")
        text.append(f"{request.temperature:g}")
    text.append("\n")
    for message in request.messages:
        text.append(f"\n[{escape(message['role'])}]\n", "bold cyan")
        text.append(escape(message["text"]) + "\n")
    return text


class ArgumentsScreen(ModalScreen[dict[str, Any] | None]):
    """A template's variables or a prompt's arguments; dismisses with the values, or None."""

    CSS_PATH = "mcp_asks.tcss"  # its layout, beside it

    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="arguments.close")]

    def __init__(self, title: str, schema: dict[str, Any]) -> None:
        super().__init__()
        self.title_text, self.schema = title, schema

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box", classes="-arguments"):
            yield Static(Text(self.title_text, style="bold"), classes="ask-title")
            yield RunToolForm(id="arguments-form")
            yield Static(Text("ctrl+r: go · Esc: close", style="dim"), classes="ask-countdown")

    async def on_mount(self) -> None:
        form = self.query_one(RunToolForm)
        await form.show(self.title_text, {"parameters": self.schema})
        form.query_one("#form-title", Static).display = False
        fields = form.query("Input, TextArea, Select, Checkbox")
        (fields.first() if fields else form.query_one("#form-run", Button)).focus()

    def on_run_tool_form_run_requested(self, message: RunToolForm.RunRequested) -> None:
        message.stop()
        required = Node.of(self.schema).required
        missing = [n for n in required if message.arguments.get(n) in (None, "")]
        if missing:
            self.query_one(RunToolForm).set_status(
                Text(f"needed: {', '.join(missing)}", style="red")
            )
            return
        self.dismiss(message.arguments)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
