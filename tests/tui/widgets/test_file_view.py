"""The viewer's line index and search, on buffers of known shape."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from workbench.tui.widgets import file_view
from workbench.tui.widgets.file_view import (
    FileBytes,
    LineIndex,
    MemoryBytes,
    NotViewable,
    cannot_view,
    find_lines,
)


def indexed(data: bytes, step: int = 7) -> LineIndex:
    index = LineIndex(data)
    while not index.complete:  # in small steps, as the worker does in large ones
        index.extend(min(index.size, index.indexed + step))
    return index


def test_line_counts_with_and_without_a_final_newline_and_when_empty() -> None:
    assert indexed(b"a\nbb\nccc\n").count == 3
    index = indexed(b"a\nbb\nccc")
    assert index.count == 3 and index.line(2) == "ccc"
    assert indexed(b"").count == 1 and indexed(b"").line(0) == ""


def test_lines_decode_safely_and_offsets_map_back_to_lines() -> None:
    index = indexed("one\r\ntwo \xe9\n".encode() + b"\xff bad\n")
    assert [index.line(n) for n in range(3)] == ["one", "two \xe9", "\ufffd bad"]
    assert index.line_of(0) == 0 and index.line_of(6) == 1 and index.line_of(12) == 2


def test_find_lines_is_case_insensitive_and_counts_every_match() -> None:
    index = indexed(b"Error here\nfine\nerror, ERROR again\n")
    assert find_lines(index, "error") == ([0, 2], [0, 0], 3)
    assert find_lines(index, "a.b") == ([], [], 0)  # the needle is literal, not a pattern


def test_the_sparse_index_finds_every_line_whatever_the_steps(monkeypatch) -> None:
    """Marks every 3 lines or 10 bytes, split 5 bytes at a time: every path through the
    index (a mark in a block, across blocks, a line longer than a mark) against split()."""
    monkeypatch.setattr(file_view, "MARK_LINES", 3)
    monkeypatch.setattr(file_view, "MARK_BYTES", 10)
    monkeypatch.setattr(file_view, "SCAN_BLOCK", 5)
    data = b"a\n\nbb\r\n" + b"x" * 40 + b"\nccc\n" * 7 + "d\xe9\n".encode() + b"\n" * 9 + b"end"
    expected = data.decode().split("\n")
    for step in (1, 4, 7, 64, len(data)):
        index = indexed(data, step)
        assert index.count == len(expected)
        assert [index.line(n) for n in range(index.count)] == [e.rstrip("\r") for e in expected]
        starts = [0] + [n + 1 for n, byte in enumerate(data) if byte == 10]
        assert [index.line_of(offset) for offset in starts] == list(range(len(starts)))
        assert len(index.marks) < len(starts)  # sparse


def test_the_index_keeps_a_mark_per_few_hundred_lines_not_one_a_line() -> None:
    data = b"short\n" * 100_000
    index = indexed(data, 1 << 20)
    assert index.count == 100_000 and index.line(99_999) == "short"
    assert len(index.marks) <= 100_000 // file_view.MARK_LINES + 1


def test_a_long_line_is_read_a_part_at_a_time_cut_between_characters() -> None:
    line = "é" * 10 + "z" * 5  # 25 bytes
    index = indexed((line + "\nnext\n").encode())
    text, before, after = index.text(0, 0, 6)
    assert (text, before, after) == ("ééé", 0, 19)
    text, before, after = index.text(0, 5, 6)  # from the middle of the third é: its start
    assert (text, before, after) == ("ééé", 4, 15)
    parts, skip = [], 0
    while True:
        text, before, after = index.text(0, skip, 7)
        parts.append(text)
        if not after:
            break
        skip = 25 - after
    assert "".join(parts) == line and all(len(p.encode()) <= 7 for p in parts)
    assert index.text(1) == ("next", 0, 0)


def test_search_reads_block_by_block_and_finds_a_match_across_two(monkeypatch) -> None:
    monkeypatch.setattr(file_view, "READ_BLOCK", 8)
    index = indexed(b"0123456NEEDLE and needle\nnone\nxx NeEdLe\n")
    assert find_lines(index, "needle") == ([0, 2], [7, 3], 3)
    assert find_lines(index, "needle", cancelled=lambda: True) == ([], [], 0)


def test_lines_drawn_while_the_worker_is_inside_a_step_stay_right_after_it(monkeypatch) -> None:
    """The worker counts lines and sets marks block by block, and says how far it has read
    only at the end of a step: lines drawn from the screen's thread in between must read
    right, and leave no wrong line start in the index's cache for later."""
    monkeypatch.setattr(file_view, "MARK_LINES", 3)
    monkeypatch.setattr(file_view, "READ_BLOCK", 64)
    data = b"".join(b"line %d\n" % n for n in range(60))
    worker_inside, go_on = threading.Event(), threading.Event()

    class Held(MemoryBytes):
        def read(self, start: int, end: int) -> bytes:
            if threading.current_thread() is worker and start >= 64:
                worker_inside.set()  # one block scanned, `indexed` not moved yet
                go_on.wait(30)
            return super().read(start, end)

    index = LineIndex(Held(data))
    worker = threading.Thread(target=index.extend, args=(index.size,))
    worker.start()
    try:
        assert worker_inside.wait(30)
        seen = index.newlines
        assert seen > 2 * file_view.MARK_LINES and index.indexed == 0
        assert [index.line(n) for n in range(seen)] == [f"line {n}" for n in range(seen)]
    finally:
        go_on.set()
        worker.join(30)
    assert index.complete
    assert [index.line(n) for n in range(60)] == [f"line {n}" for n in range(60)]


def test_what_is_not_a_regular_file_is_refused_without_being_opened(tmp_path: Path) -> None:
    """Opening a device or a FIFO does something (a FIFO's waiting writer is let through and
    then meets a closed pipe; a watchdog device starts its countdown): what its stat says is
    not a regular file is refused before any open. A writer trying all along finds no reader."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    stop, met = threading.Event(), []

    def writer() -> None:  # opening to write without waiting fails until someone reads
        while not stop.is_set():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                met.append(True)
            except OSError:
                pass

    trying = threading.Thread(target=writer)
    trying.start()
    try:
        for _ in range(200):
            assert cannot_view(fifo).startswith(f"{fifo} is a FIFO")
            with pytest.raises(NotViewable):
                FileBytes(fifo)
    finally:
        stop.set()
        trying.join(30)
    assert met == []


def test_a_search_over_a_file_growing_meanwhile_gives_no_line_it_cannot_number(
    tmp_path: Path,
) -> None:
    """The view reads on as a file grows (its size first, the lines after, in the worker): a
    search meanwhile reports the lines indexed, never a match past them under another line's
    number."""
    path = tmp_path / "growing.log"
    path.write_bytes(b"one\ntwo\n")
    index = LineIndex(FileBytes(path))
    index.extend(index.size)
    with path.open("ab") as out:
        out.write(b"three\n" * 100 + b"needle here\n")
    assert index.source.look() == "grown"
    index.size = len(index.source)  # as the view does, before its worker indexes on
    assert find_lines(index, "needle") == ([], [], 0)
    assert find_lines(index, "two") == ([1], [0], 1)
    index.extend(index.size)
    assert find_lines(index, "needle") == ([102], [0], 1)
