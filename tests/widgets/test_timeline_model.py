"""Lane assignment and look-ups of the timeline model, without a screen."""

from __future__ import annotations

from workbench.core.executor import ToolCallFinished, ToolCallStarted
from workbench.widgets.timeline import TimelineModel


def run(model: TimelineModel, call_id: str, start: float, end: float, segment: int = 0) -> None:
    model.started(ToolCallStarted(call_id, "t", {}, segment, True, "", start))
    model.finished(ToolCallFinished(call_id, "t", "ok", "", start, end))


def test_overlapping_calls_take_separate_lanes_and_free_lanes_are_reused() -> None:
    model = TimelineModel()
    run(model, "a", 0.0, 1.0)
    model.started(ToolCallStarted("b", "t", {}, 0, True, "", 0.5))  # still running
    run(model, "c", 0.6, 0.9)
    run(model, "d", 1.5, 2.0, segment=1)  # after a finished: lane 0 again
    lanes = {bar.call_id: bar.lane for bar in model.bars}
    assert lanes == {"a": 0, "b": 1, "c": 2, "d": 0}
    assert model.running == 1


def test_visible_finds_only_the_bars_in_a_window() -> None:
    model = TimelineModel()
    for n in range(1000):
        run(model, f"c{n}", n * 1.0, n * 1.0 + 0.5)
    shown = [bar.call_id for bar in model.visible(0, 500.2, 502.0)]
    assert shown == ["c500", "c501", "c502"]


def test_a_call_that_never_started_still_gets_a_mark() -> None:
    model = TimelineModel()
    bar = model.finished(ToolCallFinished("x", "t", "skipped", "", None, 3.0))
    assert bar is not None and bar.status == "skipped" and bar.reason == "never started"
