"""Tool use (u on the main screen): each tool's cost per request beside its calls in the last
sessions, and what to defer or switch off.

The sessions are read and the suggestions measured on a worker thread (Hermes's store may be
large, each suggestion's preview counts the tools again); the screen shows "reading" until
then. Highlighting a suggestion shows its preview: the config key as it would be saved and
the request's tokens then. `a` asks to confirm, with that preview, before anything is saved.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Static

from workbench.core.printable import escape

if TYPE_CHECKING:
    from workbench.core.usage.report import Report, Suggestion
    from workbench.tui.controller import Controller

SESSIONS = 20  # the sessions read, as `hermes-tui tools usage` reads by default


class UsageScreen(Screen[None]):
    DEFAULT_CSS = """
    UsageScreen #usage-box { height: 1fr; padding: 0 1; }
    UsageScreen #usage-title, UsageScreen #usage-status { height: auto; }
    UsageScreen #usage-tools { height: 2fr; }
    UsageScreen #usage-suggestions { height: 1fr; }
    UsageScreen #usage-preview { height: auto; min-height: 3; border: round $primary; }
    """
    AUTO_FOCUS = "#usage-suggestions"
    BINDINGS = [
        Binding("escape", "close", "Back", id="usage.close"),
        Binding("a", "apply", "Apply the suggestion", id="usage.apply"),
        Binding("g", "reload", "Read again", id="usage.reload"),
        Binding("tab", "app.focus_next", "Next pane", id="usage.next", show=False),
    ]

    def __init__(self, controller: Controller, sessions: int = SESSIONS) -> None:
        super().__init__()
        self.controller = controller
        self.sessions = sessions
        self.report: Report | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="usage-box"):
            yield Static(
                Text.assemble(
                    ("Tool use and cost", "bold"),
                    ("   ↑↓ select · tab next pane · a apply · g read again · esc back", "dim"),
                ),
                id="usage-title",
            )
            yield Static(Text(f"Reading the last {self.sessions} sessions…"), id="usage-status")
            yield DataTable(id="usage-tools", cursor_type="row", zebra_stripes=True)
            yield DataTable(id="usage-suggestions", cursor_type="row")
            yield Static(id="usage-preview")
        yield Footer()

    def on_mount(self) -> None:
        tools = self.query_one("#usage-tools", DataTable)
        tools.add_columns("tool", "state", "tokens/request", "calls", "sessions", "last used")
        suggestions = self.query_one("#usage-suggestions", DataTable)
        suggestions.add_columns("suggestion", "saves a request", "a session", "why")
        self.action_reload()

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_reload(self) -> None:
        self._scan()

    @work(thread=True, exclusive=True, group="usage")
    def _scan(self) -> None:
        try:
            report = self.controller.usage(self.sessions)
        except Exception as exc:  # said in the screen, never a crash of the workbench
            self.app.call_from_thread(self._status, f"cannot read the sessions: {exc}")
            return
        if report is None:
            self.app.call_from_thread(self._status, "the tools are still loading")
            return
        self.app.call_from_thread(self._show, report)

    def _status(self, text: str) -> None:
        if self.is_attached:
            self.query_one("#usage-status", Static).update(Text(text))

    def _show(self, report: Report) -> None:
        from workbench.core.agent.context import short

        if not self.is_attached:
            return
        self.report = report
        g = report.gathered
        lines = [
            f"{len(g.sessions)} session(s) read, {g.requests_per_session:.1f} requests a session; "
            f"{short(report.tokens)} tokens each request for the tools ({report.counted})"
        ]
        lines += [f"note: {n}" for n in report.notes]
        lines += [f"problem: {p}" for p in g.problems]
        self._status("\n".join(lines))
        tools = self.query_one("#usage-tools", DataTable)
        tools.clear()
        for row in report.tools:
            last = (
                time.strftime("%Y-%m-%d %H:%M", time.localtime(row.last_used))
                if row.last_used
                else "-"
            )
            tokens = short(row.tokens) if row.tokens else "-"
            tools.add_row(Text(escape(row.name)), row.state, tokens, row.calls, row.sessions, last)
        table = self.query_one("#usage-suggestions", DataTable)
        table.clear()
        for s in report.suggestions:
            verb = "switch off" if s.action == "off" else "defer"
            table.add_row(
                Text(f"{verb} {escape(s.tool)}"),
                short(s.per_request),
                short(s.per_session),
                Text(s.why),
            )
        self._preview(0)

    @on(DataTable.RowHighlighted, "#usage-suggestions")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._preview(event.cursor_row)

    def _preview(self, row: int) -> None:
        chosen = self._suggestion(row)
        preview = self.query_one("#usage-preview", Static)
        if chosen is None:
            empty = "no suggestion" if self.report is not None else ""
            preview.update(Text(empty, style="dim"))
            return
        preview.update(Text("\n".join(chosen.preview.lines())))

    def _suggestion(self, row: int | None = None) -> Suggestion | None:
        if self.report is None:
            return None
        if row is None:
            row = self.query_one("#usage-suggestions", DataTable).cursor_row
        suggestions = self.report.suggestions
        return suggestions[row] if 0 <= row < len(suggestions) else None

    def action_apply(self) -> None:
        chosen = self._suggestion()
        if chosen is None:
            self.notify("no suggestion to apply", severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply(chosen)

        self.app.push_screen(ConfirmChange(chosen), answered)

    @work(thread=True, group="usage-apply")
    def _apply(self, chosen: Suggestion) -> None:
        from workbench.tui.controller import ChangeRefused

        try:
            done = self.controller.apply_suggestion(chosen.tool, chosen.action)
        except ChangeRefused as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return
        if done is not None:
            self.app.call_from_thread(self._applied, done)

    def _applied(self, message: str) -> None:
        self.notify(message)
        main = getattr(self.app, "main", None)  # the tools tree shows the change too
        if main is not None:
            main.refresh_tools()
        self.action_reload()


class ConfirmChange(ModalScreen[bool]):
    """The change a suggestion would save, to confirm (y) or leave (n, Esc)."""

    DEFAULT_CSS = """
    ConfirmChange { align: center middle; }
    ConfirmChange #confirm-box {
        width: 80%; max-width: 100; height: auto; border: round $warning;
        background: $surface; padding: 1 2;
    }
    ConfirmChange #confirm-buttons { height: auto; margin-top: 1; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Save it", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "Leave it", id="confirm.no"),
    ]

    def __init__(self, suggestion: Suggestion) -> None:
        super().__init__()
        self.suggestion = suggestion

    def compose(self) -> ComposeResult:
        s = self.suggestion
        verb = "Switch off" if s.action == "off" else "Defer"
        with Vertical(id="confirm-box"):
            yield Static(Text(f"{verb} {escape(s.tool)}? ({s.why})", style="bold"))
            yield Static(Text("\n".join(s.preview.lines())), id="confirm-preview")
            with Horizontal(id="confirm-buttons"):
                yield Button("Save (y)", variant="warning", id="confirm-yes")
                yield Button("Leave (n)", id="confirm-no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")
