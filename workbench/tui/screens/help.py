"""F1: every key the workbench answers to, by where it applies."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "lists.tcss"  # its layout, beside it
    BINDINGS = [
        Binding("escape", "dismiss", "Close help", id="help.close"),
        Binding("f1", "dismiss", "Close help", id="help.close_f1", show=False),
    ]

    def __init__(self, sections: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, header_style="bold", expand=True, box=None)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("id", style="dim")
        for title, owner in self.sections:
            table.add_row(Text(title, style="bold underline"), "", "")
            for binding in getattr(owner, "BINDINGS", []):
                if isinstance(binding, Binding):
                    keys = binding.key.replace(",", ", ")
                    table.add_row(keys, binding.description or binding.action, binding.id or "")
        with VerticalScroll(id="help-box"):
            yield Static(Text("hermes-tui keys (Esc closes)", style="bold"))
            yield Static(table)
            yield Static(
                Text(
                    "ctrl+p opens the command palette: toggle a toolset, run a tool, restart a "
                    "server, reload a plugin, open a spilled result, change the theme.",
                    style="dim",
                )
            )
