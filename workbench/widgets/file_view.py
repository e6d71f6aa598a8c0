"""A file of any size as numbered lines: memory-mapped, indexed in a worker, drawn lazily.

The first megabyte is indexed before the first frame and the rest of the line index is
built in a worker thread, so a 500 MB file opens instantly; only visible lines are read
and decoded. A line cursor (with a shift-extended selection) drives copy and search.
"""

from __future__ import annotations

import bisect
import mmap
import os
import re
from array import array
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

FIRST_CHUNK = 1 << 20  # indexed before the first frame
INDEX_STEP = 32 << 20
MAX_MATCHES = 1_000_000
GUTTER = Style(dim=True)
CURSOR = Style(bgcolor="grey23")
SELECTED = Style(bgcolor="dark_blue")
MATCH = Style(bgcolor="yellow", color="black")


class LineIndex:
    """Byte offsets of line starts in a buffer; grows as the worker indexes further."""

    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data, self.size = data, len(data)
        self.offsets = array("Q", [0])
        self.indexed = 0

    @property
    def complete(self) -> bool:
        return self.indexed >= self.size

    @property
    def count(self) -> int:
        return max(1, len(self.offsets) - (1 if self.complete else 0))

    def extend(self, end: int) -> None:
        data, position, offsets = self.data, self.indexed, self.offsets
        while position < end:
            newline = data.find(b"\n", position, end)
            if newline < 0:
                break
            offsets.append(newline + 1)
            position = newline + 1
        self.indexed = end  # a line longer than a step just continues in the next one
        if self.complete and offsets[-1] != self.size:
            offsets.append(self.size)  # a last line without a newline

    def line(self, number: int) -> str:
        if number + 1 >= len(self.offsets):
            return ""
        start, end = self.offsets[number], self.offsets[number + 1]
        return self.data[start:end].decode("utf-8", errors="replace").rstrip("\r\n")

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.offsets, offset) - 1


def open_buffer(path: Path) -> tuple[bytes | mmap.mmap, object | None]:
    handle = open(path, "rb")  # noqa: SIM115 - kept open while the view lives
    if os.fstat(handle.fileno()).st_size == 0:
        handle.close()
        return b"", None
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ), handle


class FileView(ScrollView, can_focus=True):
    """Numbered lines of a buffer; a cursor line, a selection, search highlights, wrap."""

    BINDINGS = [
        Binding("up", "move(-1)", "Line up", id="viewer.up", show=False),
        Binding("down", "move(1)", "Line down", id="viewer.down", show=False),
        Binding("pageup", "move(-20)", "Page up", id="viewer.pageup", show=False),
        Binding("pagedown", "move(20)", "Page down", id="viewer.pagedown", show=False),
        Binding("shift+up", "extend(-1)", "Select up", id="viewer.select_up", show=False),
        Binding("shift+down", "extend(1)", "Select down", id="viewer.select_down", show=False),
    ]

    class Indexed(Message):
        """The whole buffer is indexed."""

    def __init__(self, data: bytes | mmap.mmap, handle: object | None = None, **kw) -> None:
        super().__init__(**kw)
        self.index = LineIndex(data)
        self.index.extend(min(self.index.size, FIRST_CHUNK))
        self._handle = handle
        self.cursor = 0
        self.anchor: int | None = None  # the other end of a selection
        self.wrap = False
        self.pattern: re.Pattern[str] | None = None
        self._layout: tuple[int, int, list[tuple[int, int]]] | None = None
        self.widest = 0  # the widest line drawn so far sets the horizontal scroll range
        self._resize_virtual()

    @classmethod
    def of_file(cls, path: Path, **kw) -> FileView:
        data, handle = open_buffer(path)
        return cls(data, handle, **kw)

    def _resize_virtual(self) -> None:
        width = 0 if self.wrap else self.widest
        self.virtual_size = Size(width, self.index.count)

    def on_mount(self) -> None:
        if not self.index.complete:
            self.index_rest()

    @work(thread=True, exclusive=True, group="index")
    def index_rest(self) -> None:
        while not self.index.complete:
            self.index.extend(min(self.index.size, self.index.indexed + INDEX_STEP))
            self.app.call_from_thread(self._resize_virtual)
        self.app.call_from_thread(self.post_message, self.Indexed())

    # -- drawing -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        number, part = self._row(y)
        if number + 1 >= len(self.index.offsets):
            return Strip.blank(width, self.rich_style)
        text = self.index.line(number).expandtabs(4)
        gutter = f"{number + 1:>8} │ " if part == 0 else " " * 8 + " │ "
        if not self.wrap and len(text) + len(gutter) > self.widest:
            self.widest = len(text) + len(gutter)
            self.call_later(self._resize_virtual)
        room = max(1, width - len(gutter))
        left = part * room if self.wrap else self.scroll_offset.x
        shown = text[left : left + room]
        base = self.rich_style + self._line_style(number)
        return Strip(
            [Segment(gutter, self.rich_style + GUTTER), *self._segments(shown, number, base)]
        ).adjust_cell_length(width, base)

    def _segments(self, shown: str, number: int, base: Style) -> list[Segment]:
        if self.pattern is None:
            return [Segment(shown, base)]
        segments, cursor = [], 0
        for match in self.pattern.finditer(shown):
            if match.start() == match.end():
                continue
            segments.append(Segment(shown[cursor : match.start()], base))
            segments.append(Segment(match.group(), base + MATCH))
            cursor = match.end()
        segments.append(Segment(shown[cursor:], base))
        return segments

    def _line_style(self, number: int) -> Style:
        low, high = self.selection
        if self.anchor is not None and low <= number <= high:
            return SELECTED
        return CURSOR if number == self.cursor and self.has_focus else Style()

    def _row(self, y: int) -> tuple[int, int]:
        """(line number, wrapped part) shown on screen row `y`."""
        if not self.wrap:
            return self.scroll_offset.y + y, 0
        top, width = self.scroll_offset.y, self.size.width
        if self._layout is None or self._layout[:2] != (top, width):
            rows: list[tuple[int, int]] = []
            room = max(1, width - 11)
            number = top
            while len(rows) < self.size.height and number < self.index.count:
                parts = max(1, -(-len(self.index.line(number).expandtabs(4)) // room))
                rows.extend((number, p) for p in range(parts))
                number += 1
            self._layout = (top, width, rows)
        rows = self._layout[2]
        return rows[y] if y < len(rows) else (self.index.count, 0)

    # -- cursor and selection ----------------------------------------------------------

    @property
    def selection(self) -> tuple[int, int]:
        anchor = self.cursor if self.anchor is None else self.anchor
        return min(anchor, self.cursor), max(anchor, self.cursor)

    def selected_text(self) -> str:
        low, high = self.selection
        return "\n".join(self.index.line(n) for n in range(low, high + 1))

    def go_to(self, number: int, keep_selection: bool = False) -> None:
        if not keep_selection:
            self.anchor = None
        self._resize_virtual()  # the index may have grown since the worker last said so
        self.cursor = max(0, min(self.index.count - 1, number))
        top, height = self.scroll_offset.y, max(1, self.size.height)
        if not top <= self.cursor < top + height - (1 if self.wrap else 0):
            self.scroll_to(y=max(0, self.cursor - height // 3), animate=False, immediate=True)
        self._layout = None
        self.refresh()

    def action_move(self, step: int) -> None:
        self.go_to(self.cursor + step)

    def action_extend(self, step: int) -> None:
        if self.anchor is None:
            self.anchor = self.cursor
        self.go_to(self.cursor + step, keep_selection=True)

    def toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self._layout = None
        self._resize_virtual()
        self.scroll_to(x=0, animate=False, immediate=True)
        self.refresh()

    def watch_scroll_y(self, old: float, new: float) -> None:
        self._layout = None
        super().watch_scroll_y(old, new)

    def on_unmount(self) -> None:
        if isinstance(self.index.data, mmap.mmap):
            self.index.data.close()
        if self._handle is not None:
            self._handle.close()


def find_lines(index: LineIndex, needle: str) -> tuple[list[int], int]:
    """Line numbers holding `needle` (case-insensitive), and how many matches in all."""
    pattern = re.compile(re.escape(needle.encode()), re.IGNORECASE)
    lines: list[int] = []
    total = 0
    for match in pattern.finditer(index.data):
        total += 1
        number = index.line_of(match.start())
        if not lines or lines[-1] != number:
            lines.append(number)
        if total >= MAX_MATCHES:
            break
    return lines, total
