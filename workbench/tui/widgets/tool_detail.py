"""The selected tool: what it is, where it came from, whether it is offered, its schema, its calls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from workbench.tui.widgets.call_history import CallHistoryList

PLACEHOLDER = "Select a tool to see its details."


class ToolDetail(VerticalScroll):
    """Renders one tool row (see `report.tool_rows`), its kept calls and its JSON schema."""

    DEFAULT_CSS = """
    ToolDetail {
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(PLACEHOLDER, style="dim"), id="detail-facts")
        yield Static("", id="detail-calls-title")
        yield CallHistoryList(id="detail-calls")
        yield Static("", id="detail-schema")

    def show(
        self,
        row: dict[str, Any] | None,
        schema: dict[str, Any] | None = None,
        calls: Sequence[Any] = (),
    ) -> None:
        facts = self.query_one("#detail-facts", Static)
        code = self.query_one("#detail-schema", Static)
        self.show_calls(row["name"] if row is not None else None, calls)
        if row is None:
            facts.update(Text(PLACEHOLDER, style="dim"))
            code.update("")
            return
        text = describe(row)
        text.rstrip()  # the calls' title follows on the next line
        facts.update(text)
        parameters = json.dumps(
            (schema or {}).get("parameters", schema or {}), indent=2, ensure_ascii=False
        )
        from rich.syntax import Syntax  # pygments: loaded on first use, not before the first frame

        code.update(Syntax(parameters, "json", theme="ansi_dark", word_wrap=True))

    def show_calls(self, tool: str | None, calls: Sequence[Any]) -> None:
        """The tool's kept calls (pinned first, then newest first) and the keys for them."""
        title = Text()
        if tool is not None:
            title.append(f"{'calls':<12}", "dim")
            if calls:
                # F4 focuses the list; the footer then shows its keys
                title.append(f"{len(calls)} kept · F4 to re-run, edit, pin, save as a test", "dim")
            else:
                title.append("none yet", "dim")
        self.query_one("#detail-calls-title", Static).update(title)
        self.query_one(CallHistoryList).show(tool, calls)


def describe(row: dict[str, Any]) -> Text:
    if row["available"]:
        state = Text("available", style="green")
    else:
        state = Text(f"unavailable: {row['reason']}", style="red")
    offered = "yes" if row["offered"] else f"no ({row['not_offered']})"
    if row["offered"] and row.get("sent"):  # how, once deferral is on: in full or deferred
        offered += f", {row['sent']}"
    size = row["max_result_size_chars"]
    text = Text()
    text.append(f"{row['emoji']} {row['name']}\n", "bold")
    text.append(f"{row['description']}\n\n")
    for label, value in (
        ("source", f"{row['source']} ({row['owner']})"),
        ("toolset", row["toolset"]),
        ("status", state),
        ("offered", offered),
        ("result cap", f"{size if size else 'default'} chars"),
        *_trust(row),
    ):
        text.append(f"{label:<12}", "dim")
        text.append(value)
        text.append("\n")
    return text


HINT_WORDS = (
    ("readOnlyHint", "read-only", "may write"),
    ("destructiveHint", "destructive", "not destructive"),
    ("idempotentHint", "idempotent", "not idempotent"),
    ("openWorldHint", "reaches the outside world", "closed world"),
)


def _trust(row: dict[str, Any]) -> list[tuple[str, str | Text]]:
    """What an MCP server declares of its tool, and whether it is trusted."""
    hints = row.get("annotations") or {}
    lines: list[tuple[str, str | Text]] = []
    if hints.get("title"):
        lines.append(("title", str(hints["title"])))
    said = [yes if hints[key] else no for key, yes, no in HINT_WORDS if key in hints]
    if said:
        names = ", ".join(
            f"{key}={str(hints[key]).lower()}" for key, _, _ in HINT_WORDS if key in hints
        )
        lines.append(("annotations", f"{', '.join(said)} ({names})"))
    if row.get("untrusted"):
        asks = "runs unasked (read-only)" if hints.get("readOnlyHint") is True else "asks first"
        lines.append(("trust", Text(f"untrusted server: {asks}; results marked", "yellow")))
    return lines
