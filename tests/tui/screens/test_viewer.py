"""The result viewer on real files: large ones, search, go to line, wrap, JSON, copy, and
the files it must not hang on (one huge line, a FIFO, a device, one cut short)."""

from __future__ import annotations

import json
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from tests.support.pilot import ViewerHost, wait_until
from workbench.tui.screens.viewer import ViewerScreen
from workbench.tui.widgets import file_view
from workbench.tui.widgets.file_view import FileView, NotViewable, cannot_view

LINES = 300_000  # ~12 MB: several index steps past the first chunk


def big_file(tmp_path: Path) -> Path:
    path = tmp_path / "big.log"
    with path.open("w") as out:
        for n in range(1, LINES + 1):
            marker = " NEEDLE" if n % 100_000 == 0 else ""
            out.write(f"line {n:07d} some ordinary output{marker}\n")
    return path


def shown(view: FileView, row: int) -> str:
    return "".join(segment.text for segment in view.render_line(row))


async def test_a_large_file_opens_searches_and_goes_to_a_line(tmp_path: Path) -> None:
    app = ViewerHost(big_file(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        assert "line 0000001" in shown(screen.view, 0)
        await wait_until(pilot, lambda: screen.view.index.complete)
        assert screen.view.index.count == LINES

        await pilot.press("slash", *"needle", "enter")
        await wait_until(pilot, lambda: screen.match_total == 3)
        assert screen.matches == [99_999, 199_999, 299_999]
        assert screen.view.cursor == 99_999
        await pilot.press("n")
        assert screen.view.cursor == 199_999
        await pilot.press("N", "N")
        assert screen.view.cursor == 299_999  # wraps around
        assert "3 matches" in str(screen.query_one("#viewer-title").render())

        await pilot.press("colon", *"250000", "enter")
        assert screen.view.cursor == 249_999
        rows = [shown(screen.view, y) for y in range(screen.view.size.height)]
        assert any("line 0250000" in row and row.lstrip().startswith("250000") for row in rows)


async def test_selected_lines_are_copied(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_text("alpha\nbeta\ngamma\n")
    app = ViewerHost(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        await pilot.press("down", "shift+down", "c")
        assert app.clipboard == "beta\ngamma"


async def test_compact_json_is_pretty_printed_and_j_shows_it_raw(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"items": [{"id": i, "name": f"n{i}"} for i in range(50)]}))
    app = ViewerHost(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.view.id == "viewer-pretty")
        assert screen.view.index.count > 200
        assert shown(screen.view, 1).rstrip().endswith('"items": [')
        await pilot.press("j")
        await wait_until(pilot, lambda: screen.view.id == "viewer-lines")
        assert screen.view.index.count == 1


async def test_wrap_shows_a_long_line_whole(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_text("start " + "x" * 500 + " end\nnext\n")
    app = ViewerHost(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        view = app.screen.view
        assert "end" not in shown(view, 0) and "next" in shown(view, 1)
        await pilot.press("w")
        rows = [shown(view, y) for y in range(6)]
        assert rows[0].lstrip().startswith("1 │ start")
        assert any(row.rstrip().endswith(" end") for row in rows)
        assert any("2 │ next" in row for row in rows)


def numbered_file(path: Path, lines: int) -> Path:
    """`line 0000001` ... fast: written in blocks of 100,000 lines."""
    with path.open("wb") as out:
        for first in range(1, lines + 1, 100_000):
            last = min(lines, first + 99_999)
            out.write(b"".join(b"line %07d\n" % n for n in range(first, last + 1)))
    return path


async def ask_line(pilot, screen: ViewerScreen, value: str) -> None:
    """`:` then the number and Enter (set at once: typing digit by digit lets the index run)."""
    await pilot.press("colon")
    screen.query_one("#viewer-input").value = value
    await pilot.press("enter")


async def test_go_to_a_line_not_indexed_yet_waits_for_it_and_can_be_cancelled(
    tmp_path: Path, monkeypatch
) -> None:
    """3,000,000 lines (39 MB); the index is held at 20 MB (about 1.6 million lines) until
    the test lets it go on, as a slow disk would: line 2,000,000 is asked for before."""
    gate, hold_at, extend = threading.Event(), 20 << 20, file_view.LineIndex.extend
    try:
        await _go_to_while_indexing(tmp_path, monkeypatch, gate, hold_at, extend)
    finally:
        gate.set()  # the index thread never waits past the test


async def _go_to_while_indexing(tmp_path, monkeypatch, gate, hold_at, extend) -> None:
    def held(index: file_view.LineIndex, end: int) -> None:
        if index.indexed >= hold_at:
            gate.wait(60)
        extend(index, end)

    monkeypatch.setattr(file_view, "INDEX_STEP", 1 << 20)
    monkeypatch.setattr(file_view.LineIndex, "extend", held)
    app = ViewerHost(numbered_file(tmp_path / "huge.log", 3_000_000))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        index = screen.view.index
        await wait_until(pilot, lambda: index.indexed >= hold_at)
        assert not index.complete and 1_000_000 < index.ended < 2_000_000

        await ask_line(pilot, screen, "2,000,000")
        assert screen.waiting_for == 1_999_999
        assert screen.view.cursor == 0  # never a line the index happens to have reached
        title = str(screen.query_one("#viewer-title").render())
        assert "going to line 2,000,000 once indexed" in title and "Esc cancels" in title

        await pilot.press("escape")
        assert screen.waiting_for is None and screen.view.cursor == 0
        assert any("Stopped waiting for line 2,000,000" in n.message for n in app._notifications)

        await ask_line(pilot, screen, "2000000")
        assert screen.waiting_for == 1_999_999
        gate.set()  # the index goes on: the viewer lands on the line asked for, not before
        await wait_until(pilot, lambda: screen.view.cursor == 1_999_999, timeout=60)
        assert screen.waiting_for is None
        rows = [shown(screen.view, y) for y in range(screen.view.size.height)]
        assert any(row.lstrip().startswith("2000000 │ line 2000000") for row in rows)

        await ask_line(pilot, screen, "5000000")  # past the end: said once the index knows
        await wait_until(pilot, lambda: screen.view.index.complete, timeout=60)
        await wait_until(pilot, lambda: screen.waiting_for is None)
        assert screen.view.cursor == 2_999_999
        assert any(
            "Line 5,000,000 is past the end: the file has 3,000,000 lines" in n.message
            for n in app._notifications
        )


async def test_a_line_past_the_end_of_an_indexed_file_is_said(tmp_path: Path) -> None:
    app = ViewerHost(numbered_file(tmp_path / "small.log", 10))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        await ask_line(pilot, screen, "11")
        assert screen.view.cursor == 9 and screen.waiting_for is None
        assert any("the file has 10 lines" in n.message for n in app._notifications)
        await ask_line(pilot, screen, "abc")
        assert any("'abc' is not a line number" in n.message for n in app._notifications)
        assert screen.view.cursor == 9


def one_line(path: Path, megabytes: int, tail: bytes) -> Path:
    """One line of `megabytes` MB and `tail`, no newline: a minified result, say."""
    block = b"abcdefghij0123456789 some minified text, " * 25_000  # ~1 MB
    with path.open("wb") as out:
        for _ in range(megabytes):
            out.write(block)
        out.write(tail)
    return path


async def test_one_huge_line_opens_cut_with_a_marker_searches_and_keeps_memory_small(
    tmp_path: Path,
) -> None:
    """48 MB on one line. The viewer used to decode the whole line for each row drawn (a
    500 MB line took 1.5 GB and froze the screen for minutes once wrapped); now what is
    read for it is a part, whatever the line's length."""
    path = one_line(tmp_path / "minified.json", 48, b" THE-END")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        app = ViewerHost(path)
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
            screen = app.screen
            view = screen.view
            await wait_until(pilot, lambda: view.index.complete)
            first = shown(view, 0)
            assert first.lstrip().startswith("1 │ abcdefghij0123456789")
            assert screen.view.index.count == 1
            await wait_until(pilot, lambda: view.max_scroll_x > file_view.PART // 2)
            view.scroll_to(x=view.max_scroll_x, animate=False, immediate=True)  # its end
            more = size - file_view.PART
            assert f"«line cut: {more:,} bytes more, ] shows them»" in shown(view, 0)

            await pilot.press("slash", *"the-end", "enter")
            await wait_until(pilot, lambda: screen.match_total == 1)
            row = shown(view, 0)  # the part around the match, said to follow what is before
            assert " bytes before: [ shows them»" in row and "THE-END" in row

            await pilot.press("left_square_bracket")  # the part before it
            before = size - len("THE-END") - 24 - file_view.PART
            row = shown(view, 0)
            assert f"«{before:,} bytes before: [ shows them»" in row and "THE-END" not in row
            await pilot.press("w")  # wrapped, a screenful of the line at a time
            rows = [shown(view, y) for y in range(view.size.height)]
            assert rows[0].lstrip().startswith("1 │ «") and "line cut:" in rows[-1]
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20  # a read block or two, never the 48 MB line


async def test_one_huge_line_shows_before_the_index_reaches_its_end(
    tmp_path: Path, monkeypatch
) -> None:
    """The line's end is known only once the whole file is read: its start is drawn at
    once, its marker saying that more is still being read ("+")."""
    gate, extend = threading.Event(), file_view.LineIndex.extend

    def held(index: file_view.LineIndex, end: int) -> None:
        if index.indexed >= 2 << 20:
            gate.wait(60)
        extend(index, end)

    monkeypatch.setattr(file_view, "INDEX_STEP", 1 << 20)
    monkeypatch.setattr(file_view.LineIndex, "extend", held)
    path = one_line(tmp_path / "minified.json", 8, b"")
    try:
        app = ViewerHost(path)
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
            view = app.screen.view
            await wait_until(pilot, lambda: view.index.indexed >= 2 << 20)
            assert shown(view, 0).lstrip().startswith("1 │ abcdefghij0123456789")
            await wait_until(pilot, lambda: view.max_scroll_x > file_view.PART // 2)
            view.scroll_to(x=view.max_scroll_x, animate=False, immediate=True)
            so_far = view.index.indexed - file_view.PART
            assert f"«line cut: {so_far:,}+ bytes more, ] shows them»" in shown(view, 0)
            gate.set()
            await wait_until(pilot, lambda: view.index.complete)
            more = path.stat().st_size - file_view.PART
            await wait_until(pilot, lambda: f"«line cut: {more:,} bytes more" in shown(view, 0))
    finally:
        gate.set()


async def test_a_fifo_or_a_device_is_refused_at_once_with_the_reason(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it to read would wait for a writer: forever
    with pytest.raises(NotViewable, match=r"is a FIFO \(a pipe\), not a regular file"):
        ViewerScreen(fifo)
    with pytest.raises(NotViewable, match="/dev/zero is a device, not a regular file"):
        ViewerScreen(Path("/dev/zero"))  # never ends
    assert "is a directory" in cannot_view(tmp_path)
    assert cannot_view(tmp_path / "gone") == f"no such file: {tmp_path / 'gone'}"
    assert cannot_view(fifo).startswith(f"{fifo} is a FIFO")


async def test_a_file_deleted_while_open_stays_shown_raw_and_pretty(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"items": list(range(100))}))
    app = ViewerHost(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.view.id == "viewer-pretty")
        path.unlink()
        await pilot.press("j")  # the raw text again: it used to reopen the path, now gone
        await wait_until(pilot, lambda: screen.view.id == "viewer-lines")
        assert shown(screen.view, 0).lstrip().startswith('1 │ {"items": [0, 1, 2')


async def test_a_file_cut_short_while_open_is_read_again_as_it_is_now(tmp_path: Path) -> None:
    """A mapped file cut short kills the process (SIGBUS) when a page past its new end is
    touched; read by position, the lines gone read empty, and at the next look the file is
    read again from its start: ten lines, the cursor on the last."""
    path = numbered_file(tmp_path / "log", 300_000)  # 3.3 MB: past the first chunk
    app = ViewerHost(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        await ask_line(pilot, screen, "50000")
        await wait_until(pilot, lambda: screen.view.cursor == 49_999)
        os.truncate(path, 13 * 10)  # ten lines left
        screen.view._texts.clear()  # drawn again before the next look: the lines gone
        rows = [shown(screen.view, y) for y in range(screen.view.size.height)]
        assert any(row.lstrip().startswith("50000 │ ") for row in rows)
        assert not any("line" in row for row in rows)
        await wait_until(pilot, lambda: screen.view.index.count == 10)
        assert screen.view.cursor == 9 and screen.view.index.complete
        await pilot.press("g")
        assert shown(screen.view, 0).lstrip().startswith("1 │ line 0000001")
        await ask_line(pilot, screen, "50000")
        assert screen.view.cursor == 9  # past the end now: said, and the last line shown


async def test_a_file_written_to_while_open_is_read_on_as_it_grows(tmp_path: Path) -> None:
    path = numbered_file(tmp_path / "growing.log", 10)
    app = ViewerHost(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        view = app.screen.view
        assert view.index.complete and view.index.count == 10
        with path.open("ab") as out:
            out.write(b"line 0000011\nhalf a li")
        await wait_until(pilot, lambda: view.index.count == 12)
        assert shown(view, 10).lstrip().startswith("11 │ line 0000011")
        assert shown(view, 11).lstrip().startswith("12 │ half a li")
        with path.open("ab") as out:
            out.write(b"ne, ended\n")
        await wait_until(pilot, lambda: "half a line, ended" in shown(view, 11))
        assert view.index.count == 12
        await wait_until(
            pilot, lambda: "12 lines" in str(app.screen.query_one("#viewer-title").render())
        )


async def test_a_file_cut_short_and_written_again_while_open_is_read_again(
    tmp_path: Path,
) -> None:
    """A log emptied in place (logrotate's copytruncate, `> log`) and written past its old
    size between two looks: read on from the old end, its lines split where the old ones
    did and the new ones before it were never counted. It is read again from its start, and
    a search made before is made again on what it holds now."""
    path = tmp_path / "rotated.log"
    path.write_bytes(b"".join(b"old %d\n" % n for n in range(40)))
    app = ViewerHost(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        screen = app.screen
        await pilot.press("slash", *"old 3", "enter")
        await wait_until(pilot, lambda: screen.match_total == 11)
        fresh = b"".join(b"fresh line %03d\n" % n for n in range(60))  # longer than before
        with path.open("r+b") as out:
            out.truncate(0)
            out.write(fresh)
        await wait_until(pilot, lambda: screen.view.index.count == 60)
        assert [screen.view.index.line(n) for n in range(60)] == fresh.decode().splitlines()
        await wait_until(pilot, lambda: screen.match_total == 0 and "no match" in title(screen))
        assert "60 lines" in title(screen)
        os.truncate(path, 15 * 10)  # cut short again, and left so: ten lines
        await wait_until(pilot, lambda: screen.view.index.count == 10)
        assert shown(screen.view, 9).lstrip().startswith("10 │ fresh line 009")


def title(screen: ViewerScreen) -> str:
    return str(screen.query_one("#viewer-title").render())
