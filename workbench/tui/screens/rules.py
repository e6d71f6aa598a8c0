"""Approval rules in the workbench: test a call as you type, list, add, edit and delete rules.

The test line does what `hermes-tui approvals test` does, on each key: a command, or a tool
and its JSON arguments (`write_file {"path": "/etc/hosts"}`), is judged by the approval
path's own steps and nothing runs. The list shows every rule in force with its scope and
where it was read; `n` adds one, `e` edits the selected one and `delete` removes it (a rule
is written as a YAML mapping, e.g. `{action: deny, command_prefix: git push}`, and checked
before it is saved). The rules changed are the running session's: they hold at once.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from workbench.core.config import ConfigError
from workbench.core.policy import Rule, RuleBook, RuleError, Scope, parse_rule
from workbench.core.policy.policy import Outcome
from workbench.core.policy.simulate import Simulation, Simulator
from workbench.core.printable import escape

STYLE = {Outcome.ALLOW: "bold green", Outcome.ASK: "bold yellow", Outcome.DENY: "bold red"}
WORD = {Outcome.ALLOW: "allowed", Outcome.ASK: "asks", Outcome.DENY: "denied"}


class RulesScreen(Screen[None]):
    """Opened with F8 (or the palette); Esc goes back."""

    CSS_PATH = "rules.tcss"  # its layout, beside it
    BINDINGS = [
        Binding("escape", "close", "Back", id="rules.close"),
        Binding("n", "new", "New rule", id="rules.new"),
        Binding("e", "edit", "Edit rule", id="rules.edit"),
        Binding("delete", "delete", "Delete rule", id="rules.delete"),
        Binding("t", "focus_test", "Test a call", id="rules.test"),
    ]

    def __init__(self, simulator: Simulator, book: RuleBook, cwd: str | None = None) -> None:
        super().__init__()
        self.simulator = simulator  # from the controller: the tools and write roots, looked up only
        self.book = book
        self.cwd = cwd or os.getcwd()
        self.shown: list[Rule] = []
        self.editing: Rule | None = None  # the rule the editor replaces (None: a new one)

    def compose(self) -> ComposeResult:
        with Vertical(id="rules-box"):
            yield Static(Text("Approval rules", style="bold"), id="rules-title")
            yield Input(
                placeholder='test a command, or a tool and its arguments: write_file {"path": "x"}',
                id="rules-test",
            )
            yield Static("", id="rules-verdict")
            yield DataTable(id="rules-table", cursor_type="row", zebra_stripes=True)
            yield Input(
                placeholder="{action: deny, command_prefix: git push}   (Enter saves, Esc cancels)",
                id="rules-editor",
                classes="hidden",
            )
            yield Static("", id="rules-problems")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#rules-table", DataTable)
        table.add_columns("action", "matches", "pattern", "risks", "scope", "from")
        self.refresh_rules()
        self.query_one("#rules-test", Input).focus()

    # -- the list --------------------------------------------------------------------

    def refresh_rules(self) -> None:
        policy = self.book.policy
        table = self.query_one("#rules-table", DataTable)
        table.clear()
        self.shown = list(policy.rules)
        for rule in self.shown:
            risks = ", ".join(sorted(rule.risks)) if rule.risks is not None else "any"
            table.add_row(
                Text(rule.action.value, style=STYLE[Outcome(rule.action.value)]),
                rule.kind,
                escape(rule.pattern),
                risks if rule.action.value == "allow" else "",
                rule.scope.value,
                escape(rule.origin or "this session"),
            )
        lines = [f"⚠ {p}" for p in policy.problems] + [f"• {n}" for n in policy.notes]
        if not self.shown:
            lines.insert(0, "No rules: the detector decides what asks. n adds one.")
        self.query_one("#rules-problems", Static).update(escape("\n".join(lines)))
        self._judge(self.query_one("#rules-test", Input).value)

    def _selected(self) -> Rule | None:
        table = self.query_one("#rules-table", DataTable)
        if not self.shown or table.cursor_row is None or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def action_new(self) -> None:
        self._open_editor(None, "")

    def action_edit(self) -> None:
        rule = self._selected()
        if rule is None:
            self.notify("No rule selected", severity="warning")
            return
        if rule.origin.startswith("config.yaml command_allowlist") or rule.hermes_glob:
            self.notify("Hermes's command_allowlist entries are edited in config.yaml")
            return
        self._open_editor(rule, _flow(rule.entry()))

    def action_delete(self) -> None:
        rule = self._selected()
        if rule is None:
            return
        try:
            self.book.remove(rule)
        except ConfigError as exc:
            self.notify(f"Not deleted: {exc}", severity="error", timeout=8)
            return
        self.notify(f"Deleted: {rule.describe()}")
        self.refresh_rules()

    def action_focus_test(self) -> None:
        self.query_one("#rules-test", Input).focus()

    def action_close(self) -> None:
        editor = self.query_one("#rules-editor", Input)
        if not editor.has_class("hidden"):
            editor.add_class("hidden")
            self.query_one("#rules-table", DataTable).focus()
            return
        self.dismiss()

    def _open_editor(self, rule: Rule | None, text: str) -> None:
        self.editing = rule
        editor = self.query_one("#rules-editor", Input)
        editor.remove_class("hidden")
        editor.value = text
        editor.focus()

    @on(Input.Submitted, "#rules-editor")
    def _save(self, event: Input.Submitted) -> None:
        scope = self.editing.scope if self.editing is not None else Scope.EVERYWHERE
        try:
            rule = parse_rule(_read_entry(event.value), scope=scope, origin="the editor")
            if self.editing is None:
                self.book.add(rule)
            else:
                self.book.replace(self.editing, rule)
        except (RuleError, ConfigError, ValueError) as exc:
            self.notify(f"Not saved: {exc}", severity="error", timeout=10)
            return  # the text stays in the editor to be fixed
        event.input.add_class("hidden")
        self.notify(f"Saved: {rule.describe()}")
        self.refresh_rules()
        self.query_one("#rules-table", DataTable).focus()

    # -- the simulator ---------------------------------------------------------------

    @on(Input.Changed, "#rules-test")
    def _typed(self, event: Input.Changed) -> None:
        self._judge(event.value)

    def _judge(self, text: str) -> None:
        verdict = self.query_one("#rules-verdict", Static)
        if not text.strip():
            verdict.update(Text("Type a command to see what would happen; nothing runs.", "dim"))
            return
        call = _call(text, self.simulator)
        if isinstance(call, str):
            verdict.update(Text(call, style="red"))
            return
        try:
            result = self.simulator.judge(self.book.policy, call[0], call[1], self.cwd)
        except Exception as exc:  # the simulator must never take the screen down
            verdict.update(Text(f"could not judge it: {type(exc).__name__}: {exc}", "red"))
            return
        verdict.update(render(result))


def render(result: Simulation) -> Text:
    text = Text()
    text.append(WORD[result.outcome], STYLE[result.outcome])
    text.append(f": {escape(result.shown)}\n")
    text.append("why ", "dim")
    text.append(escape(result.ruling.reason) + "\n")
    for part, reason in result.spans():
        text.append("dangerous ", "dim")
        text.append(escape(part), "reverse red")
        text.append(f" — {escape(reason)}\n")
    return text


def _call(text: str, simulator: Simulator) -> tuple[str, dict[str, Any]] | str:
    """A tool call (`NAME {json}`) when the first word is a tool other than the terminal and
    JSON follows; otherwise a command."""
    name, _, rest = text.strip().partition(" ")
    known = simulator.knows(name)
    if name != "terminal" and (known or name.startswith("mcp__")) and rest.lstrip()[:1] in "{":
        try:
            args = json.loads(rest) if rest.strip() else {}
        except ValueError as exc:
            return f"the arguments are not JSON yet: {exc}"
        if not isinstance(args, dict):
            return "the arguments must be a JSON object"
        return name, args
    return "terminal", {"command": text}


def _read_entry(text: str) -> Any:
    from pathlib import Path

    from workbench.core.storage import yaml_file

    try:
        return yaml_file.parse(text, Path("the rule"))
    except yaml_file.YAMLFileError as exc:
        raise ValueError(str(exc)) from None


def _flow(entry: dict[str, Any]) -> str:
    parts = [
        f"{k}: {json.dumps(v) if not isinstance(v, str) else _scalar(v)}" for k, v in entry.items()
    ]
    return "{" + ", ".join(parts) + "}"


def _scalar(value: str) -> str:
    plain = value and all(c.isalnum() or c in " -_./*" for c in value) and value[0] not in "*-"
    return value if plain else json.dumps(value)
