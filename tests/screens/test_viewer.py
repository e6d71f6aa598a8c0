"""The result viewer on real files: large ones, search, go to line, wrap, JSON, copy."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.support.pilot import ViewerHost, wait_until
from workbench.screens.viewer import ViewerScreen
from workbench.widgets import file_view
from workbench.widgets.file_view import FileView

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
        await wait_until(pilot, lambda: screen.view.index.complete, timeout=20)
        assert screen.view.index.count == LINES

        await pilot.press("slash", *"needle", "enter")
        await wait_until(pilot, lambda: screen.match_total == 3, timeout=20)
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
        await wait_until(pilot, lambda: index.indexed >= hold_at, timeout=30)
        assert not index.complete and 1_000_000 < len(index.offsets) < 2_000_000

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
