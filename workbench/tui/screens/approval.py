"""The approval modal: a destructive action waits for an explicit yes; everything else is no.

Deny has the focus, and Enter, Esc, closing and the countdown all deny; allowing needs an
explicit key: `o` once, `s` session, `a` always, and, when the terminal's sandbox is on, `x`
once outside it (`d` denies; so does any other key). A command that failed because of the
sandbox is asked about again with `x` as the only yes, with the scripts it runs (and what
changed in them this turn or this session). The full command is shown, wrapped, never
truncated, with the dangerous parts highlighted and the detector's reasons, the working
directory and the files it would write.

Before anything is saved, the modal shows the rule that `s`/`a` would save (and `n`, which
denies and saves a deny rule), with the calls of this session it would also have matched:
`p` steps through the rules on offer (this exact command, then the prefixes it starts
with), `w` between where it is saved (config.yaml, or a trusted project's rules). The rule
shown is the rule saved.
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

from workbench.core.execution.approval import ApprovalRequest, Choice
from workbench.core.policy import Rule, Scope
from workbench.core.policy.offer import Offer, in_scope
from workbench.core.printable import escape, escape_with_spans
from workbench.tui.widgets.diff_view import diff_text

CHOICE_KEYS = frozenset({"o", "s", "a", "d", "n", "escape", "enter"})
RULE_KEYS = frozenset({"p", "w"})  # which rule, and where: not answers
SCOPE_NAMES = {Scope.EVERYWHERE: "config.yaml", Scope.PROJECT: "this project's rules"}
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

    CSS_PATH = "approval.tcss"  # its layout, beside it
    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "choose('once')", "Allow once", id="approval.once"),
        Binding("s", "choose('session')", "Allow this session", id="approval.session"),
        Binding("a", "choose('always')", "Always allow", id="approval.always"),
        Binding("d", "choose('deny')", "Deny", id="approval.deny"),
        Binding("n", "choose('never')", "Never (deny, save a deny rule)", id="approval.never"),
        Binding("p", "next_rule", "Another rule", id="approval.rule"),
        Binding("w", "next_scope", "Where to save", id="approval.scope"),
        Binding("x", "choose('outside')", "Once, outside the sandbox", id="approval.outside"),
        Binding("escape", "choose('deny')", "Deny", id="approval.escape", show=False),
    ]

    def __init__(self, request: ApprovalRequest, pending: int = 0) -> None:
        super().__init__()
        self.request = request
        self.pending = pending
        self.offer_index = 0
        self.scope_index = 0

    def compose(self) -> ComposeResult:
        request = self.request
        who = f" ({escape(request.label)})" if request.label else ""
        with Vertical(id="approval-box"):
            asks = "failed in the sandbox" if request.only_leave else "needs your approval"
            yield Static(
                Text(f"⚠ {escape(request.tool)}{who} {asks}", style="bold"), id="approval-title"
            )
            with VerticalScroll(id="approval-command"):
                yield Static(highlighted(request))
            if request.diff is not None:  # what the write would change, from the file now
                with VerticalScroll(id="approval-diff"):
                    yield Static(diff_text(request.diff))
            diffs = [s.diff for s in request.scripts if s.diff is not None]
            if diffs:  # what changed in the scripts a command let out would run
                with VerticalScroll(id="approval-scripts"):
                    yield Static(Text("\n").join(diff_text(d) for d in diffs))
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
            for script in request.scripts:
                facts.append("script ", "dim")
                facts.append(escape(script.describe()) + "\n", "bold" if script.why else "")
            yield Static(facts, id="approval-facts")
            if request.allow_offers or request.deny_offers:
                yield Static(self._rule_text(), id="approval-rule")
            yield Static("", id="approval-countdown")
            with Horizontal(id="approval-buttons"):
                yield Button("Deny (d)", id="deny", variant="error")
                if not request.only_leave:  # a failed sandboxed command: only x lets it out
                    yield Button("Once (o)", id="once")
                    yield Button("Session (s)", id="session")
                    yield Button("Always (a)", id="always", variant="warning")
                if request.deny_offers:
                    yield Button("Never (n)", id="never")
                if request.can_leave:
                    yield Button("Once, outside the sandbox (x)", id="outside", variant="warning")

    def on_mount(self) -> None:
        self._tick()
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        left = self.request.deadline - time.monotonic()
        if left <= 0:
            if self.is_active:  # covered, it closes when the ask settles (AskQueue)
                self.dismiss(Choice.DENY)
            return
        more = f" · {self.pending} more waiting" if self.pending else ""
        self.query_one("#approval-countdown", Static).update(
            Text(f"Denied automatically in {left:.0f}s{more}. Enter denies.", style="dim")
        )

    def on_key(self, event: events.Key) -> None:
        # fail closed: a key that is not a choice or a way between the buttons denies
        allowed = CHOICE_KEYS | MOVE_KEYS | RULE_KEYS
        allowed |= {"x"} if self.request.can_leave else set()
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

    # -- the rule "session", "always" and "never" save ----------------------------------

    def rule_for(self, choice: Choice | None) -> Rule | None:
        """The rule shown for this answer, in the scope shown: what the broker saves."""
        offers = self._offers(choice)
        if not offers:
            return None
        rule = offers[min(self.offer_index, len(offers) - 1)].rule
        return in_scope(rule, self._scope())

    def _offers(self, choice: Choice | None) -> list[Offer]:
        if choice is Choice.NEVER:
            return self.request.deny_offers
        if choice in (Choice.SESSION, Choice.ALWAYS):
            return self.request.allow_offers
        return []

    def _scope(self) -> Scope:
        scopes = self.request.scopes or (Scope.EVERYWHERE,)
        return scopes[self.scope_index % len(scopes)]

    def action_next_rule(self) -> None:
        count = max(len(self.request.allow_offers), len(self.request.deny_offers), 1)
        self.offer_index = (self.offer_index + 1) % count
        self._show_rule()

    def action_next_scope(self) -> None:
        self.scope_index += 1
        self._show_rule()

    def _show_rule(self) -> None:
        for widget in self.query("#approval-rule").results(Static):
            widget.update(self._rule_text())

    def _rule_text(self) -> Text:
        text = Text()
        where = SCOPE_NAMES.get(self._scope(), self._scope().value)
        for key, choice in (("a", Choice.ALWAYS), ("n", Choice.NEVER)):
            offers = self._offers(choice)
            if not offers:
                continue
            offer = offers[min(self.offer_index, len(offers) - 1)]
            text.append(f"{key} saves ", "dim")
            text.append(escape(offer.rule.describe()), "bold")
            text.append(f" in {where}" + (" (s: this session only)" if key == "a" else "") + "\n")
            if offer.matches:
                shown = ", ".join(escape(m) for m in offer.matches[:5])
                more = f" and {len(offer.matches) - 5} more" if len(offer.matches) > 5 else ""
                text.append("  also matches earlier: ", "dim")
                text.append(shown + more + "\n")
            else:
                text.append("  matches nothing earlier in this session\n", "dim")
        count = max(len(self.request.allow_offers), len(self.request.deny_offers))
        hints = [f"p another rule ({self.offer_index + 1} of {count})"] if count > 1 else []
        if len(self.request.scopes) > 1:
            hints.append("w where to save")
        if hints:
            text.append(" · ".join(hints), "dim")
        return text
