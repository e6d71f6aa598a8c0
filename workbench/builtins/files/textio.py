"""Reading files for the file tools in bounded time and memory, whatever the file is.

* Only regular files are opened for reading: a FIFO would block the call's thread in
  `open()` or `read()` past every timeout, and a device can read forever. The path is
  checked before it is opened, opened non-blocking, and checked again on the descriptor.
* Lines are read in chunks with a cap on their length: a 2 GB line costs its first few
  kilobytes of memory, and the caller is told it was cut.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(OSError):
    """The path is something other than a regular file; the message says what."""


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def refuse_unless_regular(path: Path, mode: int, verb: str = "read") -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFile(
            errno.EINVAL, f"{path} is {kind_of(mode)}: the file tools {verb} regular files only"
        )


def open_regular(path: Path) -> int:
    """A read-only descriptor on a regular file, or NotRegularFile; never blocks."""
    refuse_unless_regular(path, os.stat(path).st_mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        # Again on what was opened: the path may have been swapped in between. The
        # descriptor stays non-blocking, so even a kernel file that never ends a read
        # (they show as regular files under /proc) returns at once.
        refuse_unless_regular(path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The whole file, or OSError when it is over `max_bytes` (checked before reading)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise OSError(errno.EFBIG, _too_large(path, size, max_bytes))
        chunks, total = [], 0
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew, or says size 0 and is not
                raise OSError(errno.EFBIG, _too_large(path, total, max_bytes))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_large(path: Path, size: int, limit: int) -> str:
    return f"{path} is too large ({size:,} bytes; the limit is {limit:,})"


class LineReader:
    """Lines of an open file, each cut to `max_line_bytes`; `count_rest()` counts the others.

    Memory is one chunk plus one cut line, however long the lines are. Where only newlines
    are looked for (the rest of a cut line, the count), holes of a sparse file are skipped:
    they hold zeros, never a newline.
    """

    def __init__(self, fd: int, max_line_bytes: int, chunk: int = CHUNK) -> None:
        self.fd, self.max_line_bytes, self.chunk = fd, max_line_bytes, chunk
        self._data, self._pos = b"", 0
        self._last = b"\n"  # the last byte passed: not a newline means one more line
        self._size = os.fstat(fd).st_size

    def __iter__(self) -> Iterator[tuple[bytes, bool]]:
        """(the line without its newline, at most max_line_bytes; whether it was cut)."""
        line, cut = bytearray(), False
        while True:
            if self._pos >= len(self._data) and not self._fill(skip_holes=cut):
                if line or cut:
                    yield bytes(line), cut
                return
            end = self._data.find(b"\n", self._pos)
            stop = len(self._data) if end < 0 else end
            if not cut:
                room = self.max_line_bytes - len(line)
                line += self._data[self._pos : min(stop, self._pos + room)]
                cut = stop - self._pos > room
            if end < 0:
                self._pos = len(self._data)
                continue
            self._pos = end + 1
            yield bytes(line), cut
            line, cut = bytearray(), False

    def count_rest(self) -> int:
        """How many lines remain after the last one iterated (read through, nothing kept)."""
        count = self._data.count(b"\n", self._pos)
        self._last = self._data[-1:] if self._pos < len(self._data) else b"\n"
        while self._fill(skip_holes=True):
            count += self._data.count(b"\n")
        self._pos = len(self._data)
        return count + (1 if self._last != b"\n" else 0)

    def _fill(self, skip_holes: bool = False) -> bool:
        """The next chunk; False at the end of the file."""
        if skip_holes and self._skip_hole():
            return False
        data = os.read(self.fd, self.chunk)
        self._data, self._pos = data, 0
        if data:
            self._last = data[-1:]
        return bool(data)

    def _skip_hole(self) -> bool:
        """Seek past a hole at the read position; True when only a hole is left."""
        if self._size <= 0 or not hasattr(os, "SEEK_DATA"):
            return False  # a kernel file says size 0 and has data: read it
        here = os.lseek(self.fd, 0, os.SEEK_CUR)
        try:
            there = os.lseek(self.fd, here, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno != errno.ENXIO or here >= self._size:
                return False
            os.lseek(self.fd, 0, os.SEEK_END)  # zeros to the end
            self._data, self._pos, self._last = b"", 0, b"\0"
            return True
        if there > here:
            self._last = b"\0"
        return False
