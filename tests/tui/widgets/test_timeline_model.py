"""Lane assignment and look-ups of the timeline model, without a screen."""

from __future__ import annotations

from dataclasses import replace

from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.tui.widgets.timeline import TimelineModel


def run(model: TimelineModel, call_id: str, start: float, end: float, segment: int = 0) -> None:
    model.started(ToolCallStarted(call_id, "t", {}, segment, True, "", start))
    model.finished(ToolCallFinished(call_id, "t", "ok", "", start, end))


def test_overlapping_calls_take_separate_lanes_and_free_lanes_are_reused() -> None:
    model = TimelineModel()
    run(model, "a", 0.0, 1.0)
    model.started(ToolCallStarted("b", "t", {}, 0, True, "", 0.5))  # still running
    run(model, "c", 0.6, 0.9)
    run(model, "d", 1.5, 2.0, segment=1)  # after a finished for a while: lane 0 again
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


def child(model: TimelineModel, call_id: str, label: str, parent: str, start: float) -> None:
    model.started(ToolCallStarted(call_id, "t", {}, 0, True, "", start, label, parent))


def test_a_sub_agents_calls_sit_in_a_lane_group_under_the_call_that_started_it() -> None:
    model = TimelineModel()
    model.started(ToolCallStarted("d1", "delegate_task", {}, 0, True, "", 0.0))
    model.started(ToolCallStarted("d2", "delegate_task", {}, 0, True, "", 0.0))
    child(model, "a1", "sub-agent 1", "d1", 0.1)
    child(model, "b1", "sub-agent 2", "d2", 0.1)
    child(model, "a2", "sub-agent 1", "d1", 0.2)  # beside a1, which still runs
    run(model, "m", 0.3, 0.4)  # the main agent's own call: never in a sub-agent's lanes
    lanes = {bar.call_id: bar.lane for bar in model.bars}
    assert lanes["d1"] == 0 and lanes["a1"] == 1 and lanes["a2"] == 2  # sub-agent 1's group
    assert lanes["d2"] == 3 and lanes["b1"] == 4  # under d2, after sub-agent 1's group
    assert model.owners == ["", "sub-agent 1", "sub-agent 1", "", "sub-agent 2", ""]
    assert lanes["m"] == 5
    assert all(bar in model.lanes[bar.lane] for bar in model.bars)  # indices moved with lanes


def test_a_sub_agents_call_that_never_started_still_sits_under_its_parent() -> None:
    model = TimelineModel()
    model.started(ToolCallStarted("d1", "delegate_task", {}, 0, True, "", 0.0))
    model.started(ToolCallStarted("d2", "delegate_task", {}, 0, True, "", 0.0))
    skipped = ToolCallFinished("s", "t", "skipped", "", None, 0.5, label="sub-agent 1", parent="d1")
    bar = model.finished(skipped)
    assert bar is not None and bar.lane == 1 and model.by_id["d2"].lane == 2


def test_quick_calls_in_a_row_spread_over_lanes_so_their_labels_show() -> None:
    model = TimelineModel()
    for n in range(8):  # one after the other, 10 ms apart
        run(model, f"q{n}", n * 0.01, n * 0.01 + 0.005, segment=n)
    lanes = [bar.lane for bar in model.bars]
    assert lanes[:6] == [0, 1, 2, 3, 4, 5]  # each its own lane, up to six
    assert lanes[6:] == [0, 1]  # then the lanes free the longest
    run(model, "later", 5.0, 5.1, segment=9)  # after a pause: the first lane again
    assert model.by_id["later"].lane == 0


def test_a_deferred_tools_call_reads_as_made_through_its_bridge_call() -> None:
    model = TimelineModel()
    run(model, "a", 0.0, 1.05)  # lane 0, busy when the bridge call starts
    run(model, "b", 0.0, 0.01)  # lanes 1 and 2, long free
    run(model, "c", 0.0, 0.01)
    wrapped = {"calls": [{"name": "search_files", "arguments": {"pattern": "alpha"}}]}
    model.started(ToolCallStarted("t", "tool_call", wrapped, 0, False, "", 1.0))
    inner = ToolCallStarted("t.0", "search_files", {"pattern": "alpha"}, 0, False, "", 2.0)
    model.started(replace(inner, via="t"))  # after an approval: lane 0 is long free too
    *_, bridge, call = model.bars
    assert bridge.title == "tool_call → search_files"
    assert (call.title, call.via) == ("↳ search_files alpha", "t")
    assert (bridge.lane, call.lane) == (1, 2)  # right under its bridge call


def test_a_call_waiting_for_a_person_says_so_until_its_answer_or_its_end() -> None:
    model = TimelineModel()
    model.wait("a", "waiting for approval")  # the ask may be told before the call's bar
    model.started(ToolCallStarted("a", "terminal", {"command": "rm x"}, 0, False, "", 0.0))
    (bar,) = model.bars
    assert bar.waiting == "waiting for approval"
    assert bar.title == "terminal rm x [waiting for approval]"
    model.wait("a", "")  # answered
    assert bar.title == "terminal rm x" and model.waiting == {}
    model.wait("a", "waiting for approval")  # asked again (to leave the sandbox), then it ends
    model.finished(ToolCallFinished("a", "terminal", "denied", "", 0.0, 1.0))
    assert bar.waiting == "" and model.waiting == {}
