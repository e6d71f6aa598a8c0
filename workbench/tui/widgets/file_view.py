"""A file of any size as numbered lines: read by position, indexed in a worker, drawn lazily.

The first megabyte is indexed before the first frame and the rest of the line index is
built in a worker thread, so a 500 MB file opens instantly. The file is read with pread,
never mapped: what stays in memory is a sparse index (a line start every few hundred lines)
and the parts on screen, so a gigabyte of lines, or one line of 500 MB, keeps the memory
small, and a file cut short while open reads short instead of killing the process (SIGBUS)
and is then read again; one written to while open is read on as it grows.
A line longer than a part is drawn a part at a time, with markers saying what is left out
(`[` and `]` move along it); search reads the file in blocks, so it finds text anywhere in
such a line without holding it. A line cursor (with a shift-extended selection) drives copy
and search.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
import threading
from array import array
from collections.abc import Callable
from itertools import accumulate
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
INDEX_STEP = 32 << 20  # indexed between two updates of the view
READ_BLOCK = 4 << 20  # read at once by the index and the search: memory they hold
SCAN_BLOCK = 256 << 10  # split into lines at once by the index (a list of their lengths)
MARK_LINES = 256  # a line start is kept every MARK_LINES lines ...
MARK_BYTES = 16 << 10  # ... or every MARK_BYTES bytes: a line is found by reading at most that
PART = 64 << 10  # bytes of one line drawn at once (unwrapped); a longer line is cut
MAX_MATCHES = 1_000_000
FOLLOW_EVERY = 1.0  # seconds between looks at whether the file has grown
TAIL = 256  # bytes before the end read again at each look: changed, the file was rewritten
GUTTER = Style(dim=True)
CURSOR = Style(bgcolor="grey23")
SELECTED = Style(bgcolor="dark_blue")
MATCH = Style(bgcolor="yellow", color="black")
CUT = Style(color="black", bgcolor="magenta")  # the markers of a line drawn in part


class NotViewable(OSError):
    """A path the viewer refuses: not a regular file (a FIFO would block, /dev/zero never ends)."""


class FileBytes:
    """A regular file read by position. The size is the one it had when opened; a file cut
    short while open reads short (the index then ends there), one deleted stays readable."""

    def __init__(self, path: Path) -> None:
        # Refused from its stat, unopened: opening a FIFO lets its waiting writer through,
        # opening a device can act (a watchdog starts counting down).
        _regular(path, os.stat(path).st_mode)
        # O_NONBLOCK and O_NOCTTY: if it was swapped for a FIFO or a terminal since, the open
        # neither waits for a writer nor takes a terminal, and the check below refuses it.
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        fd = os.open(path, flags)
        try:
            info = os.fstat(fd)
            _regular(path, info.st_mode)
            self.size = info.st_size
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._lock = threading.Lock()  # a read never meets a close (the number could be reused)
        self._tail = self._last_bytes(self.size)

    def __len__(self) -> int:
        return self.size

    def read(self, start: int, end: int) -> bytes:
        end = min(end, self.size)
        if end <= start:
            return b""
        with self._lock:
            if self._fd < 0:
                return b""
            try:
                return os.pread(self._fd, end - start, start)
            except OSError:
                return b""  # unreadable now: as if cut short

    def look(self) -> str:
        """How the file changed since it was last looked at: "grown" (written on: its new
        end is then the one read to), "rewritten" (cut short, or its last bytes are no
        longer what they were: emptied in place and written again, as logrotate's
        copytruncate does; it must be read again from its start), or "" (as it was)."""
        with self._lock:
            if self._fd < 0:
                return ""
            size = os.fstat(self._fd).st_size
            tail = self._last_bytes(self.size) if size >= self.size else None
            if size == self.size and tail == self._tail:
                return ""
            change = "grown" if tail == self._tail else "rewritten"
            self.size, self._tail = size, self._last_bytes(size)
        return change

    def _last_bytes(self, size: int) -> bytes:
        """The bytes just before `size`: what says whether the file was rewritten."""
        try:
            return os.pread(self._fd, min(size, TAIL), max(0, size - TAIL))
        except OSError:
            return b""

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


class MemoryBytes:
    """Bytes held in memory (the pretty-printed JSON) behind the same reading interface."""

    def __init__(self, data: bytes) -> None:
        self.data, self.size = data, len(data)

    def __len__(self) -> int:
        return self.size

    def read(self, start: int, end: int) -> bytes:
        return self.data[start:end]

    def look(self) -> str:
        return ""


def _regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotViewable(f"{path} is {_kind(mode)}, not a regular file; the viewer shows files")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (a pipe)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def cannot_view(path: Path) -> str:
    """Why the viewer cannot open `path`, or "" if it can (a regular file, readable)."""
    try:
        FileBytes(path).close()
    except FileNotFoundError:
        return f"no such file: {path}"
    except OSError as exc:
        return str(exc) if isinstance(exc, NotViewable) else f"cannot open {path}: {exc.strerror}"
    return ""


class LineIndex:
    """Where the lines of a file start, kept sparsely (a mark every MARK_LINES lines or
    MARK_BYTES bytes) so that its memory does not grow with the number of lines; grows as
    the worker reads further."""

    def __init__(self, source: FileBytes | MemoryBytes | bytes) -> None:
        self.source = MemoryBytes(source) if isinstance(source, bytes) else source
        self.size = len(self.source)
        self.indexed = 0
        self.newlines = 0  # line ends found so far
        self.marks = array("Q", [0])  # byte offsets of some line starts ...
        self.mark_lines = array("Q", [0])  # ... and their line numbers
        self._ends_with_newline = False
        self._segments: dict[int, list[int]] = {}

    @property
    def complete(self) -> bool:
        return self.indexed >= self.size

    @property
    def count(self) -> int:
        if not self.complete or not self._ends_with_newline:
            return self.newlines + 1
        return max(1, self.newlines)

    @property
    def ended(self) -> int:
        """How many lines, from the first, are known to their end."""
        return self.count if self.complete else self.newlines

    def ready(self, number: int) -> bool:
        return 0 <= number < self.ended

    def extend(self, end: int) -> None:
        position = self.indexed
        while position < end:
            block = self.source.read(position, min(end, position + READ_BLOCK))
            if not block:  # shorter than when opened: cut while open, it ends here
                self.size = end = position
                break
            self._scan(block, position)
            position += len(block)
        self.indexed = end  # a line longer than a step just continues in the next one

    def _scan(self, block: bytes, base: int) -> None:
        for at in range(0, len(block), SCAN_BLOCK):
            self._scan_lines(block[at : at + SCAN_BLOCK], base + at)
        self._ends_with_newline = block.endswith(b"\n")

    def _scan_lines(self, block: bytes, base: int) -> None:
        """Count the newlines of `block` and mark the line starts due among them. The line
        lengths are summed in C (split, accumulate), and Python runs once a mark, not once
        a line: indexing a gigabyte of short lines takes about half the time."""
        ends = list(accumulate(map(len, block.split(b"\n"))))
        count = len(ends) - 1  # newlines in the block

        def start(k: int) -> int:  # the line start after the block's k-th newline
            return base + ends[k - 1] + k

        marks, mark_lines = self.marks, self.mark_lines
        while True:
            by_lines = mark_lines[-1] + MARK_LINES - self.newlines
            by_bytes = bisect.bisect_left(range(1, count + 1), marks[-1] + MARK_BYTES, key=start)
            k = min(by_lines, by_bytes + 1)
            if k > count:
                break
            marks.append(start(k))
            mark_lines.append(self.newlines + k)
        self.newlines += count

    def _segment(self, mark: int) -> list[int]:
        """The line starts from mark `mark` to the next (all within MARK_BYTES of it).

        The worker may be adding marks and lines meanwhile, and says how far it has read
        (`indexed`) only at the end of a step: the lines counted are read whole, whatever
        `indexed` says, and a mark's line number (added after its offset) says it is there."""
        cached = self._segments.get(mark)
        if cached is not None:
            return cached
        base, first = self.marks[mark], self.mark_lines[mark]
        grows = mark + 1 >= len(self.mark_lines)  # the last segment: more lines may come
        last = self.newlines + 1 if grows else self.mark_lines[mark + 1]
        block = self.source.read(base, base + MARK_BYTES)
        starts, at = [base], -1
        while len(starts) < last - first:
            at = block.find(b"\n", at + 1)
            if at < 0:
                break  # changed under us since indexed
            starts.append(base + at + 1)
        if not grows:
            if len(self._segments) >= 256:
                self._segments.clear()
            self._segments[mark] = starts
        return starts

    def start(self, number: int) -> int:
        """Where line `number` starts (its start must be known: number <= newlines)."""
        mark = bisect.bisect_right(self.mark_lines, number) - 1
        starts = self._segment(mark)
        at = number - self.mark_lines[mark]
        return starts[at] if at < len(starts) else self.size

    def span(self, number: int) -> tuple[int, int]:
        """Line `number`'s bytes, without its newline; the last line indexed so far ends, for
        now, where the index does (one line of 500 MB shows before it is all read)."""
        start = self.start(number)
        if number < self.newlines:
            end = self.start(number + 1) - 1
        else:
            end = self.size if self.complete else self.indexed
        return start, max(start, end)

    def text(self, number: int, skip: int = 0, limit: int = PART) -> tuple[str, int, int]:
        """Line `number` from its byte `skip`, at most `limit` bytes of it, and how many of
        its bytes are left out before and after (so far, if it is not ready)."""
        if not 0 <= number < self.count:
            return "", 0, 0
        start, end = self.span(number)
        first = _char_start(self.source, start + min(skip, end - start), start)
        stop = min(end, first + limit)
        if stop < end:
            stop = _char_start(self.source, stop, first)
        data = self.source.read(first, stop)
        if stop == end:
            data = data.removesuffix(b"\r")
        return data.decode("utf-8", errors="replace"), first - start, end - stop

    def line(self, number: int, limit: int = PART) -> str:
        return self.text(number, 0, limit)[0]

    def line_of(self, offset: int) -> int:
        mark = bisect.bisect_right(self.marks, offset) - 1
        return self.mark_lines[mark] + bisect.bisect_right(self._segment(mark), offset) - 1


def _char_start(source: FileBytes | MemoryBytes, offset: int, low: int) -> int:
    """`offset`, moved back to the start of the UTF-8 character it falls in (not below low)."""
    first = max(low, offset - 3)
    head = source.read(first, offset + 1)  # the byte at offset last
    if len(head) != offset + 1 - first:
        return offset  # at or past the end
    back = 0
    while back < len(head) - 1 and 0x80 <= head[-1 - back] < 0xC0:
        back += 1
    return offset - back


class FileView(ScrollView, can_focus=True):
    """Numbered lines of a file; a cursor line, a selection, search highlights, wrap."""

    BINDINGS = [
        Binding("up", "move(-1)", "Line up", id="viewer.up", show=False),
        Binding("down", "move(1)", "Line down", id="viewer.down", show=False),
        Binding("pageup", "move(-20)", "Page up", id="viewer.pageup", show=False),
        Binding("pagedown", "move(20)", "Page down", id="viewer.pagedown", show=False),
        Binding("shift+up", "extend(-1)", "Select up", id="viewer.select_up", show=False),
        Binding("shift+down", "extend(1)", "Select down", id="viewer.select_down", show=False),
        Binding(
            "right_square_bracket",
            "part(1)",
            "Next part of a long line",
            id="viewer.part_next",
            show=False,
        ),
        Binding(
            "left_square_bracket",
            "part(-1)",
            "Previous part of a long line",
            id="viewer.part_previous",
            show=False,
        ),
    ]

    class Indexed(Message):
        """The whole file is indexed."""

    class Rewritten(Message):
        """The file was cut short or rewritten while open: its lines are read again."""

    def __init__(self, source: FileBytes | MemoryBytes | bytes, **kw) -> None:
        super().__init__(**kw)
        self.index = LineIndex(source)
        self.index.extend(min(self.index.size, FIRST_CHUNK))
        self.cursor = 0
        self.select_anchor: int | None = None  # the other end of a selection
        self.wrap = False
        self.pattern: re.Pattern[str] | None = None
        self.skips: dict[int, int] = {}  # a long line drawn from this byte, not its first part
        self._layout: tuple[int, int, list[tuple[int, int]]] | None = None
        self._texts: dict[tuple[int, int, int], tuple[str, str, str]] = {}
        self.widest = 0  # the widest line drawn so far sets the horizontal scroll range
        self._resize_virtual()

    def _resize_virtual(self) -> None:
        width = 0 if self.wrap else self.widest
        self.virtual_size = Size(width, self.index.count)

    def on_mount(self) -> None:
        if not self.index.complete:
            self.index_rest()
        self.set_interval(FOLLOW_EVERY, self._follow)

    def _follow(self) -> None:
        """A file written to while open (a log, say) is read on as it grows; one cut short or
        rewritten in place is read again from its start."""
        if not self.index.complete:
            return
        change = self.index.source.look()
        if change == "grown":
            self.index.size = len(self.index.source)
            self.index_rest()
        elif change == "rewritten":
            self.index = LineIndex(self.index.source)
            self.index.extend(min(self.index.size, FIRST_CHUNK))
            self.skips.clear()
            self.select_anchor, self.widest = None, 0
            self.cursor = min(self.cursor, self.index.count - 1)
            self._grown()
            self.post_message(self.Rewritten())
            if self.index.complete:
                self.post_message(self.Indexed())
            else:
                self.index_rest()

    @work(thread=True, exclusive=True, group="index")
    def index_rest(self) -> None:
        while not self.index.complete:
            self.index.extend(min(self.index.size, self.index.indexed + INDEX_STEP))
            self.app.call_from_thread(self._grown)
        self.app.call_from_thread(self.post_message, self.Indexed())

    def _grown(self) -> None:
        """The index went further: more lines, or more of the last one (drawn again)."""
        self._resize_virtual()
        self._texts.clear()
        self._layout = None
        self.refresh()

    # -- drawing -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        number, part = self._row(y)
        if number >= self.index.count:
            return Strip.blank(width, self.rich_style)
        pieces = self._shown(number)
        gutter = f"{number + 1:>8} │ " if part == 0 else " " * 8 + " │ "
        length = sum(len(piece) for piece in pieces)
        if not self.wrap and length + len(gutter) > self.widest:
            self.widest = length + len(gutter)
            self.call_later(self._resize_virtual)
        room = max(1, width - len(gutter))
        left = part * room if self.wrap else self.scroll_offset.x
        base = self.rich_style + self._line_style(number)
        segments, at = [Segment(gutter, self.rich_style + GUTTER)], 0
        for piece, style in zip(pieces, (base + CUT, base, base + CUT), strict=True):
            low, high = max(left, at) - at, min(left + room, at + len(piece)) - at
            if low < high:
                shown = piece[low:high]
                is_text = style is base
                segments += self._segments(shown, base) if is_text else [Segment(shown, style)]
            at += len(piece)
        return Strip(segments).adjust_cell_length(width, base)

    def _shown(self, number: int) -> tuple[str, str, str]:
        """Line `number` as drawn: a marker for what is left out before, the part of it
        shown (tabs expanded), a marker for what is left out after."""
        key = (number, self.skips.get(number, 0), self._part())
        shown = self._texts.get(key)
        if shown is None:
            text, before, after = self.index.text(*key)
            head = f"«{before:,} bytes before: [ shows them» " if before else ""
            more = f"{after:,}" + ("" if self.index.ready(number) else "+")  # still indexed
            tail = f" «line cut: {more} bytes more, ] shows them»" if after else ""
            if len(self._texts) >= 128:
                self._texts.clear()
            shown = self._texts[key] = (head, text.expandtabs(4), tail)
        return shown

    def _part(self) -> int:
        """Bytes of a long line drawn at once: a screenful when wrapped, so that all of it
        can be seen a part at a time."""
        if not self.wrap:
            return PART
        return min(PART, max(1, self.size.height - 1) * max(1, self.size.width - 11))

    def _segments(self, shown: str, base: Style) -> list[Segment]:
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
        if self.select_anchor is not None and low <= number <= high:
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
                length = sum(len(piece) for piece in self._shown(number))
                rows.extend((number, p) for p in range(max(1, -(-length // room))))
                number += 1
            self._layout = (top, width, rows)
        rows = self._layout[2]
        return rows[y] if y < len(rows) else (self.index.count, 0)

    # -- a long line, a part at a time -------------------------------------------------

    def action_part(self, step: int) -> None:
        number = self.cursor
        _, before, after = self.index.text(number, self.skips.get(number, 0), self._part())
        if (after if step > 0 else before) == 0:
            self.notify(f"Line {number + 1:,} is shown to its {'end' if step > 0 else 'start'}.")
            return
        start, end = self.index.span(number)
        skip = end - start - after if step > 0 else max(0, before - self._part())
        self._show_from(number, skip)

    def show_offset(self, number: int, offset: int) -> None:
        """Make byte `offset` of line `number` (a match) visible, moving along a long line."""
        _, before, after = self.index.text(number, self.skips.get(number, 0), self._part())
        start, end = self.index.span(number)
        if not before <= offset < end - start - after:
            self._show_from(number, max(0, offset - 24))  # a little of what leads to it

    def _show_from(self, number: int, skip: int) -> None:
        self.skips[number] = skip
        self._layout = None
        self.scroll_to(x=0, animate=False, immediate=True)
        self.refresh()

    # -- cursor and selection ----------------------------------------------------------

    @property
    def selection(self) -> tuple[int, int]:
        anchor = self.cursor if self.select_anchor is None else self.select_anchor
        return min(anchor, self.cursor), max(anchor, self.cursor)

    def selected_text(self) -> tuple[str, int]:
        """The selected lines (a long one cut at a part), and how many were cut."""
        low, high = self.selection
        texts = [self.index.text(n) for n in range(low, high + 1)]
        return "\n".join(text for text, _, _ in texts), sum(1 for t in texts if t[2])

    def go_to(self, number: int, keep_selection: bool = False) -> None:
        if not keep_selection:
            self.select_anchor = None
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
        if self.select_anchor is None:
            self.select_anchor = self.cursor
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


def find_lines(
    index: LineIndex, needle: str, cancelled: Callable[[], bool] = lambda: False
) -> tuple[list[int], list[int], int]:
    """Line numbers holding `needle` (case-insensitive, as ASCII letters fold), the byte in
    each of its first match, and how many matches in all. The file is read a block at a
    time: memory stays at a block, and the GIL is let go between blocks (the screen goes on
    drawing), where one regular expression over the whole file would hold it throughout."""
    wanted = needle.encode().lower()
    lines: list[int] = []
    firsts: list[int] = []
    total = position = 0
    # What is indexed now: a file growing meanwhile has bytes past it that no line number
    # can be given yet (they are searched when the search is made again).
    size = index.indexed
    while position < size and total < MAX_MATCHES and not cancelled():
        end = min(size, position + READ_BLOCK)
        block = index.source.read(position, end + len(wanted) - 1).lower()
        at = block.find(wanted)
        while 0 <= at < end - position and total < MAX_MATCHES:
            total += 1
            number = index.line_of(position + at)
            if not lines or lines[-1] != number:
                lines.append(number)
                firsts.append(position + at - index.start(number))
            at = block.find(wanted, at + max(1, len(wanted)))
        position = end
    return lines, firsts, total
