"""The result viewer: any file, however large, on screen at once.

The file is memory-mapped; the first lines are indexed before the first frame and the rest
of the line index is built in a worker thread, so a 500 MB file opens instantly. Only the
visible lines are read and decoded.
"""

from __future__ import annotations

import mmap
import os
from array import array
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Static

FIRST_CHUNK = 1 << 20  # indexed before the first frame
GUTTER = Style(dim=True)


class FileView(ScrollView):
    """Lines of a memory-mapped file, with line numbers; only what is visible is read."""

    def __init__(self, path: Path, **kwargs) -> None:
        super().__init__(**kwargs)
        self.path = path
        self._file = open(path, "rb")  # noqa: SIM115 - kept open while the view lives
        size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.size_bytes = size
        self.offsets = array("Q", [0])
        self.indexed = 0  # bytes indexed so far
        self._index_until(min(size, FIRST_CHUNK))
        self.widest = 200

    @property
    def line_count(self) -> int:
        return len(self.offsets) - (0 if self.indexed >= self.size_bytes else 1)

    def _index_until(self, end: int) -> None:
        data, position, offsets = self._map, self.indexed, self.offsets
        while position < end:
            newline = data.find(b"\n", position, end)
            if newline < 0:
                break
            offsets.append(newline + 1)
            position = newline + 1
        self.indexed = end if end >= self.size_bytes else position
        if self.indexed >= self.size_bytes and offsets[-1] != self.size_bytes:
            offsets.append(self.size_bytes)  # a last line without a newline
        self.virtual_size = Size(self.widest + 10, max(1, len(offsets) - 1))

    def on_mount(self) -> None:
        if self.indexed < self.size_bytes:
            self.index_rest()

    @work(thread=True, exclusive=True, group="index")
    def index_rest(self) -> None:
        step = 32 << 20
        while self.indexed < self.size_bytes:
            self._index_until(min(self.size_bytes, self.indexed + step))
            self.app.call_from_thread(self.refresh)
        self.app.call_from_thread(self.post_message, self.Indexed())

    class Indexed(Message):
        """The whole file is indexed."""

    def line(self, number: int) -> str:
        start, end = self.offsets[number], self.offsets[number + 1]
        return self._map[start:end].decode("utf-8", errors="replace").rstrip("\r\n")

    def render_line(self, y: int) -> Strip:
        number = self.scroll_offset.y + y
        if number >= len(self.offsets) - 1:
            return Strip.blank(self.size.width)
        text = self.line(number).expandtabs(4)
        gutter = f"{number + 1:>8} │ "
        visible = text[
            self.scroll_offset.x : self.scroll_offset.x + max(0, self.size.width - len(gutter))
        ]
        return Strip([Segment(gutter, GUTTER), Segment(visible)]).crop(0, self.size.width)

    def on_unmount(self) -> None:
        if isinstance(self._map, mmap.mmap):
            self._map.close()
        self._file.close()


class ViewerScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Close viewer", id="viewer.close"),
        Binding("g", "top", "Top", id="viewer.top"),
        Binding("G", "bottom", "Bottom", id="viewer.bottom"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)

    def compose(self) -> ComposeResult:
        yield Static(f"{self.path}", id="viewer-title")
        yield FileView(self.path, id="viewer-lines")
        yield Footer()

    def on_mount(self) -> None:
        view = self.query_one(FileView)
        view.focus()
        self.query_one("#viewer-title", Static).update(f"{self.path} · {view.size_bytes:,} bytes")

    def action_top(self) -> None:
        self.query_one(FileView).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one(FileView).scroll_end(animate=False)
