"""The run-tool form: one field per schema property, and the result in place.

Strings are inputs (long text fields are text areas), numbers and integers are validated
inputs, booleans checkboxes, enums selects, arrays and objects JSON text areas. A property's
type is read as the schema says it (core.schema): `["integer", "null"]` is an integer field
that may be left empty, an `anyOf` of enums and null a select that may be blank. The call
goes through the same path the agent uses (arguments checked, approvals, timeouts, budgets).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea
from textual.widgets.select import InvalidSelectValueError

from workbench.core.schema import Node, json_equal, problem

LONG_TEXT = {"content", "old_string", "new_string", "text", "body", "patch", "code", "script"}


class RunToolForm(VerticalScroll):
    DEFAULT_CSS = """
    RunToolForm {
        padding: 0 1;
    }

    RunToolForm Label {
        margin-top: 1;
    }

    RunToolForm .field-hint {
        color: $text-muted;
    }

    RunToolForm .field-text {
        height: 6;
    }

    RunToolForm .form-run, RunToolForm .form-status {
        margin-top: 1;
    }
    """

    BINDINGS = [Binding("ctrl+r", "run", "Run the tool", id="form.run")]

    class RunRequested(Message):
        def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
            super().__init__()
            self.tool = tool
            self.arguments = arguments

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool: str | None = None
        self.schema: dict[str, Any] = {}
        self.top = Node.of({})  # the parameters, read
        self.choices: dict[str, tuple[Any, ...]] = {}  # a select's values by position

    def compose(self) -> ComposeResult:
        yield Static(Text("Select a tool in the tree to run it.", style="dim"), id="form-title")
        yield Vertical(id="form-fields")
        yield Button(
            "Run (ctrl+r)", id="form-run", classes="form-run", variant="primary", disabled=True
        )
        yield Static("", id="form-status", classes="form-status")
        yield Static("", id="form-result")

    async def show(self, tool: str | None, schema: dict[str, Any] | None) -> None:
        """Build the fields for `tool` (clears the form when it is None)."""
        if tool == self.tool:
            return
        self.tool, self.schema = tool, (schema or {}).get("parameters") or {}
        self.top, self.choices = Node.of(self.schema), {}
        fields = self.query_one("#form-fields", Vertical)
        await fields.remove_children()
        self.query_one("#form-status", Static).update("")
        self.query_one("#form-result", Static).update("")
        unusable = problem(self.schema) if tool is not None else ""
        self.query_one("#form-run", Button).disabled = tool is None or bool(unusable)
        if tool is None:
            self.query_one("#form-title", Static).update(
                Text("Select a tool in the tree to run it.", style="dim")
            )
            return
        self.query_one("#form-title", Static).update(Text(f"Run {tool}", style="bold"))
        if unusable:  # no form can be built from it, and no call made with it
            self.top = Node.of({})
            message = f"This tool's schema cannot be used: {unusable}"
            await fields.mount(Static(Text(message, style="red")))
            return
        required = set(self.top.required)
        widgets = []
        for name, spec in self.top.properties.items():
            choices = spec.choices
            if choices is not None:
                self.choices[name] = tuple(v for v in choices if v is not None)
            widgets.extend(_field(name, spec, name in required, self.choices.get(name)))
        if not widgets:
            widgets.append(Static(Text("This tool takes no arguments.", style="dim")))
        await fields.mount_all(widgets)

    def arguments(self) -> dict[str, Any]:
        """The form's values as arguments; raises ValueError naming a field that is wrong."""
        args: dict[str, Any] = {}
        for name, spec in self.top.properties.items():
            value = self._value(name, spec)
            if value is not None:
                args[name] = value
        return args

    def fill(self, arguments: dict[str, Any]) -> list[str]:
        """Put a call's arguments in the fields; returns the names the form has no field for."""
        properties = self.top.properties
        for name, spec in properties.items():
            widget = self.query_one(f"#arg-{name}")
            value = arguments.get(name)
            kind = spec.kind
            if isinstance(widget, Checkbox):
                widget.value = bool(value)
            elif isinstance(widget, Select):
                at = _position(self.choices.get(name, ()), value)
                if at is not None:
                    widget.value = at
                elif value is None and not widget.is_blank():
                    with contextlib.suppress(InvalidSelectValueError):
                        widget.clear()  # a required choice cannot be blank: it keeps its value
            else:
                text = "" if value is None else value
                if not isinstance(text, str) or kind in ("array", "object"):
                    text = json.dumps(text, ensure_ascii=False) if value is not None else ""
                if isinstance(widget, TextArea):
                    widget.text = text
                else:  # the one other kind of field
                    self.query_one(f"#arg-{name}", Input).value = text
        return [name for name in arguments if name not in properties]

    def _value(self, name: str, spec: Node) -> Any:
        widget = self.query_one(f"#arg-{name}")
        kind = spec.kind
        if isinstance(widget, Checkbox):
            return widget.value
        if isinstance(widget, Select):
            if widget.is_blank():
                return None
            return self.choices[name][widget.value]  # type: ignore[index]
        if isinstance(widget, TextArea):
            raw = widget.text
        else:  # the one other kind of field
            raw = self.query_one(f"#arg-{name}", Input).value
        if raw == "" and kind != "string":
            return None
        if raw == "" and name not in self.top.required:
            return None
        if kind in ("array", "object"):
            try:
                return json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{name}: not valid JSON ({exc.msg})") from None
        if kind == "integer":
            try:
                return int(raw)
            except ValueError:
                raise ValueError(f"{name}: not an integer") from None
        if kind == "number":
            try:
                return float(raw)
            except ValueError:
                raise ValueError(f"{name}: not a number") from None
        return raw

    def action_run(self) -> None:
        if self.tool is None:
            return
        try:
            args = self.arguments()
        except ValueError as exc:
            self.set_status(Text(str(exc), style="red"))
            return
        self.set_status(Text(f"Running {self.tool}…", style="yellow"))
        self.post_message(self.RunRequested(self.tool, args))

    @on(Button.Pressed, "#form-run")
    def _run_pressed(self) -> None:
        self.action_run()

    def set_status(self, text: Text | str) -> None:
        self.query_one("#form-status", Static).update(text)

    def show_result(self, status: str, content: Any, duration: float, spilled: str | None) -> None:
        style = "green" if status == "ok" else "red"
        note = f" · full result in {spilled}" if spilled else ""
        self.set_status(Text(f"{status} in {duration * 1000:.0f} ms{note}", style=style))
        self.query_one("#form-result", Static).update(render_result(content))


def render_result(content: Any) -> Any:
    from rich.syntax import Syntax  # pygments: loaded on first use, not before the first frame

    if isinstance(content, dict):
        return Syntax(
            json.dumps(content, indent=2, ensure_ascii=False)[:20_000], "json", word_wrap=True
        )
    try:
        parsed = json.loads(content)
    except (TypeError, ValueError):
        return Text(str(content)[:20_000])
    return Syntax(json.dumps(parsed, indent=2, ensure_ascii=False)[:20_000], "json", word_wrap=True)


def _position(choices: tuple[Any, ...], value: Any) -> int | None:
    """Where a value is among a select's choices (as JSON compares them: `true` is not 1)."""
    return next((i for i, v in enumerate(choices) if json_equal(v, value)), None)


def _shown(value: Any) -> str:
    """A choice as the select shows it: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _field(
    name: str, spec: Node, required: bool, choices: tuple[Any, ...] | None = None
) -> list[Any]:
    kind = spec.kind
    title = Text(name, style="bold")
    if required:
        title.append(" *", "red")
    title.append(f"  {' or '.join(spec.types) or kind}", "dim")
    label = Label(title)
    description = spec.get("description")
    hint = (
        [Static(Text(str(description), style="dim"), classes="field-hint")] if description else []
    )
    default = spec.get("default")
    if choices is not None:
        at = _position(choices, default) if spec.has("default") else None
        widget: Any = Select(
            [(_shown(v), i) for i, v in enumerate(choices)],
            id=f"arg-{name}",
            allow_blank=not required or spec.nullable,
            value=Select.NULL if at is None else at,
        )
    elif kind == "boolean":
        widget = Checkbox(name, bool(default), id=f"arg-{name}")
    elif kind in ("integer", "number"):
        widget = Input(
            "" if default is None else str(default),
            placeholder=kind,
            type="integer" if kind == "integer" else "number",
            id=f"arg-{name}",
        )
    elif kind in ("array", "object") or name in LONG_TEXT:
        initial = (
            ""
            if default is None
            else (default if isinstance(default, str) else json.dumps(default))
        )
        widget = TextArea(initial, id=f"arg-{name}", classes="field-text")
        if kind in ("array", "object"):
            hint.append(Static(Text(f"JSON {kind}", style="dim italic"), classes="field-hint"))
    else:
        widget = Input("" if default is None else str(default), placeholder=name, id=f"arg-{name}")
    return [label, *hint, widget]
