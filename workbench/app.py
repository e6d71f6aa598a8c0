"""The hermes-tui application."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from workbench import __version__
from workbench.resources import style
from workbench.screens.main import MainScreen


class WorkbenchApp(App[None]):
    TITLE = "hermes-tui"
    SUB_TITLE = f"tool workbench {__version__}"
    CSS_PATH = [style("app.tcss")]
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def on_mount(self) -> None:
        self.push_screen(MainScreen())
