"""A command's output, captured in bounded memory and saved whole to the session's spill file.

Output up to `limit` bytes is kept as it is. Past that, memory holds only the head and the
tail (`limit` bytes together) and every byte goes to a spill file as it arrives, so a
gigabyte of output costs a gigabyte of disk, never of memory. The output is cut only when it
cannot be saved (no spill directory, a write error such as a full or read-only disk, or
less than `reserve` bytes left free on that disk), and the text says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

from workbench.builtins.api import SpillSlot

FREE_SPACE_RESERVE = 1 << 30  # stop saving before the disk is full for everyone else
FREE_SPACE_CHECK_EVERY = 64 << 20


@dataclass(frozen=True)
class Captured:
    text: str  # what the model reads: all of it, or the head, a note and the tail
    total_bytes: int
    saved_to: str | None  # the file with the whole output
    save_error: str | None  # why the whole output could not be saved


class OutputCapture:
    def __init__(self, limit: int, spill: SpillSlot | None, reserve: int | None = None) -> None:
        self.limit, self.half = limit, limit // 2
        self.spill = spill
        self.reserve = FREE_SPACE_RESERVE if reserve is None else reserve
        self.total = 0
        self.head = bytearray()  # everything, until the output passes `limit`
        self.tail = bytearray()
        self.file: BinaryIO | None = None
        self.error: str | None = None
        self._next_space_check = 0

    @property
    def overflowed(self) -> bool:
        return self.total > self.limit

    def feed(self, chunk: bytes) -> None:
        was_over = self.overflowed
        self.total += len(chunk)
        if not self.overflowed:
            self.head += chunk
            return
        if not was_over:  # the first byte past the limit: from now on, head and tail only
            self.head += chunk
            self._start_saving()
            self._save(bytes(self.head))
            self.tail = self.head[self.half :]
            del self.head[self.half :]
        else:
            self.tail += chunk
            self._save(chunk)
        if len(self.tail) > 2 * self.half:  # trimmed in batches: one copy per `half` bytes
            del self.tail[: len(self.tail) - self.half]

    def finish(self) -> Captured:
        saved = self._close()
        if not self.overflowed:
            return Captured(self.head.decode("utf-8", errors="replace"), self.total, None, None)
        tail = bytes(self.tail[-self.half :]) if self.half else b""
        omitted = self.total - len(self.head) - len(tail)
        if saved:
            note = (
                f"[... {omitted:,} bytes of output omitted here. The full output "
                f"({self.total:,} bytes) is saved to: {saved}\n"
                "Use the read_file tool with offset and limit, or search_files, to read "
                "any part of it ...]"
            )
        else:
            note = (
                f"[... {omitted:,} bytes of output omitted and lost: the full output "
                f"({self.total:,} bytes) could not be saved ({self.error}) ...]"
            )
        text = (
            self.head.decode("utf-8", errors="replace")
            + f"\n\n{note}\n\n"
            + tail.decode("utf-8", errors="replace")
        )
        return Captured(text, self.total, saved, None if saved else self.error)

    # -- the spill file --------------------------------------------------------------

    def _start_saving(self) -> None:
        try:
            if self.spill is None:
                raise OSError("no spill directory for this call")
            self.file = self.spill.open()
        except OSError as exc:
            self._fail(exc)

    def _save(self, data: bytes) -> None:
        if self.file is None:
            return
        try:
            self.file.write(data)
            written = self.total
            if written >= self._next_space_check:
                self._next_space_check = written + FREE_SPACE_CHECK_EVERY
                self._check_space()
        except OSError as exc:
            self._fail(exc)

    def _check_space(self) -> None:
        assert self.file is not None
        info = os.fstatvfs(self.file.fileno())
        free = info.f_bavail * info.f_frsize
        if free < self.reserve:
            raise OSError(f"the disk is nearly full: {free // (1 << 20):,} MB left")

    def _fail(self, exc: OSError) -> None:
        self.error = exc.strerror or str(exc)
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass
            self.file = None
        if self.spill is not None:
            self.spill.discard()  # a part of the output on a full disk helps no one

    def _close(self) -> str | None:
        if self.file is None:
            return None
        try:
            self.file.close()
        except OSError as exc:
            self.file = None
            self._fail(exc)
            return None
        self.file = None
        return str(self.spill.path) if self.spill is not None and self.spill.path else None
