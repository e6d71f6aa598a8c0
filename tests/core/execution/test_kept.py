"""Every call is kept in its tool's history: the agent's and its sub-agents' (by the session),
calls by hand (by id), and a history that cannot be written never stops a call's events."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.checkpoints.events import CheckpointSkipped
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.core.execution.kept import CallKeeper, by_caller, watching
from workbench.core.history import CallHistory


def _started(call_id: str, args: dict | None) -> ToolCallStarted:
    return ToolCallStarted(call_id, "read_file", args, 0, False, "", 1.0)


def _finished(call_id: str, status: str = "ok") -> ToolCallFinished:
    return ToolCallFinished(call_id, "read_file", status, "1|alpha", 1.0, 1.25)


def test_a_call_is_kept_with_the_arguments_it_started_with() -> None:
    kept = []
    keeper = CallKeeper(kept.append)
    keeper(_started("form-1", {"path": "a.txt"}))
    keeper(_started("call_9", {"path": "b.txt"}))
    keeper(_finished("call_9", "error"))
    keeper(_finished("form-1"))
    agent, form = kept
    assert (agent.arguments, agent.status, agent.origin) == ({"path": "b.txt"}, "error", "agent")
    assert (form.arguments, form.origin, form.duration) == ({"path": "a.txt"}, "form", 0.25)
    assert form.preview == "1|alpha"


def test_a_failing_history_never_stops_the_events() -> None:
    def broken(call) -> None:
        raise RuntimeError("disk gone")

    passed: list[object] = []
    observe = watching(CallKeeper(broken), passed.append)
    observe(_started("c", {}))
    observe(_finished("c"))
    assert len(passed) == 2


async def test_the_agent_and_its_sub_agents_calls_are_kept(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(tools(("read_file", {"path": "a.txt"}), ("delegate_task", {"goal": "inspect b"})),
             text("done"))  # fmt: skip
    fake.route("inspect b", tools(("read_file", {"path": "b.txt"})), text("b holds beta"))
    session, _ = await make_session()
    finished = await session.turn("read a, and have b inspected")
    assert finished.reason == "answered"
    history = CallHistory(home / "state" / "history")
    reads = history.calls("read_file")
    assert sorted(c.arguments["path"] for c in reads) == ["a.txt", "b.txt"]
    assert {c.origin for c in reads} == {"agent"} and all(c.status == "ok" for c in reads)
    (delegated,) = history.calls("delegate_task")
    assert delegated.arguments == {"goal": "inspect b"}
    await session.close()


def test_an_executor_shared_by_hand_and_agent_sends_each_call_s_events_to_its_caller() -> None:
    hand: list[object] = []
    agent: list[object] = []
    route = by_caller(hand.append, agent.append)
    events = [
        _started("form-1", {}),
        _started("call_2", {}),
        _finished("call_2"),
        _finished("form-1"),
    ]
    skipped = CheckpointSkipped("/work", "checkpoints are off")
    for event in [*events, skipped]:
        route(event)
    assert hand == [events[0], events[3]]
    assert agent == [events[1], events[2], skipped]  # the rest to the agent, which passes it on
