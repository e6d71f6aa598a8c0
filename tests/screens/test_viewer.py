"""The result viewer on real files: large ones, search, go to line, wrap, JSON, copy."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App

from tests.screens.test_main import wait_until
from workbench.app import WorkbenchApp
from workbench.screens.viewer import ViewerScreen
from workbench.widgets.file_view import FileView

LINES = 300_000  # ~12 MB: several index steps past the first chunk


class ViewerHost(App[None]):
    CSS_PATH = WorkbenchApp.CSS_PATH

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def on_mount(self) -> None:
        self.push_screen(ViewerScreen(self.path))


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
