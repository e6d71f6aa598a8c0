"""The agent loop against a real HTTP server on 127.0.0.1 speaking the OpenAI protocol."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, cut, error, garbage, text, tools
from tests.support.waiting import seen, until
from workbench.core.agent import transcript
from workbench.core.agent.events import ContextNotice
from workbench.core.agent.loop import ServerTimings, TextDelta, TurnFinished
from workbench.core.asking import AskKind
from workbench.core.config import load_config
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.core.model.settings import resolve
from workbench.core.runtime import load_runtime


def offered_to(fake: FakeOpenAI, request: int = 0) -> set[str]:
    """The names of the tools a request offered the model."""
    return {t["function"]["name"] for t in fake.requests[request]["tools"]}


async def test_a_streamed_reply_is_coalesced_and_recorded(make_session, fake: FakeOpenAI) -> None:
    fake.add(text("Hello " * 40, chunks=40, usage=(21, 40)))
    session, events = await make_session()
    finished = await session.turn("hi")
    assert finished.reason == "answered" and finished.text == "Hello " * 40
    assert (finished.prompt_tokens, finished.completion_tokens) == (21, 40)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == "Hello " * 40 and len(deltas) < 40  # coalesced
    request = fake.requests[0]
    assert (
        request["stream"] is True
        and request["temperature"] == 0.0
        and request["auth"] == "Bearer test-key"
    )
    records = transcript.read(session.transcript.path)
    assert [m["role"] for m in transcript.messages(records)] == ["user", "assistant"]
    await session.close()


async def test_an_endpoints_call_id_cannot_pass_for_a_call_run_by_hand(
    make_session, fake: FakeOpenAI, tmp_path
) -> None:
    """A call's id says who made it (`form-` for a call run by hand, which the session's
    history, chat and transcript treat apart): an id the endpoint gives is the agent's."""
    (tmp_path / "a.txt").write_text("alpha\n")
    fake.add(tools(("read_file", {"path": str(tmp_path / "a.txt")}), ids=["form-1"]), text("ok"))
    session, events = await make_session()
    await session.turn("read a")
    (started,) = [e for e in events if isinstance(e, ToolCallStarted)]
    assert not started.call_id.startswith("form-")
    sent = fake.requests[1]["messages"]
    (asked,) = [m for m in sent if m["role"] == "assistant" and m.get("tool_calls")]
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert asked["tool_calls"][0]["id"] == result["tool_call_id"] == started.call_id
    await session.close()


async def test_parallel_calls_run_and_results_return_in_model_order(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(
        tools(("read_file", {"path": "b.txt"}), ("read_file", {"path": "a.txt"})), text("done")
    )
    session, events = await make_session()
    finished = await session.turn("read both")
    assert finished.reason == "answered" and finished.rounds == 2
    results = tool_messages(fake.requests[1])
    assert [json.loads(r["content"])["content"] for r in results] == ["     1|beta", "     1|alpha"]
    assert [r["tool_call_id"] for r in results] == [
        c["id"] for c in fake.requests[1]["messages"][-3]["tool_calls"]
    ]
    finished_events = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished_events) == 2 and all(e.status == "ok" for e in finished_events)
    records = transcript.read(session.transcript.path)
    started = [r for r in records if r["kind"] == "tool_started"]
    assert [r["parallel"] for r in started] == [True, True]
    await session.close()


async def test_conflicting_calls_run_one_after_the_other(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    fake.add(
        tools(
            ("write_file", {"path": "a.txt", "content": "new"}), ("read_file", {"path": "a.txt"})
        ),
        text("ok"),
    )
    session, _ = await make_session()
    await session.turn("rewrite and read")
    started = [r for r in transcript.read(session.transcript.path) if r["kind"] == "tool_started"]
    assert [r["parallel"] for r in started] == [False, False]
    assert "conflicts with write_file a.txt" in started[1]["reason"]
    assert json.loads(tool_messages(fake.requests[1])[1]["content"])["content"] == "     1|new"
    await session.close()


async def test_malformed_arguments_and_unknown_tools_get_clear_results(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(
        tools(("read_file", '{"path": "a.txt"'), ("remove_file", {"path": "a.txt"})), text("sorry")
    )
    session, _ = await make_session()
    finished = await session.turn("go")
    assert finished.reason == "answered"
    bad_json, unknown = tool_messages(fake.requests[1])
    assert json.loads(bad_json["content"])["error"] == "Invalid tool arguments"
    assert unknown["content"].startswith("Tool 'remove_file' does not exist. Available tools: ")
    assert "read_file" in unknown["content"]  # never silently redirected to read_file
    await session.close()


async def test_offered_tools_follow_toolsets_and_availability(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [terminal]\n")
    fake.add(tools(("terminal", {"command": "ls"})), text("ok"))
    session, _ = await make_session()
    await session.turn("list")
    offered = offered_to(fake)
    assert "terminal" not in offered and "web_search" not in offered  # disabled / unavailable
    assert {"read_file", "todo", "clarify", "memory"} <= offered
    assert session.agent.last_offered == sorted(offered)
    result = tool_messages(fake.requests[1])[0]["content"]
    assert result.startswith("Tool 'terminal' does not exist")  # not offered, so not run
    await session.close()


async def test_the_agents_own_toolsets_switch_off_like_any_other(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [todo, memory, delegation]\n")
    fake.add(tools(("todo", {}), ("memory", {"action": "add", "content": "x"})), text("ok"))
    session, _ = await make_session()
    await session.turn("plan")
    offered = offered_to(fake)
    assert not offered & {"todo", "memory", "delegate_task"}
    assert {"read_file", "clarify", "session_search"} <= offered
    todo, memory = (m["content"] for m in tool_messages(fake.requests[1]))
    assert todo.startswith("Tool 'todo' does not exist") and "clarify" in todo
    assert memory.startswith("Tool 'memory' does not exist")
    assert not (home / "memories" / "MEMORY.md").exists()  # nothing ran
    # a call that comes another way (a plugin's, a replay) is refused with the switch
    (outcome,) = await session.executor.run([{"id": "by-hand", "name": "todo", "arguments": {}}])
    said = json.loads(outcome.content)["error"]
    assert outcome.status == "invalid" and said.startswith(
        "Tool 'todo' is switched off with its toolset todo (agent.disabled_toolsets in "
        "config.yaml); to switch it on: `hermes-tui toolsets enable todo`"
    )
    await session.close()


async def offered_with(make_session, fake: FakeOpenAI, home: Path, config: str) -> set[str]:
    """What a turn offers the model under this config.yaml."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)
    fake.add(text("ok"))
    session, _ = await make_session()
    await session.turn("hi")
    await session.close()
    return offered_to(fake)


async def test_a_platform_toolsets_list_offers_only_the_agents_toolsets_it_names(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    offered = await offered_with(
        make_session, fake, home, "platform_toolsets:\n  cli: [file, todo]\n"
    )
    assert offered == {"patch", "read_file", "search_files", "write_file", "todo"}


async def test_hermes_cli_offers_the_agents_own_tools_too(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    offered = await offered_with(
        make_session, fake, home, "platform_toolsets:\n  cli: [hermes-cli]\n"
    )
    own = {"todo", "memory", "clarify", "session_search", "delegate_task"}
    assert own | {"read_file", "terminal"} <= offered


async def test_round_cap_then_one_final_answer_with_tool_choice_none(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(*[tools(("read_file", {"path": "a.txt"})) for _ in range(2)], text("final answer"))
    session, _ = await make_session(max_rounds=2)
    finished = await session.turn("loop")
    assert (finished.reason, finished.text, finished.rounds) == ("max_rounds", "final answer", 3)
    last = fake.requests[-1]
    assert last["tool_choice"] == "none" and session.agent.last_offered == []
    assert "Answer from what you have" in last["messages"][-1]["content"]
    # the same tools as the rounds before: the request's prefix (a server's prompt cache) holds
    assert last["tools"] == fake.requests[0]["tools"]
    assert last["messages"][:-1] == fake.requests[-2]["messages"] + last["messages"][-3:-1]
    await session.close()


async def test_agent_max_turns_ends_the_loop_after_that_many_model_calls_and_says_so(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  max_turns: 2\nmodel:\n  max_rounds: 6\n")
    settings = resolve(load_config(home / "config.yaml"), env={"OPENAI_API_KEY": "k"},
                       base_url=fake.url, model="test-model")  # fmt: skip
    fake.add(*[tools(("read_file", {"path": "a.txt"})) for _ in range(5)], text("summary"))
    session, events = await make_session(max_rounds=settings.max_rounds)
    finished = await session.turn("loop")
    assert (finished.reason, finished.rounds, len(fake.requests)) == ("max_rounds", 3, 3)
    assert fake.requests[-1]["tool_choice"] == "none"  # the third call answers
    (notice,) = [e.text for e in events if isinstance(e, ContextNotice)]
    assert "limit of 2 model call(s) with tools (agent.max_turns)" in notice
    await session.close()


async def test_a_turn_that_answers_within_max_turns_says_nothing_of_it(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(("read_file", {"path": "a.txt"})), text("done"))
    session, events = await make_session(max_rounds=2)
    assert (await session.turn("once")).reason == "answered"
    assert not [e for e in events if isinstance(e, ContextNotice)]
    await session.close()


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ([error(404, "model 'test-model' not found")], "Not found (404)"),
        ([error(500, "oops")] * 3, "failed (500) after retries"),
        ([cut()], "broke off"),
        ([garbage()], "broke off"),
    ],
)
async def test_endpoint_failures_end_the_turn_clearly(
    make_session, fake: FakeOpenAI, replies, expected
) -> None:
    fake.add(*replies)
    session, events = await make_session()
    finished = await session.turn("hi")
    assert finished.reason == "error" and expected in finished.error
    assert isinstance(events[-1], TurnFinished)
    errors = [r for r in transcript.read(session.transcript.path) if r["kind"] == "error"]
    assert errors and expected in errors[0]["message"]
    await session.close()


async def test_rate_limits_and_server_errors_are_retried(make_session, fake: FakeOpenAI) -> None:
    fake.add(error(429, "slow down"), error(503, "busy"), text("made it"))
    session, _ = await make_session()
    finished = await session.turn("hi")
    assert (finished.reason, finished.text) == ("answered", "made it")
    assert len(fake.requests) == 3
    await session.close()


async def test_bad_key_and_refused_connection(make_session, fake: FakeOpenAI, home: Path) -> None:
    fake.api_key = "another-key"
    session, _ = await make_session()
    assert "rejected the API key (401)" in (await session.turn("hi")).error
    await session.close()
    fake.stop()
    session, _ = await make_session()
    finished = await session.turn("hi")
    assert "Cannot reach the model endpoint" in finished.error


async def test_cancel_stops_the_stream(make_session, fake: FakeOpenAI) -> None:
    fake.add(text("word " * 200, chunks=200, delay=0.05))  # 10 s unless stopped
    session, events = await make_session()
    task = asyncio.create_task(session.turn("talk"))
    await until(seen(events, TextDelta))  # the reply is streaming
    session.cancel()
    finished = await task
    assert finished.reason == "cancelled"
    assistant = transcript.messages(transcript.read(session.transcript.path))[-1]
    assert assistant["role"] == "assistant" and assistant["content"].endswith("[interrupted]")
    assert assistant["content"].count("word") < 200  # stopped, not streamed to its end
    await session.close()


async def test_closing_mid_turn_cancels_it_and_records_its_end(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(text("word " * 200, chunks=200, delay=0.05))
    session, events = await make_session()
    task = asyncio.create_task(session.turn("talk"))
    await until(seen(events, TextDelta))
    await session.close()  # quitting while the reply streams
    assert (await task).reason == "cancelled"
    kinds = [r["kind"] for r in transcript.read(session.transcript.path)]
    assert kinds[-1] == "turn_finished" and "error" not in kinds


async def test_cancel_stops_running_calls_and_records_what_never_started(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(
        tools(("terminal", {"command": "sleep 5"}), ("read_file", {"path": "a.txt"})),
        text("unused"),
    )
    session, events = await make_session()
    task = asyncio.create_task(session.turn("slow"))
    await until(seen(events, ToolCallStarted))  # the terminal's `sleep 5` runs
    session.cancel()
    finished = await task
    assert finished.reason == "cancelled"
    statuses = [
        r["status"]
        for r in transcript.read(session.transcript.path)
        if r["kind"] == "tool_finished"
    ]
    assert statuses == ["cancelled", "skipped"]
    await session.close()


async def test_destructive_commands_wait_for_approval(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # a glob: what it deletes is not known before it runs, so no checkpoint can vouch for it
    fake.add(tools(("terminal", {"command": "rm *.txt"})), text("could not"))
    broker = ApprovalBroker()
    broker.attach(lambda request: broker.answer(request.id, "d"))
    session, _ = await make_session(broker=broker)
    await session.turn("delete the text files")
    assert (workdir / "a.txt").exists()
    assert "denied by the user" in tool_messages(fake.requests[1])[0]["content"]
    approvals = [r for r in transcript.read(session.transcript.path) if r["kind"] == "approval"]
    assert approvals[0]["command"] == "rm *.txt" and approvals[0]["decision"] == "deny"
    await session.close()


async def test_large_results_are_spilled_for_the_model(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    (workdir / "big.txt").write_text("".join(f"line {i}\n" for i in range(4000)))
    fake.add(
        tools(("search_files", {"pattern": "line", "path": "big.txt", "limit": 1000})), text("ok")
    )
    session, _ = await make_session(context_window=8000)
    await session.turn("search")
    content = tool_messages(fake.requests[1])[0]["content"]
    assert content.startswith("<persisted-output>") and str(home / "state" / "results") in content
    await session.close()


async def test_resume_continues_the_conversation(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(text("first answer"), text("second answer"))
    session, _ = await make_session()
    await session.turn("first question")
    await session.close()
    resumed, _ = await make_session(resume=session.id)
    assert resumed.id == session.id
    await resumed.turn("second question")
    roles = [(m["role"], m.get("content")) for m in fake.requests[-1]["messages"]]
    assert roles == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    await resumed.close()


async def test_clarify_todo_and_memory(make_session, fake: FakeOpenAI, home: Path) -> None:
    runtime = load_runtime(home)
    asked = []

    def answer(ask) -> None:  # a front end: answers from another thread, as a person would
        asked.append(ask)
        reply = "blue" if "colour" in ask.subject.text else ""
        threading.Thread(target=runtime.asker.answer, args=(ask.id, reply)).start()

    runtime.asker.attach(answer, [AskKind.CLARIFY])
    fake.add(
        tools(
            ("clarify", {"question": "Which colour?", "choices": ["red", "blue"]}),
            ("todo", {"todos": [{"id": "1", "content": "paint", "status": "in_progress"}]}),
            ("memory", {"action": "add", "content": "The user likes blue."}),
        ),
        text("noted"),
    )
    session, _ = await make_session(runtime=runtime)
    await session.turn("paint it")
    clarify, todo, memory = (json.loads(m["content"]) for m in tool_messages(fake.requests[1]))
    assert clarify == {"answer": "blue"}
    (ask,) = asked
    assert ask.subject.choices == ("red", "blue") and ask.call_id  # its call's bar waits
    assert todo["summary"] == "1 in progress" and session.state.todos[0]["content"] == "paint"
    assert memory["saved"] == "add"
    assert (home / "memories" / "MEMORY.md").read_text() == "The user likes blue.\n"
    await session.close()


async def test_clarify_with_no_one_to_ask(make_session, fake: FakeOpenAI) -> None:
    fake.add(tools(("clarify", {"question": "?"})), text("ok"))
    session, _ = await make_session()
    await session.turn("x")
    assert "No one can answer" in json.loads(tool_messages(fake.requests[1])[0]["content"])["error"]
    await session.close()


async def test_a_servers_timings_are_told_and_garbage_ones_ignored(
    make_session, fake: FakeOpenAI
) -> None:
    timings = {"cache_n": 1182, "prompt_n": 15, "prompt_ms": 1100.5, "predicted_n": 36,
               "predicted_ms": 4400.0}  # fmt: skip
    fake.add(text("one", timings=timings), text("two", timings={"prompt_n": "many"}))
    session, events = await make_session()
    await session.turn("first")
    await session.turn("second")
    told = [e for e in events if isinstance(e, ServerTimings)]
    assert told == [ServerTimings(1182, 15, 1100.5, 36, 4400.0)]
    await session.close()
