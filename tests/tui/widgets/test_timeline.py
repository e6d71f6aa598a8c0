"""The timeline on screen: fast calls stay readable, every call has a bar, a turn is fitted."""

from __future__ import annotations

from rich.color import Color
from textual.app import App, ComposeResult

from tests.support.pilot import wait_until
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.tui.widgets.timeline import COLOURS, Timeline, TimelineModel, seconds_label, target

T0 = 500.0
FAST = [  # id, name, arguments, start, end (s), status
    ("r1", "read_file", {"path": "a.txt"}, 0.000, 0.005, "ok"),
    ("r2", "read_file", {"path": "src/b.txt"}, 0.000, 0.011, "ok"),
    ("t1", "terminal", {"command": "rm -rf build"}, 0.040, 0.041, "denied"),
]


class TimelineHost(App[None]):
    def __init__(self, model: TimelineModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        yield Timeline(self.model, id="timeline")


def fast_turn() -> TimelineModel:
    """Two parallel reads of 5 and 11 ms, a denied command, a call skipped before it started."""
    model = TimelineModel()
    model.new_turn()
    for call_id, name, args, start, _, _ in FAST:
        model.started(ToolCallStarted(call_id, name, args, 0, True, "", T0 + start))
        if call_id == "r2":
            break
    for call_id, name, args, start, end, status in FAST:
        if call_id == "t1":
            model.started(ToolCallStarted(call_id, name, args, 1, False, "", T0 + start))
        model.finished(ToolCallFinished(call_id, name, status, "", T0 + start, T0 + end))
    model.finished(ToolCallFinished("s1", "write_file", "skipped", "", None, T0 + 0.08))
    return model


def row(timeline: Timeline, y: int) -> tuple[str, list]:
    strip = timeline.render_line(y)
    return "".join(s.text for s in strip), list(strip)


def background(segments: list, column: int) -> Color | None:
    at = 0
    for segment in segments:
        if at <= column < at + len(segment.text):
            return segment.style.bgcolor if segment.style else None
        at += len(segment.text)
    return None


def bar_colours(segments: list) -> set[str]:
    return {s.style.bgcolor.name for s in segments if s.style and s.style.bgcolor}


async def test_fast_parallel_calls_show_their_names_and_targets_and_fit_the_width() -> None:
    app = TimelineHost(fast_turn())
    async with app.run_test(size=(46, 8)) as pilot:
        timeline = app.query_one(Timeline)
        await wait_until(pilot, lambda: timeline.size.width == 46)
        await pilot.pause()
        lanes = [row(timeline, y) for y in range(1, 1 + len(timeline.model.lanes))]
        texts = [text for text, _ in lanes]
        assert "read_file a.txt" in texts[0]
        assert "read_file src/b.txt" in texts[1]
        assert "terminal rm -rf build" in texts[0] + texts[1] + texts[2]
        assert "write_file" in "".join(texts)
        # fitted: the turn's 80 ms span most of the width, its last call's label too
        last = [c for c in range(46) if background(lanes[-1][1], c) is not None]
        assert last and 20 <= last[0] <= 46 - len("write_file"), texts
        assert background(lanes[0][1], 0) is not None  # the turn starts at the left edge
        axis = row(timeline, 0)[0]
        assert "ms" in axis and "0.25s" not in axis


async def test_every_call_has_a_bar_in_its_status_colour_denied_and_skipped_too() -> None:
    app = TimelineHost(fast_turn())
    async with app.run_test(size=(46, 8)) as pilot:
        timeline = app.query_one(Timeline)
        await wait_until(pilot, lambda: timeline.size.width == 46)
        await pilot.pause()
        colours = set()
        for y in range(1, 1 + len(timeline.model.lanes)):
            colours |= bar_colours(row(timeline, y)[1])
        assert {COLOURS["ok"], COLOURS["denied"], COLOURS["skipped"]} <= colours


async def test_a_call_right_after_a_one_cell_call_still_gets_its_own_cell() -> None:
    """At a coarse zoom a 1 ms call and the denied call 1 ms after it share a cell: both show."""
    model = TimelineModel()
    for n, status in enumerate(("ok", "denied", "error")):
        at = T0 + n * 0.001
        model.started(ToolCallStarted(f"c{n}", "read_file", {"path": "x"}, n, False, "", at))
        model.finished(ToolCallFinished(f"c{n}", "read_file", status, "", at, at + 0.0005))
    app = TimelineHost(model)
    async with app.run_test(size=(60, 6)) as pilot:
        timeline = app.query_one(Timeline)
        await pilot.press("minus", "minus", "minus", "minus")  # zoomed far out
        colours = set()
        for y in range(1, 1 + len(timeline.model.lanes)):
            colours |= bar_colours(row(timeline, y)[1])
        assert {COLOURS["ok"], COLOURS["denied"], COLOURS["error"]} <= colours


async def test_a_finished_turn_is_fitted_on_its_own_after_a_long_earlier_one() -> None:
    model = TimelineModel()
    model.started(ToolCallStarted("old", "terminal", {"command": "make"}, 0, False, "", T0))
    model.finished(ToolCallFinished("old", "terminal", "ok", "", T0, T0 + 30.0))
    model.new_turn()
    start = T0 + 100.0
    model.started(ToolCallStarted("new", "read_file", {"path": "a.txt"}, 0, False, "", start))
    model.finished(ToolCallFinished("new", "read_file", "ok", "", start, start + 0.004))
    app = TimelineHost(model)
    async with app.run_test(size=(60, 6)) as pilot:
        timeline = app.query_one(Timeline)
        await wait_until(pilot, lambda: timeline.size.width == 60)
        await pilot.pause()
        text, segments = row(timeline, 1)
        assert "read_file a.txt" in text
        assert len([c for c in range(60) if background(segments, c)]) >= 20


def test_targets_and_axis_labels() -> None:
    assert target({"path": "a.txt", "offset": 3}) == "a.txt"
    assert target({"command": "ls   -la\nrm x"}) == "ls -la rm x"
    assert target({"urls": ["https://a", "https://b"]}) == "https://a https://b"
    assert target({"other": "x" * 100}).endswith("…")
    assert target(None) == ""
    assert seconds_label(0.25, 0.01) == "0.25s"
    assert seconds_label(0.25, 0.005) == "250ms"
    assert seconds_label(0.0037, 0.0003) == "3.7ms"
    assert seconds_label(0.12, 0.002) == "120ms"


def test_fast_calls_snapshot(snap_compare) -> None:
    """Two reads of 5 and 11 ms, a denied command and a skipped call, in a 46-cell pane."""

    assert snap_compare(TimelineHost(fast_turn()), terminal_size=(46, 7))
