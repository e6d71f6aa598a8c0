"""The docs' screenshots are written again only when what they show changed beyond the
clock's part: real SVG exports of a small Textual app, compared as the script compares them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "scripts" / "screenshots.py"


def script() -> Any:
    spec = importlib.util.spec_from_file_location("docs_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Card(App[None]):
    """A line like a session's card, and a line drawn at the clock's scale below it."""

    def __init__(self, card: str, bars: str) -> None:
        super().__init__()
        self.card, self.bars = card, bars

    def compose(self) -> ComposeResult:
        yield Static(self.card, id="card")
        yield Static(self.bars, id="bars")


async def export(card: str, bars: str = "▁▁▁ read_file") -> str:
    app = Card(card, bars)
    async with app.run_test(size=(100, 4)):
        return app.export_screenshot()


def nothing_clocked(x: int, y: int) -> bool:
    return False


def second_row_clocked(x: int, y: int) -> bool:
    return y == 1


async def test_pictures_differing_only_in_timings_are_the_same() -> None:
    shots = script()
    old = await export("✔ read_file ok  172 ms · checkpoint f85e45e85242 at 12-01 19:11 · 6.1 s")
    new = await export("✔ read_file ok  95 ms · checkpoint 850389f4a928 at 12-01 18:37 · 12.0 s")
    assert old != new
    assert shots.unchanged(old, new, nothing_clocked)


async def test_a_change_beyond_the_timings_is_seen() -> None:
    """A word, a colour, a place."""
    shots = script()
    old = await export("✔ read_file ok  172 ms")
    assert not shots.unchanged(old, await export("✖ read_file error  172 ms"), nothing_clocked)
    assert not shots.unchanged(old, await export("[red]✔ read_file ok  172 ms[/]"), nothing_clocked)
    moved = await export("    ✔ read_file ok  172 ms")
    assert not shots.unchanged(old, moved, nothing_clocked)


async def test_the_clocked_cells_are_left_out_and_only_they() -> None:
    shots = script()
    old = await export("✔ read_file ok", "▁▁▁ read_file")
    new = await export("✔ read_file ok", "▁▁▁▁▁▁▁▁▁ read_file")
    assert not shots.unchanged(old, new, nothing_clocked)
    assert shots.unchanged(old, new, second_row_clocked)
