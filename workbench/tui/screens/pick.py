"""A modal list to read (the tools offered to the model, spilled results) and pick from."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static


class PickScreen(ModalScreen[str | None]):
    CSS_PATH = "lists.tcss"  # its layout, beside it
    BINDINGS = [Binding("escape", "dismiss", "Close", id="pick.close")]

    def __init__(self, title: str, items: list[str], empty: str = "Nothing here.") -> None:
        super().__init__()
        self.title_text = title
        self.items = items
        self.empty = empty

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-box"):
            yield Static(self.title_text, id="pick-title")
            if self.items:
                yield OptionList(*self.items, id="pick-list")
            else:
                yield Static(self.empty, id="pick-empty")

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index])
