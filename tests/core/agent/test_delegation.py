"""delegate_task against the scripted OpenAI-protocol server: sub-agents that run at once,
call tools (one needing approval), fail, are cancelled with their parent, and stop at the
depth limit."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, error, text, tools
from tests.support.tools import schema
from tests.support.waiting import PATIENCE, seen, until
from workbench.core.agent import transcript
from workbench.core.agent.delegation import Delegation, Limits, SubagentFinished, SubagentStarted
from workbench.core.commands import set_toolset
from workbench.core.config import load_config
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.core.runtime import load_runtime


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def results(fake: FakeOpenAI) -> list[dict]:
    return [json.loads(m["content"]) for m in tool_messages(fake.requests[-1])]


async def test_two_delegated_tasks_run_at_once_and_answer_their_parent(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(
        tools(("delegate_task", {"goal": "inspect alpha"}), ("delegate_task", {"goal": "inspect beta"})),
        text("alpha and beta are done"),
    )  # fmt: skip
    fake.route("inspect alpha", tools(("read_file", {"path": "a.txt"})),
               text("alpha holds one line", chunks=5, delay=0.1))  # fmt: skip
    fake.route("inspect beta", text("beta is fine", chunks=5, delay=0.1))
    session, events = await make_session()
    finished = await session.turn("look at both files")
    assert finished.reason == "answered" and finished.text == "alpha and beta are done"

    answers = sorted(r["answer"] for r in results(fake))
    assert answers == ["alpha holds one line", "beta is fine"]
    started = [e for e in events if isinstance(e, SubagentStarted)]
    done = [e for e in events if isinstance(e, SubagentFinished)]
    assert len(started) == 2 and {e.reason for e in done} == {"answered"}
    first_done = events.index(done[0])
    assert all(events.index(e) < first_done for e in started)  # both ran at once

    subagent_calls = [e for e in events if isinstance(e, ToolCallStarted) and e.label]
    delegate_ids = {
        e.call_id for e in events if isinstance(e, ToolCallStarted) and e.name == "delegate_task"
    }
    (read,) = subagent_calls
    assert read.name == "read_file" and read.parent in delegate_ids
    assert read.label.startswith("sub-agent ")
    parent_kinds = [
        r for r in transcript.read(session.transcript.path) if r["kind"] == "tool_started"
    ]
    assert {r["name"] for r in parent_kinds} == {"delegate_task", "read_file"}

    subagent_files = sorted((transcript.sessions_dir(home) / session.id).glob("*.jsonl"))
    assert len(subagent_files) == 2
    subagent_roles = [
        [m["role"] for m in transcript.messages(transcript.read(path))] for path in subagent_files
    ]
    assert ["user", "assistant", "tool", "assistant"] in subagent_roles
    await session.close()


async def test_a_subagents_destructive_command_asks_the_user_under_its_name(
    make_session,
    fake: FakeOpenAI,
    workdir: Path,
) -> None:
    fake.add(tools(("delegate_task", {"goal": "clean up a"})), text("the sub-agent was refused"))
    fake.route(
        "clean up a", tools(("terminal", {"command": "rm *.txt"})), text("I could not delete a")
    )
    asked = []
    broker = ApprovalBroker()
    broker.attach(lambda request: (asked.append(request), broker.answer(request.id, "d")))
    session, events = await make_session(broker=broker)
    await session.turn("tidy up")
    (request,) = asked
    assert request.command == "rm *.txt" and request.label.startswith("sub-agent ")
    assert (workdir / "a.txt").exists()
    denied = [e for e in events if isinstance(e, ToolCallFinished) and e.name == "terminal"]
    assert denied[0].status == "denied" and denied[0].label == request.label
    assert results(fake)[0]["answer"] == "I could not delete a"
    await session.close()


async def test_a_failing_subagent_is_a_clear_error_for_its_parent(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(("delegate_task", {"goal": "doomed work"})), text("the sub-agent failed"))
    fake.route("doomed work", *[error(500, "model exploded")] * 3)
    session, _ = await make_session()
    finished = await session.turn("try it")
    assert finished.reason == "answered"
    (result,) = results(fake)
    assert "sub-agent" in result["error"] and "failed" in result["error"]
    assert "500" in result["error"]
    await session.close()


async def test_cancelling_the_parent_cancels_its_running_subagent(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(tools(("delegate_task", {"goal": "long story"})))
    # the sub-agent's answer is held until the test is done: it runs as long as it must (a
    # timed stream could end first on a busy machine)
    answer = threading.Event()
    fake.route("long story", text("never sent", hold=answer))
    session, events = await make_session()
    task = asyncio.create_task(session.turn("go"))
    try:
        await until(seen(events, SubagentStarted))
        await until(lambda: len(fake.requests) == 2, what="the sub-agent asks the model")
        session.cancel()
        finished = await asyncio.wait_for(task, PATIENCE)
    finally:
        answer.set()
    assert finished.reason == "cancelled"
    assert [e.reason for e in events if isinstance(e, SubagentFinished)] == ["cancelled"]
    (subagent,) = (transcript.sessions_dir(home) / session.id).glob("*.jsonl")
    ends = [r["reason"] for r in transcript.read(subagent) if r["kind"] == "turn_finished"]
    assert ends == ["cancelled"]
    await session.close()


async def test_subagents_get_no_delegate_task_at_the_default_depth_limit(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(("delegate_task", {"goal": "nested", "toolsets": ["file"]})), text("ok"))
    fake.route("nested", tools(("delegate_task", {"goal": "deeper"})), text("I could not nest"))
    session, _ = await make_session()
    await session.turn("nest")
    parent_first, subagent_first, subagent_second = (
        fake.requests[0],
        fake.requests[1],
        fake.requests[2],
    )
    assert "delegate_task" in offered(parent_first)
    assert "delegate_task" not in offered(subagent_first)  # depth limit 2:  may not
    assert offered(subagent_first) - {"todo", "session_search", "memory"} <= {
        "read_file", "write_file", "patch", "search_files"
    }  # fmt: skip
    assert "clarify" not in offered(subagent_first)  # nobody can answer a sub-agent's question
    refused = tool_messages(subagent_second)[0]["content"]
    assert "does not exist" in refused  # the call it was not offered did not run
    await session.close()


async def test_a_subagent_has_the_agents_own_tools_whose_toolsets_are_on(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [todo]\n")
    fake.add(tools(("delegate_task", {"goal": "inspect", "toolsets": ["file"]})), text("ok"))
    fake.route("inspect", text("seen"))
    session, _ = await make_session()
    await session.turn("look")
    parent, subagent = fake.requests[0], fake.requests[1]
    assert "todo" not in offered(parent) and "todo" not in offered(subagent)
    assert "session_search" in offered(subagent)  # its own, on: whatever toolsets it asked
    await session.close()


async def test_the_schema_states_the_limits_from_config(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(text("one"), text("two"))
    session, _ = await make_session()
    await session.turn("hi")
    (home / "config.yaml").write_text("delegation:\n  max_concurrent: 5\n  max_depth: 3\n")
    session.runtime.reload_config()
    await session.turn("again")
    before, after = (
        next(t["function"]["description"] for t in r["tools"] if t["function"]["name"] == "delegate_task")
        for r in fake.requests
    )  # fmt: skip
    assert "at most 3 run at a time" in before and "sub-agents cannot delegate" in before
    assert "at most 5 run at a time" in after and "sub-agents may delegate" in after
    await session.close()


@pytest.mark.parametrize("toolsets", [["terminal"], ["file", "terminal"]])
async def test_a_subagent_cannot_get_toolsets_its_parent_lacks(
    make_session, fake: FakeOpenAI, home: Path, toolsets
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "platform_toolsets:\n  cli: [file, delegation]\n"
    )  # no terminal
    fake.add(tools(("delegate_task", {"goal": "browse", "toolsets": toolsets})), text("no"))
    session, _ = await make_session()
    await session.turn("browse")
    (result,) = results(fake)
    assert "error" in result and len(fake.requests) == 2  # no  conversation started
    assert "terminal" not in offered(fake.requests[0])  # a toolset the parent lacks
    await session.close()


async def test_a_subagent_that_runs_too_long_is_stopped_with_a_clear_error(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("delegation:\n  timeout: 0.5\n")
    fake.add(tools(("delegate_task", {"goal": "slow work"})), text("it timed out"))
    fake.route("slow work", text("word " * 200, chunks=200, delay=0.02))
    session, events = await make_session()
    finished = await session.turn("go")
    assert finished.reason == "answered"
    (result,) = results(fake)
    assert result["status"] == "timeout" and "within 0.5 s" in result["error"]
    assert "did not finish within" in result["error"]
    assert [e.reason for e in events if isinstance(e, SubagentFinished)] == ["timeout"]
    (subagent,) = (transcript.sessions_dir(home) / session.id).glob("*.jsonl")
    assert [r["reason"] for r in transcript.read(subagent) if r["kind"] == "turn_finished"] == [
        "cancelled"
    ]
    await session.close()


async def test_a_resumed_session_names_new_sub_agents_after_its_old_ones(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(tools(("delegate_task", {"goal": "first job"})), text("done"))
    fake.route("first job", text("first"))
    session, _ = await make_session()
    await session.turn("one")
    await session.close()
    fake.add(tools(("delegate_task", {"goal": "second job"})), text("done again"))
    fake.route("second job", text("second"))
    resumed, _ = await make_session(resume=session.id)
    await resumed.turn("two")
    await resumed.close()
    subagents = sorted(p.name for p in (transcript.sessions_dir(home) / session.id).iterdir())
    assert subagents == ["sub-agent-1.jsonl", "sub-agent-2.jsonl"]
    second = transcript.read(transcript.sessions_dir(home) / session.id / "sub-agent-2.jsonl")
    assert second[0]["goal"] == "second job"


async def test_a_toolset_switched_off_while_a_subagent_works_is_no_longer_offered_to_it(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    runtime = load_runtime(home)

    def switch_file_off(args, **kw) -> str:  # the user unticks `file` as the sub-agent works
        set_toolset(runtime, "file", False)
        return "{}"

    runtime.registry.register("switch_file_off", "testing", schema("switch"), switch_file_off)
    fake.add(tools(("delegate_task", {"goal": "switch then read"})), text("done"))
    fake.route(
        "switch then read",
        tools(("switch_file_off", {})),
        tools(("read_file", {"path": "a.txt"})),
        text("I could not read it"),
    )
    session, events = await make_session(runtime=runtime)
    await session.turn("go")
    mine = [r for r in fake.requests if "switch then read" in str(r["messages"][0]["content"])]
    first, second, third = mine  # the sub-agent's three requests
    assert "read_file" in offered(first)
    assert "read_file" not in offered(second) and "switch_file_off" in offered(second)
    assert "does not exist" in tool_messages(third)[-1]["content"]  # and it did not run
    assert not [e for e in events if isinstance(e, ToolCallFinished) and e.status == "ok"
                and e.name == "read_file"]  # fmt: skip
    await session.close()


async def test_a_script_a_subagent_wrote_asks_when_its_parent_runs_it(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # the sub-agent's executor kept its own list of written files: the parent ran it unasked
    (workdir / "data").mkdir()
    script = {"path": "cleanup.sh", "content": "rm -rf data\n"}
    fake.add(
        tools(("delegate_task", {"goal": "write the script"})),
        tools(("terminal", {"command": "bash cleanup.sh"})),
        text("done"),
    )
    fake.route("write the script", tools(("write_file", script)), text("written"))
    asked = []
    broker = ApprovalBroker()
    broker.attach(lambda request: (asked.append(request.reason), broker.answer(request.id, "d")))
    session, _ = await make_session(broker=broker)
    await session.turn("clean up")
    assert (workdir / "cleanup.sh").exists() and (workdir / "data").is_dir()
    assert any("cleanup.sh, which was written" in reason for reason in asked), asked
    await session.close()


async def test_max_spawn_depth_lets_a_subagent_delegate_once_more_and_wins_over_max_depth(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    # Hermes's key (agents at depth 0 and 1 may delegate) wins over our alias (none may)
    (home / "config.yaml").write_text("delegation:\n  max_spawn_depth: 2\n  max_depth: 1\n")
    fake.add(tools(("delegate_task", {"goal": "middle"})), text("top done"))
    fake.route("middle", tools(("delegate_task", {"goal": "leaf"})), text("middle done"))
    fake.route("leaf", text("leaf done"))
    session, events = await make_session()
    finished = await session.turn("nest twice")
    assert finished.text == "top done"
    top, middle, leaf = fake.requests[0], fake.requests[1], fake.requests[2]
    assert "delegate_task" in offered(top) and "delegate_task" in offered(middle)
    assert "delegate_task" not in offered(leaf)  # depth 2: the leaf floor
    started = [e.goal for e in events if isinstance(e, SubagentStarted)]
    assert started == ["middle", "leaf"]
    (answer,) = results(fake)
    assert answer["answer"] == "middle done"
    await session.close()


async def test_a_call_past_the_spawn_depth_is_refused_saying_which_key_to_raise() -> None:
    limits = Limits.from_config(lambda key: {"delegation.max_spawn_depth": 1}.get(key))
    spawned: list[object] = []
    grandchild = Delegation(
        depth=1,
        limits=lambda: limits,
        offered=lambda: ["read_file"],
        toolset_of=lambda name: "file",
        spawn=spawned.append,  # type: ignore[arg-type]
        emit=lambda event: None,
        counter=[0],
    )
    result = json.loads(await grandchild({"goal": "deeper"}))
    assert (
        "Delegation depth limit reached (depth 1, delegation.max_spawn_depth 1)" in result["error"]
    )
    assert spawned == []


async def test_max_concurrent_children_bounds_the_subagents_running_at_once(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "delegation:\n  max_concurrent_children: 1\n  max_concurrent: 5\n"
    )
    fake.add(
        tools(("delegate_task", {"goal": "inspect alpha"}), ("delegate_task", {"goal": "inspect beta"})),
        text("both done"),
    )  # fmt: skip
    fake.route("inspect alpha", text("alpha ok", chunks=5, delay=0.05))
    fake.route("inspect beta", text("beta ok", chunks=5, delay=0.05))
    session, events = await make_session()
    finished = await session.turn("look at both")
    assert finished.text == "both done"
    kinds = [type(e).__name__ for e in events if isinstance(e, SubagentStarted | SubagentFinished)]
    assert kinds == ["SubagentStarted", "SubagentFinished"] * 2  # one after the other
    assert "at most 1 run at a time" in next(
        t["function"]["description"]
        for t in fake.requests[0]["tools"]
        if t["function"]["name"] == "delegate_task"
    )
    await session.close()


@pytest.mark.parametrize(
    ("text", "timeout"),
    [
        ("child_timeout_seconds: 45", 45.0),
        ("child_timeout_seconds: 5", 30.0),  # Hermes's floor
        ("child_timeout_seconds: 0", None),  # no limit, as in Hermes
        ("child_timeout_seconds: 0\n  timeout: 2", None),  # Hermes's key wins
        ("timeout: 2", 2.0),  # ours alone: no floor
        ("child_timeout_seconds: soon", 600.0),  # not a number: the default
    ],
)
def test_child_timeout_seconds_is_read_as_hermes_reads_it(
    tmp_path: Path, text: str, timeout: float | None
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"delegation:\n  {text}\n")
    assert Limits.from_config(load_config(path).get).timeout == timeout


async def test_a_subagent_without_a_time_limit_is_not_cut_by_the_tools_timeout(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "delegation:\n  child_timeout_seconds: 0\ntools:\n  timeout: 0.3\n"
    )
    fake.add(tools(("delegate_task", {"goal": "steady work"})), text("done"))
    fake.route("steady work", text("word " * 20, chunks=20, delay=0.05))  # about 1 s
    session, _ = await make_session()
    await session.turn("go")
    (result,) = results(fake)
    assert result["complete"] is True and result["answer"].startswith("word")
    description = next(
        t["function"]["description"]
        for t in fake.requests[0]["tools"]
        if t["function"]["name"] == "delegate_task"
    )
    assert "it has no time limit" in description
    await session.close()
