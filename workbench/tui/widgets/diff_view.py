"""A file write's unified diff as coloured text, for tool cards, the call detail and the
approval modal; `DiffPane` shows one in a scrolling pane (the checkpoints view). The lines
come from the file and the model: every control or invisible character is written as a
visible escape, so a diff cannot redraw the screen."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from workbench.core.edits.diffs import FileDiff
from workbench.core.printable import escape


def line_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return ""


def diff_text(diff: FileDiff, limit: int | None = None, hint: str = "") -> Text:
    """The path and what changed (+added -removed), then at most `limit` diff lines and how
    many more there are (`hint` says how to see them)."""
    text = Text()
    text.append(escape(diff.path), "bold")
    text.append(f"  {diff.summary}\n", "yellow" if diff.note else "dim")
    shown = diff.lines if limit is None else diff.lines[:limit]
    for line in shown:
        text.append(escape(line) + "\n", line_style(line))
    hidden = len(diff.lines) - len(shown) + diff.more
    if hidden:
        text.append(f"… {hidden:,} more lines{hint}\n", "dim")
    text.rstrip()
    return text


class DiffPane(VerticalScroll):
    """A scrolling pane with one file's diff (or a line saying why there is none)."""

    DEFAULT_CSS = """
    DiffPane {
        height: 1fr;
        padding: 0 1;
        border: round $primary 30%;
    }

    DiffPane:focus {
        border: round $primary;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static("", classes="diff-body")

    def show(self, diff: FileDiff) -> None:
        self.say(diff_text(diff))

    def say(self, text: Text | str) -> None:
        self.query_one(".diff-body", Static).update(text)
        self.scroll_home(animate=False)
