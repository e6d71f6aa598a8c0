"""The selected tool: what it is, where it came from, whether it is offered, its schema."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static


class ToolDetail(VerticalScroll):
    """Renders one tool row (see `report.tool_rows`) and its JSON schema."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("Select a tool to see its details.", style="dim"), id="detail-body")

    def show(self, row: dict[str, Any] | None, schema: dict[str, Any] | None = None) -> None:
        body = self.query_one("#detail-body", Static)
        if row is None:
            body.update(Text("Select a tool to see its details.", style="dim"))
            return
        state = (
            Text("available", style="green")
            if row["available"]
            else Text(f"unavailable: {row['reason']}", style="red")
        )
        offered = (
            "yes" if row["offered"] else "no (toolset disabled)" if not row["enabled"] else "no"
        )
        facts = Text.assemble(
            (f"{row['emoji']} {row['name']}\n", "bold"),
            (f"{row['description']}\n\n", ""),
            ("source      ", "dim"), f"{row['source']} ({row['owner']})\n",
            ("toolset     ", "dim"), f"{row['toolset']}\n",
            ("status      ", "dim"), state, "\n",
            ("offered     ", "dim"), f"{offered}\n",
            ("result cap  ", "dim"), f"{row['max_result_size_chars'] or 'default'} chars\n",
        )  # fmt: skip
        parts: list[Any] = [facts]
        if schema is not None:
            text = json.dumps(schema.get("parameters", schema), indent=2, ensure_ascii=False)
            parts.append(Syntax(text, "json", theme="ansi_dark", word_wrap=True))
        body.update(Group(*parts))
