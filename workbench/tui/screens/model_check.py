"""The model check (m on the main screen): does the model endpoint return tool calls the
agent can use? The probe of `hermes-tui doctor model` (core.probe, run by the controller on
the agent's loop): a minimal request and the agent's own, each streamed and not, each
reply's class shown as it comes, then what to change. Nothing the model calls is run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from workbench.core.printable import escape

if TYPE_CHECKING:
    from workbench.core.probe import Finding, Report
    from workbench.tui.controller import Controller

GOOD = {"native": "green", "text": "yellow"}  # text: hermes-tui runs such a call too


class ModelCheckScreen(Screen[None]):
    DEFAULT_CSS = """
    ModelCheckScreen #model-check-box { height: 1fr; padding: 0 1; }
    ModelCheckScreen #model-check-title, ModelCheckScreen #model-check-status { height: auto; }
    ModelCheckScreen #model-check-findings { height: auto; max-height: 8; }
    ModelCheckScreen #model-check-advice { height: 1fr; border: round $primary; }
    """
    AUTO_FOCUS = "#model-check-findings"
    BINDINGS = [
        Binding("escape", "close", "Back", id="model_check.close"),
        Binding("g", "probe", "Probe again", id="model_check.again"),
    ]

    def __init__(self, controller: Controller) -> None:
        super().__init__()
        self.controller = controller
        self.report: Report | None = None
        self.findings: list[Finding] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="model-check-box"):
            yield Static(
                Text.assemble(
                    ("Model check: does the endpoint return tool calls?", "bold"),
                    ("   g probe again · esc back", "dim"),
                ),
                id="model-check-title",
            )
            yield Static(id="model-check-status")
            yield DataTable(id="model-check-findings", cursor_type="row")
            yield Static(id="model-check-advice")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#model-check-findings", DataTable)
        table.add_columns("request", "stream", "class", "detail")
        self.action_probe()

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_probe(self) -> None:
        self.report, self.findings = None, []
        self.query_one("#model-check-findings", DataTable).clear()
        self.query_one("#model-check-advice", Static).update("")
        self._status(
            "Sending a minimal request and the agent's own, each streamed and not… "
            "(the bundled model takes minutes on a small CPU)"
        )
        self._probe()

    @work(exclusive=True, group="model-check")
    async def _probe(self) -> None:
        def heard(finding: Finding) -> None:  # on the agent's loop's thread
            self.app.call_from_thread(self._add, finding)

        try:
            report = await self.controller.probe_model(heard)
        except Exception as exc:  # said in the screen, never a crash of the workbench
            self._status(f"cannot probe the model: {exc}")
            return
        self._show(report)

    def _status(self, text: str) -> None:
        if self.is_attached:
            self.query_one("#model-check-status", Static).update(Text(escape(text)))

    def _add(self, finding: Finding) -> None:
        if not self.is_attached:
            return
        self.findings.append(finding)
        style = GOOD.get(finding.kind, "red")
        self.query_one("#model-check-findings", DataTable).add_row(
            finding.request,
            "streamed" if finding.stream else "not streamed",
            Text(finding.kind, style=f"bold {style}"),
            Text(escape(finding.detail)),
        )

    def _show(self, report: Report) -> None:
        if not self.is_attached:
            return
        for finding in report.findings[len(self.findings) :]:  # any not heard (a failed start)
            self._add(finding)
        self.report = report
        verdict = "every request got a proper tool call" if report.ok else "calls are lost"
        self._status(f"{report.endpoint}: {verdict}")
        advice = Text()
        for line in report.advice:
            advice.append(f"• {escape(line)}\n")
        self.query_one("#model-check-advice", Static).update(advice)
