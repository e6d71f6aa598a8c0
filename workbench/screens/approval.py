"""The approval modal: a destructive action waits for an explicit yes; everything else is no.

Deny has the focus, and Enter, Esc, closing and the countdown all deny; allowing needs an
explicit key: `o` once, `s` session, `a` always, and, when the terminal's sandbox is on, `x`
once outside it (`d` denies; so does any other key). The full command is shown,
wrapped, never truncated, with the dangerous parts highlighted and the detector's reasons,
the working directory and the files it would write.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.core.approval import ApprovalRequest, Choice
from workbench.core.printable import escape, escape_with_spans

CHOICE_KEYS = frozenset({"o", "s", "a", "d", "escape", "enter"})
MOVE_KEYS = frozenset({"tab", "shift+tab", "left", "right", "up", "down"})


def highlighted(request: ApprovalRequest) -> Text:
    """The whole command, control characters made visible, the dangerous parts marked."""
    spans = request.verdict.spans if request.verdict is not None else []
    shown, moved = escape_with_spans(request.command, spans)
    text = Text(shown, style="bold")
    for start, end in moved:
        text.stylize("reverse red", start, end)
    return text


class ApprovalScreen(ModalScreen[Choice]):
    """Dismisses with the user's `Choice`; anything but o/s/a is DENY."""

    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "choose('once')", "Allow once", id="approval.once"),
        Binding("s", "choose('session')", "Allow this session", id="approval.session"),
        Binding("a", "choose('always')", "Always allow", id="approval.always"),
        Binding("d", "choose('deny')", "Deny", id="approval.deny"),
        Binding("x", "choose('outside')", "Once, outside the sandbox", id="approval.outside"),
        Binding("escape", "choose('deny')", "Deny", id="approval.escape", show=False),
    ]

    def __init__(self, request: ApprovalRequest, pending: int = 0) -> None:
        super().__init__()
        self.request = request
        self.pending = pending

    def compose(self) -> ComposeResult:
        request = self.request
        who = f" ({escape(request.label)})" if request.label else ""
        with Vertical(id="approval-box"):
            yield Static(
                Text(f"⚠ {escape(request.tool)}{who} needs your approval", style="bold"),
                id="approval-title",
            )
            with VerticalScroll(id="approval-command"):
                yield Static(highlighted(request))
            facts = Text()
            facts.append("why    ", "dim")
            facts.append(escape(request.reason) + "\n")
            facts.append("where  ", "dim")
            facts.append(escape(request.cwd or "?") + "\n")
            if request.where:
                facts.append("runs   ", "dim")
                facts.append(escape(request.where) + "\n", "bold" if request.can_leave else "")
            if request.writes:
                facts.append("writes ", "dim")
                facts.append(escape(", ".join(request.writes)) + "\n")
            yield Static(facts, id="approval-facts")
            yield Static("", id="approval-countdown")
            with Horizontal(id="approval-buttons"):
                yield Button("Deny (d)", id="deny", variant="error")
                yield Button("Once (o)", id="once")
                yield Button("Session (s)", id="session")
                yield Button("Always (a)", id="always", variant="warning")
                if request.can_leave:
                    yield Button("Once, outside the sandbox (x)", id="outside", variant="warning")

    def on_mount(self) -> None:
        self._tick()
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        left = self.request.deadline - time.monotonic()
        if left <= 0:
            self.dismiss(Choice.DENY)
            return
        more = f" · {self.pending} more waiting" if self.pending else ""
        self.query_one("#approval-countdown", Static).update(
            Text(f"Denied automatically in {left:.0f}s{more}. Enter denies.", style="dim")
        )

    def on_key(self, event: events.Key) -> None:
        # fail closed: a key that is not a choice or a way between the buttons denies
        allowed = CHOICE_KEYS | MOVE_KEYS | ({"x"} if self.request.can_leave else set())
        if event.key not in allowed:
            event.stop()
            self.dismiss(Choice.DENY)

    def action_choose(self, choice: str) -> None:
        if choice == Choice.OUTSIDE and not self.request.can_leave:
            choice = Choice.DENY  # no sandbox to leave: the key means nothing, so it denies
        self.dismiss(Choice(choice))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(Choice(event.button.id or "deny"))
