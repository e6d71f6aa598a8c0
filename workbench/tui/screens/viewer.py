"""The result viewer: any file, however large, on screen at once.

Search (/ n N, with a match count), go to line (:), wrap (w), JSON pretty-printing (j,
on by default for a compact JSON result), and copy of the selected lines (c). Searching,
indexing and pretty-printing run in worker threads; the screen never waits for them. A line
the index has not reached yet is waited for, with the progress in the title (Esc cancels),
and a line past the end is said, never silently replaced by another. The screen holds the
file open while it lives: one deleted meanwhile is still shown, raw or pretty. Only a
regular file is opened (a FIFO would block, /dev/zero never ends): the caller is told why.
"""

from __future__ import annotations

import bisect
import json
import re
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from workbench.tui.widgets.file_view import FileBytes, FileView, LineIndex, MemoryBytes, find_lines

# Bytes of JSON we parse to pretty-print: the parse holds the GIL (the screen stops) and its
# objects take some twenty times the file's size, so a larger file is shown as it is.
PRETTY_LIMIT = 8 << 20
GOTO_POLL = 0.1  # seconds between looks at the index while a line is waited for


class ViewerScreen(Screen[None]):
    CSS_PATH = "viewer.tcss"  # its layout, beside it
    BINDINGS = [
        Binding("escape,q", "close", "Close viewer", id="viewer.close"),
        Binding("slash", "ask('search')", "Search", id="viewer.search"),
        Binding("n", "next_match(1)", "Next match", id="viewer.next"),
        Binding("N", "next_match(-1)", "Previous match", id="viewer.previous"),
        Binding("colon,ctrl+g", "ask('goto')", "Go to line", id="viewer.goto"),
        Binding("w", "wrap", "Wrap", id="viewer.wrap"),
        Binding("j", "pretty", "JSON pretty / raw", id="viewer.pretty"),
        Binding("c", "copy", "Copy selection", id="viewer.copy"),
        Binding("g", "top", "Top", id="viewer.top", show=False),
        Binding("G", "bottom", "Bottom", id="viewer.bottom", show=False),
    ]

    def __init__(self, path: Path) -> None:
        """Raises OSError (NotViewable for a FIFO, a device, a directory) if it cannot open."""
        super().__init__()
        self.path = Path(path)
        self.source = FileBytes(self.path)
        self.matches: list[int] = []
        self.match_offsets: list[int] = []  # the byte in each line of its first match
        self.match_total = 0
        self.needle = ""
        self.pretty: bytes | None = None
        self._asking = ""
        self.waiting_for: int | None = None  # a line asked for that the index has not reached
        self._goto_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(str(self.path), id="viewer-title")
        yield FileView(self.source, id="viewer-lines")
        yield Input(id="viewer-input")
        yield Footer()

    @property
    def view(self) -> FileView:
        return self.query_one(FileView)

    def on_mount(self) -> None:
        self.view.focus()
        self._title()
        if self.view.index.size <= PRETTY_LIMIT and _looks_compact_json(self.view.index):
            self.make_pretty()

    def _title(self, extra: str = "") -> None:
        view = self.view
        lines = f"{view.index.count:,} lines" if view.index.complete else "indexing…"
        mode = " · JSON pretty" if view.id == "viewer-pretty" else ""
        found = f" · {self.match_total:,} matches of “{self.needle}”" if self.needle else ""
        self.query_one("#viewer-title", Static).update(
            Text.assemble(
                (str(self.path), "bold"),
                f" · {view.index.size:,} bytes · {lines}{mode}{found}",
                (f" · {extra}" if extra else "", "dim"),
            )
        )

    @on(FileView.Indexed)
    def _indexed(self) -> None:
        if self.waiting_for is None:
            self._title()

    @on(FileView.Rewritten)
    def _rewritten(self) -> None:
        """The lines are not those the matches were found in: search what it holds now."""
        self.matches, self.match_offsets, self.match_total = [], [], 0
        if self.needle:
            self.search(self.needle)
        else:
            self._title()

    # -- search and go to --------------------------------------------------------------

    def action_ask(self, what: str) -> None:
        field = self.query_one("#viewer-input", Input)
        self._asking = what
        field.placeholder = "search for…" if what == "search" else "go to line…"
        field.value = self.needle if what == "search" else ""
        field.add_class("-open")
        field.focus()

    @on(Input.Submitted, "#viewer-input")
    def _answered(self, event: Input.Submitted) -> None:
        event.input.remove_class("-open")
        self.view.focus()
        value = event.value.strip()
        if self._asking == "goto":
            number = value.replace(",", "").replace("_", "")
            if number.isdigit() and int(number) > 0:
                self.go_to_line(int(number) - 1)
            else:
                self.notify(f"{value!r} is not a line number", severity="warning")
        elif value:
            self.search(value)

    def go_to_line(self, number: int) -> None:
        """Line `number` (from 0): now if the index has reached it, else once it does."""
        self._stop_waiting()
        index = self.view.index
        if index.ready(number):
            self.view.go_to(number)
            self._title()
        elif index.complete:
            self.view.go_to(index.count - 1)
            self._title()
            self.notify(
                f"Line {number + 1:,} is past the end: the file has {index.count:,} lines; "
                "showing the last.",
                severity="warning",
            )
        else:
            self.waiting_for = number
            self._goto_timer = self.set_interval(GOTO_POLL, self._check_waiting)
            self._check_waiting()

    def _check_waiting(self) -> None:
        number, index = self.waiting_for, self.view.index
        if number is None:
            return
        if index.ready(number) or index.complete:
            self.go_to_line(number)
            return
        done = index.indexed / max(1, index.size)
        self._title(
            f"going to line {number + 1:,} once indexed: {index.ended:,} lines so "
            f"far ({done:.0%}) · Esc cancels"
        )

    def _stop_waiting(self, said: str = "") -> None:
        if self._goto_timer is not None:
            self._goto_timer.stop()
            self._goto_timer = None
        if self.waiting_for is not None and said:
            self._title()
            self.notify(said)
        self.waiting_for = None

    def search(self, needle: str) -> None:
        self._stop_waiting()
        self.needle, self.matches, self.match_offsets, self.match_total = needle, [], [], 0
        self.view.pattern = _pattern(needle)
        self._title("searching…")
        self._search(self.view, needle)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, view: FileView, needle: str) -> None:
        worker = get_current_worker()
        while not view.index.complete:  # line numbers need the whole index
            if worker.is_cancelled:
                return
            time.sleep(0.02)
        found = find_lines(view.index, needle, lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, needle, *found)

    def _found(self, needle: str, lines: list[int], offsets: list[int], total: int) -> None:
        if needle != self.needle:
            return
        self.matches, self.match_offsets, self.match_total = lines, offsets, total
        self._title("" if total else "no match")
        if lines:
            self.action_next_match(1, inclusive=True)

    def action_next_match(self, step: int, inclusive: bool = False) -> None:
        if not self.matches:
            if self.needle:
                self.notify(f"“{self.needle}” is not in this file")
            return
        cursor = self.view.cursor
        if step > 0:
            at = bisect.bisect_left(self.matches, cursor + (0 if inclusive else 1))
        else:
            at = bisect.bisect_left(self.matches, cursor) - 1
        at %= len(self.matches)  # past either end wraps around
        target = self.matches[at]
        self.view.go_to(target)
        self.view.show_offset(target, self.match_offsets[at])
        self._title(f"line {target + 1} ({at + 1} of {len(self.matches):,} lines)")

    # -- display -----------------------------------------------------------------------

    def action_wrap(self) -> None:
        self.view.toggle_wrap()

    def action_pretty(self) -> None:
        if self.view.id == "viewer-pretty":
            self._swap(FileView(self.source, id="viewer-lines"))
        elif self.pretty is not None:
            self._swap(FileView(MemoryBytes(self.pretty), id="viewer-pretty"))
        elif self.view.index.size <= PRETTY_LIMIT:
            self.make_pretty()
        else:
            self.notify("Too large to pretty-print; showing it as it is.")

    @work(thread=True, exclusive=True, group="pretty")
    def make_pretty(self) -> None:
        try:
            value = json.loads(self.source.read(0, PRETTY_LIMIT + 1))
        except (ValueError, UnicodeDecodeError):
            self.app.call_from_thread(self.notify, "This file is not JSON.")
            return
        pretty = json.dumps(value, indent=2, ensure_ascii=False).encode()
        self.app.call_from_thread(self._pretty_ready, pretty)

    def _pretty_ready(self, pretty: bytes) -> None:
        self.pretty = pretty
        self._swap(FileView(MemoryBytes(pretty), id="viewer-pretty"))

    def _swap(self, replacement: FileView) -> None:
        self._stop_waiting()  # line numbers change between the pretty and the raw text
        old = self.view
        self.mount(replacement, before=old)
        old.remove()
        replacement.pattern = old.pattern
        replacement.focus()
        self.matches, self.match_offsets, self.match_total = [], [], 0
        if self.needle:
            self.call_after_refresh(self.search, self.needle)
        self.call_after_refresh(self._title)

    def action_copy(self) -> None:
        text, cut = self.view.selected_text()
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        said = f" ({cut:,} long line(s) cut as shown)" if cut else ""
        self.notify(f"Copied {lines} line(s), {len(text):,} characters{said}.")

    def action_top(self) -> None:
        self.view.go_to(0)

    def action_bottom(self) -> None:
        self.view.go_to(self.view.index.count - 1)

    def on_unmount(self) -> None:
        self.source.close()

    def action_close(self) -> None:
        field = self.query_one("#viewer-input", Input)
        if field.has_class("-open"):
            field.remove_class("-open")
            self.view.focus()
        elif self.waiting_for is not None:
            self._stop_waiting(f"Stopped waiting for line {self.waiting_for + 1:,}.")
        else:
            self.app.pop_screen()


def _pattern(needle: str) -> re.Pattern[str]:
    return re.compile(re.escape(needle), re.IGNORECASE)


def _looks_compact_json(index: LineIndex) -> bool:
    """One long line starting like JSON: a tool result worth pretty-printing."""
    head = index.source.read(0, 64).lstrip()
    return head[:1] in (b"{", b"[") and index.count <= 2
