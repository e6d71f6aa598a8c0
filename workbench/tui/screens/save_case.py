"""Save a kept call as a test case: pick its checks and the file to append it to.

The checks: the call's status (on by default), a JSON path's value (typing a path fills in
the value this call's result has there), a substring, a maximum time. An empty field is a
check not chosen. The screen returns the file and the case; the main screen appends it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from workbench.core.history import CallEntry
from workbench.core.replay import jsonpath
from workbench.core.replay.cases import Case, Expect
from workbench.tui.widgets.timeline import target

CASES_DIR = Path("tests") / "tools"


def default_file(tool: str) -> str:
    """`tests/tools/<tool>.yaml` under the current project, the name made safe for a file."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", tool).strip("._") or "tool"
    return str(CASES_DIR / f"{safe}.yaml")


class SaveCaseScreen(ModalScreen[tuple[Path, Case] | None]):
    CSS_PATH = "save_case.tcss"  # its layout, beside it
    BINDINGS = [
        Binding("ctrl+s", "save", "Save the case", id="case.save"),
        Binding("escape", "cancel", "Cancel", id="case.cancel"),
    ]

    def __init__(self, call: CallEntry) -> None:
        super().__init__()
        self.call = call
        try:
            self.document: Any = json.loads(call.preview)
        except ValueError:
            self.document = jsonpath.MISSING  # not JSON, or only the head of a long result

    def compose(self) -> ComposeResult:
        call = self.call
        aim = target(call.arguments)
        with VerticalScroll(id="case-box", can_focus=False):  # Tab goes field to field
            yield Static(Text(f"Save {call.tool} {aim} as a test", style="bold"), id="case-title")
            yield Label("Name")
            yield Input(f"{call.tool} {aim}".strip(), id="case-name")
            yield Label("Append to (a YAML file, relative to the current folder)")
            yield Input(default_file(call.tool), id="case-file")
            yield Label("Checks (an empty field is no check)")
            yield Checkbox(f"status is {call.status}", True, id="case-status")
            with Horizontal(id="case-json"):
                yield Input(placeholder="JSON path, e.g. lines[0].text", id="case-json-path")
                yield Input(placeholder="its value (JSON, or text)", id="case-json-value")
            yield Input(placeholder="the result contains this text", id="case-contains")
            suggest = max(1.0, math.ceil(call.duration * 10))
            yield Input(
                placeholder=f"at most this many seconds, e.g. {suggest:g}",
                id="case-seconds",
                type="number",
            )
            yield Static("", id="case-error")
            with Horizontal(id="case-buttons"):
                yield Button("Save (ctrl+s)", id="case-save", variant="primary")
                yield Button("Cancel (esc)", id="case-cancel")

    @on(Input.Changed, "#case-json-path")
    def _path_typed(self, event: Input.Changed) -> None:
        """Fill in the value this call's result has at the path typed."""
        error = self.query_one("#case-error", Static)
        path = event.value.strip()
        error.update("")
        if not path:
            return
        if self.document is jsonpath.MISSING:
            error.update(
                "only the head of this result was kept: type the value"
                if self.call.truncated
                else "this call's result is not JSON: a JSON check would fail"
            )
            return
        try:
            found = jsonpath.lookup(self.document, path)
        except jsonpath.PathError as exc:
            error.update(str(exc))
            return
        if found is jsonpath.MISSING:
            error.update(f"this call's result has nothing at {path}")
            return
        self.query_one("#case-json-value", Input).value = json.dumps(found, ensure_ascii=False)

    @on(Button.Pressed, "#case-save")
    def action_save(self) -> None:
        try:
            chosen = self._chosen()
        except ValueError as exc:
            self.query_one("#case-error", Static).update(str(exc))
            return
        self.dismiss(chosen)

    @on(Button.Pressed, "#case-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def _chosen(self) -> tuple[Path, Case]:
        """The file and the case; ValueError says which field is wrong."""
        value = self._text
        file = value("#case-file")
        if not file:
            raise ValueError("name the file to append the case to")
        if self.call.arguments is None:
            raise ValueError("this call's arguments were not kept: it cannot be replayed")
        paths: dict[str, Any] = {}
        if path := value("#case-json-path"):
            try:
                jsonpath.parse(path)
            except jsonpath.PathError as exc:
                raise ValueError(str(exc)) from None
            raw = value("#case-json-value")
            try:
                paths[path] = json.loads(raw)
            except ValueError:
                paths[path] = raw  # plain text is a string
        seconds = None
        if raw_seconds := value("#case-seconds"):
            try:
                seconds = float(raw_seconds)
            except ValueError:
                seconds = -1.0
            if not math.isfinite(seconds) or seconds <= 0:
                raise ValueError("max seconds: a positive number")
        contains = value("#case-contains")
        expect = Expect(
            self.call.status if self.query_one("#case-status", Checkbox).value else None,
            paths,
            (contains,) if contains else (),
            seconds,
        )
        name = value("#case-name") or self.call.tool
        return Path(file), Case(name, self.call.tool, dict(self.call.arguments), expect)

    def _text(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()
