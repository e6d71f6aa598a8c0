"""Every question the core asks a person, one modal at a time, in the order asked.

The core's `Asked` and `Settled` events (workbench.core.asking) arrive on the app's one
stream of core events; `AskQueue` shows the modal of each ask (an approval, an MCP server's
elicitation or sampling request, the agent's `clarify` question, whether to trust a
project's changed plugins and rules) after the one before it is
answered, and answers through the asker. An ask settled before its turn (its deadline, its
call cancelled) is dropped; one settled while shown closes its modal, wherever it is in the
screen stack (the command palette, or a screen opened from it, may cover it), and the next
ask is shown.

`ClarifyScreen` is `clarify`'s modal: the agent's choices to pick, or an answer to type.
Esc and the countdown give no answer (the agent goes on with its best judgement).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Static

from workbench.core.asking import Ask, Asked, Asker, AskKind, Question, Settled
from workbench.core.printable import escape
from workbench.tui.screens.mcp_asks import Countdown


class AskQueue:
    """The app's one queue of asks: one modal at a time; the answer goes back to the asker."""

    def __init__(self, app: App[Any], asker: Asker) -> None:
        self.app, self.asker = app, asker
        self.queue: deque[Ask] = deque()
        self.showing: tuple[Ask, ModalScreen[Any]] | None = None

    def event(self, event: Asked | Settled) -> None:
        """On the app's loop: an ask to queue, or one that ended."""
        match event:
            case Asked(ask=ask):
                self.queue.append(ask)
                self._next()
            case Settled(ask=ask):
                self._ended(ask)

    def _ended(self, ask: Ask) -> None:
        self.queue = deque(a for a in self.queue if a.id != ask.id)
        if self.showing is None or self.showing[0].id != ask.id:
            return
        screen = self.showing[1]  # settled elsewhere (its deadline, a cancel): it closes
        if self.app.screen is screen:
            screen.dismiss(None)  # its callback moves the queue on
        elif screen in self.app.screen_stack:  # under another screen: taken out
            taken_out(self.app, screen)
            self.showing = None
            self._next()

    def _next(self) -> None:
        if self.showing is not None:
            return
        pending = {a.id for a in self.asker.pending()}
        while self.queue and self.queue[0].id not in pending:
            self.queue.popleft()  # settled while it waited
        if not self.queue:
            return
        ask = self.queue.popleft()
        screen = modal(ask, len(self.queue))
        self.showing = (ask, screen)
        self.app.bell()
        self.app.push_screen(screen, lambda answer: self._answered(ask, screen, answer))

    def _answered(self, ask: Ask, screen: ModalScreen[Any], answer: Any) -> None:
        self.asker.answer(ask.id, answer_of(ask, screen, answer))  # ignored if settled
        self.showing = None
        self._next()


def taken_out(app: App[Any], screen: Screen[Any]) -> None:
    """Close a screen that another covers (the command palette opened over a modal), leaving
    that one open. Textual closes only the screen on top, so this does what its pop does,
    for a screen under the top one: out of the stack, its result callback dropped (no
    answer: the ask is settled already), then removed."""
    app._screen_stack.remove(screen)
    screen._pop_result_callback()
    app.call_later(app._replace_screen, screen)


def modal(ask: Ask, waiting: int) -> ModalScreen[Any]:
    """The modal that asks `ask`, saying how many more wait behind it."""
    from workbench.tui.screens.approval import ApprovalScreen
    from workbench.tui.screens.mcp_asks import ElicitationScreen, SamplingScreen
    from workbench.tui.screens.trust import TrustScreen

    match ask.kind:
        case AskKind.APPROVAL:
            return ApprovalScreen(ask.subject, waiting)
        case AskKind.ELICITATION:
            return ElicitationScreen(ask.subject, waiting)
        case AskKind.SAMPLING:
            return SamplingScreen(ask.subject, waiting)
        case AskKind.CLARIFY:
            return ClarifyScreen(ask.subject, waiting)
        case AskKind.TRUST:
            return TrustScreen(ask.subject, waiting)


def answer_of(ask: Ask, screen: ModalScreen[Any], answer: Any) -> Any:
    """What the asker is answered: an approval's choice with the rule the modal showed."""
    if ask.kind is not AskKind.APPROVAL:
        return answer
    from workbench.core.execution.approval import Answer, Choice
    from workbench.tui.screens.approval import ApprovalScreen

    rule = screen.rule_for(answer) if isinstance(screen, ApprovalScreen) else None
    return Answer(answer or Choice.DENY, rule)


class ClarifyScreen(Countdown, ModalScreen[str | None]):
    """The agent's question: Enter on a choice or on a typed answer sends it; Esc, none."""

    CSS_PATH = "mcp_asks.tcss"  # the asks' layout
    DEFAULT_CSS = "ClarifyScreen { align: center middle; }"
    BINDINGS = [Binding("escape", "dismiss(None)", "No answer", id="clarify.none")]
    SAYS = "No answer"

    def __init__(self, question: Question, pending: int = 0) -> None:
        super().__init__()
        self.request, self.pending = question, pending

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box", classes="-clarify"):
            yield Static(Text("The agent asks:", style="bold"), classes="ask-title")
            yield Static(Text(escape(self.request.text)), id="clarify-question")
            if self.request.choices:
                yield OptionList(*(escape(c) for c in self.request.choices), id="clarify-choices")
            yield Input(placeholder="Or type an answer; Enter sends it", id="clarify-answer")
            yield Static("", classes="ask-countdown")

    def on_mount(self) -> None:
        choices = self.query("#clarify-choices")
        (choices.first() if choices else self.query_one(Input)).focus()
        self._start_countdown()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.request.choices[event.option_index])

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value)
