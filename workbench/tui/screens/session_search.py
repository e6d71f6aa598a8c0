"""Search past sessions (the session index) and open one: a query box and its hits."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

SEARCH_DELAY = 0.15  # seconds of quiet typing before a search runs


class SessionSearchScreen(ModalScreen[str | None]):
    """Dismissed with the chosen hit's session id, or None."""

    CSS_PATH = "lists.tcss"  # its layout, beside it
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="sessions.close"),
        Binding("down", "to_hits", "Hits", id="sessions.hits", show=False),
    ]

    def __init__(self, index: Any) -> None:
        super().__init__()
        self.index = index
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-box"):
            yield Static("Search past sessions (every word must match)", id="pick-title")
            yield Input(placeholder="words to find…", id="session-query")
            yield OptionList(id="session-hits")
            yield Static("", id="session-status")

    @on(Input.Changed, "#session-query")
    def _typed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SEARCH_DELAY, lambda: self._search(event.value))

    @on(Input.Submitted, "#session-query")
    def _submitted(self, event: Input.Submitted) -> None:
        self.action_to_hits()

    def action_to_hits(self) -> None:
        self.query_one("#session-hits", OptionList).focus()

    @work(thread=True, exclusive=True, group="session-search")
    def _search(self, query: str) -> None:
        started = time.perf_counter()
        try:
            hits = self.index.search(query, limit=50)
        except Exception as exc:  # derived data: report, never crash the screen
            self.app.call_from_thread(self._show, [], f"Search failed: {exc}")
            return
        took = (time.perf_counter() - started) * 1000
        status = f"{len(hits)} hit(s) in {took:.0f} ms" if query.strip() else ""
        self.app.call_from_thread(self._show, hits, status)

    def _show(self, hits: list[Any], status: str) -> None:
        options = self.query_one("#session-hits", OptionList)
        options.clear_options()
        for hit in hits:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.at))
            line = Text(f"{hit.session}  {when}  {hit.role}: ", style="dim")
            line.append(hit.text)
            options.add_option(Option(line, id=hit.session))
        if hits:
            options.highlighted = 0  # Enter in the list opens the best hit
        self.query_one("#session-status", Static).update(Text(status, style="dim"))

    @on(OptionList.OptionSelected, "#session-hits")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
