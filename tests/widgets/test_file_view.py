"""The viewer's line index and search, on buffers of known shape."""

from __future__ import annotations

from workbench.widgets.file_view import LineIndex, find_lines


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
    assert find_lines(index, "error") == ([0, 2], 3)
    assert find_lines(index, "a.b") == ([], 0)  # the needle is literal, not a pattern
