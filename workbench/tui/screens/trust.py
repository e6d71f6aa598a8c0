"""Whether to trust what changed in the project's plugins and rules (its `.hermes`) since
the person last trusted it: each file new, changed or removed, with its diff against the
trusted copy. `y` trusts what is shown and loads it; anything else (and the countdown)
keeps it out. "Keep out" has the focus."""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.core.printable import escape
from workbench.core.trust import TrustRequest
from workbench.tui.screens.mcp_asks import Countdown
from workbench.tui.widgets.diff_view import diff_text

MOVE_KEYS = frozenset({"tab", "shift+tab", "left", "right", "up", "down", "pageup", "pagedown"})


class TrustScreen(Countdown, ModalScreen[bool]):
    """Dismisses with True (trust and load) or False (keep out)."""

    CSS_PATH = "trust.tcss"
    AUTO_FOCUS = "#keep-out"
    BINDINGS = [
        Binding("y", "choose(True)", "Trust and load", id="trust.yes"),
        Binding("n", "choose(False)", "Keep out", id="trust.no"),
        Binding("escape", "choose(False)", "Keep out", id="trust.escape", show=False),
    ]
    GIVE_UP = False
    SAYS = "Kept out"

    def __init__(self, request: TrustRequest, pending: int = 0) -> None:
        super().__init__()
        self.request, self.pending = request, pending

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="trust-box"):
            yield Static(
                Text(f"⚠ {escape(request.project)}/.hermes: {request.since}", style="bold"),
                id="trust-title",
            )
            yield Static(
                Text(
                    f"{escape(request.summary)}. Project plugins run inside hermes-tui, "
                    "outside the sandbox, and its rules decide what runs unasked: none of "
                    "this loads until you agree."
                ),
                id="trust-why",
            )
            with VerticalScroll(id="trust-diffs"):
                for change in request.changes:
                    yield Static(Text(f"{change.kind}: ", style="bold") + diff_text(change.diff))
            yield Static("", classes="ask-countdown")
            with Horizontal(classes="ask-buttons"):
                yield Button("Keep out (n)", id="keep-out", variant="error")
                yield Button("Trust and load (y)", id="trust", variant="warning")

    def on_mount(self) -> None:
        self._start_countdown()

    def on_key(self, event: events.Key) -> None:
        if event.key not in {"y", "n", "escape", "enter", *MOVE_KEYS}:  # fails closed
            event.stop()
            self.dismiss(False)

    def action_choose(self, trusted: bool) -> None:
        self.dismiss(trusted)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")
