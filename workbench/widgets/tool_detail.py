"""The selected tool: what it is, where it came from, whether it is offered, its schema."""

from __future__ import annotations

import json
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

PLACEHOLDER = "Select a tool to see its details."


class ToolDetail(VerticalScroll):
    """Renders one tool row (see `report.tool_rows`) and its JSON schema."""

    def compose(self) -> ComposeResult:
        yield Static(Text(PLACEHOLDER, style="dim"), id="detail-facts")
        yield Static("", id="detail-schema")

    def show(self, row: dict[str, Any] | None, schema: dict[str, Any] | None = None) -> None:
        facts = self.query_one("#detail-facts", Static)
        code = self.query_one("#detail-schema", Static)
        if row is None:
            facts.update(Text(PLACEHOLDER, style="dim"))
            code.update("")
            return
        facts.update(describe(row))
        text = json.dumps(
            (schema or {}).get("parameters", schema or {}), indent=2, ensure_ascii=False
        )
        code.update(Syntax(text, "json", theme="ansi_dark", word_wrap=True))


def describe(row: dict[str, Any]) -> Text:
    state = (
        Text("available", style="green")
        if row["available"]
        else Text(f"unavailable: {row['reason']}", style="red")
    )
    if row["offered"]:
        offered = "yes"
    elif not row["enabled"]:
        offered = "no (toolset disabled)"
    else:
        offered = "no (unavailable)"
    size = row["max_result_size_chars"]
    return Text.assemble(
        (f"{row['emoji']} {row['name']}\n", "bold"),
        (f"{row['description']}\n\n", ""),
        ("source      ", "dim"),
        f"{row['source']} ({row['owner']})\n",
        ("toolset     ", "dim"),
        f"{row['toolset']}\n",
        ("status      ", "dim"),
        state,
        "\n",
        ("offered     ", "dim"),
        f"{offered}\n",
        ("result cap  ", "dim"),
        f"{size if size else 'default'} chars\n",
    )
