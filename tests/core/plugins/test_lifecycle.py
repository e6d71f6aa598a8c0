"""The session and turn hooks run where Hermes 0.19 runs them, with real plugins on disk and
the agent talking to the scripted OpenAI-protocol server; a hook that raises or hangs is
left behind and the turn goes on."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.plugins import FIXTURES
from tests.support.waiting import PATIENCE, until
from workbench.core.agent.events import TextDelta
from workbench.core.plugins.lifecycle import SessionHooks, one_call_session
from workbench.core.runtime import Runtime, load_runtime

TIMEOUT = 0.5  # plugins.hook_timeout for these tests


def _home(home: Path, names: list[str]) -> Path:
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(FIXTURES / name, home / "plugins" / name)
    config = {"plugins": {"enabled": names, "hook_timeout": TIMEOUT}}
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    return home


@pytest.fixture
def loaded(home: Path):
    runtimes: list[Runtime] = []

    def load(*names: str) -> Runtime:
        runtime = load_runtime(_home(home, list(names)))
        for name in names:
            assert runtime.plugins is not None
            assert runtime.plugins.states[name].status == "loaded", runtime.plugins.states[name]
        runtimes.append(runtime)
        return runtime

    yield load
    stuck = sys.modules.get("hermes_plugins.stuck")
    if stuck is not None:
        stuck.RELEASE.set()  # the hung hooks end with the test
    for runtime in runtimes:
        for key in list(runtime.plugins.states if runtime.plugins else []):
            runtime.plugins.unload(key)
        runtime.stop()


def _plugin(name: str) -> Any:
    return sys.modules[f"hermes_plugins.{name}"]


def _hooks(name: str = "lifecycle") -> list[str]:
    return [hook for hook, _ in _plugin(name).CALLS]


def _seen(hook: str) -> list[dict[str, Any]]:
    return [fields for name, fields in _plugin("lifecycle").CALLS if name == hook]


def _user_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


async def test_a_store_opened_in_on_session_start_is_there_for_the_first_call(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("lifecycle")
    fake.add(tools(("lifecycle_note", {"text": "buy tea"})), text("Noted."))
    session, _ = await make_session(runtime=runtime)
    finished = await session.turn("note: buy tea")
    assert finished.reason == "answered"
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"]) == {"noted": "buy tea", "count": 1}
    assert _hooks()[:2] == ["on_session_start", "pre_llm_call"]
    (start,) = _seen("on_session_start")
    assert start == {"session_id": session.id, "model": "test-model", "platform": "cli"}


async def test_pre_llm_call_context_reaches_the_model_and_the_record_keeps_the_users_words(
    loaded, make_session, fake: FakeOpenAI, home: Path
) -> None:
    runtime = loaded("lifecycle")
    fake.add(text("You like tea."), text("Still tea."))
    session, _ = await make_session(runtime=runtime)
    await session.turn("what do I like?")
    await session.turn("and now?")
    context = "Recalled: the user likes tea (0 notes)."
    assert _user_messages(fake.requests[0]) == [f"what do I like?\n\n{context}"]
    # the next turn sends the first message as it was sent (Hermes's prompt-cache bytes)
    assert _user_messages(fake.requests[1]) == [
        f"what do I like?\n\n{context}",
        f"and now?\n\n{context}",
    ]
    stored = [m["content"] for m in session.agent.messages if m["role"] == "user"]
    assert stored == ["what do I like?", "and now?"]
    await session.close()
    records = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    users = [
        r["message"]["content"]
        for r in records
        if r["kind"] == "message" and r["message"]["role"] == "user"
    ]
    assert users == ["what do I like?", "and now?"]
    first, second = _seen("pre_llm_call")
    assert (first["user_message"], first["is_first_turn"]) == ("what do I like?", True)
    assert second["is_first_turn"] is False
    assert second["history"] == ["what do I like?", "You like tea.", "and now?"]
    assert {"session_id", "task_id", "turn_id", "model", "platform", "sender_id"} <= set(
        first["keys"]
    )
    # llm_request middleware ran on each request, and what it changed was sent
    assert [r["temperature"] for r in fake.requests] == [0.25, 0.25]


async def test_the_answer_is_transformed_seen_by_post_llm_call_and_every_turn_ends(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("lifecycle")
    fake.add(text("Tea."), text("Green tea."))
    session, events = await make_session(runtime=runtime)
    first = await session.turn("drink?")
    second = await session.turn("which?")
    assert (first.text, second.text) == ("[checked] Tea.", "[checked] Green tea.")
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "[checked] Tea.[checked] Green tea."  # never the untransformed answer
    assert [c["assistant_response"] for c in _seen("post_llm_call")] == [
        "[checked] Tea.",
        "[checked] Green tea.",
    ]
    assert _seen("on_session_end") == [{"completed": True, "interrupted": False}] * 2
    # the model's own words stay in the conversation, as in Hermes
    assert [m["content"] for m in session.agent.messages if m["role"] == "assistant"] == [
        "Tea.",
        "Green tea.",
    ]
    await session.close()
    await session.close()
    assert _hooks().count("on_session_start") == 1
    assert _seen("on_session_finalize") == [
        {"session_id": session.id, "platform": "cli", "reason": "shutdown"}
    ]


async def test_a_new_session_replacing_one_finalizes_it_and_resets(loaded) -> None:
    runtime = loaded("lifecycle")
    old = SessionHooks(runtime.hooks, "old-id", model="m", platform="tui")
    new = SessionHooks(runtime.hooks, "new-id", model="m", platform="tui")
    old.start()
    old.replaced_by(new)
    old.finalize("shutdown")  # already finalized: once
    assert [(h, f.get("session_id"), f.get("reason")) for h, f in _plugin("lifecycle").CALLS] == [
        ("on_session_start", "old-id", None),
        ("on_session_finalize", "old-id", "session_boundary"),
        ("on_session_reset", "new-id", "new_session"),
    ]


async def test_a_resumed_session_does_not_start_again(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("lifecycle")
    fake.add(text("one"), text("two"))
    session, _ = await make_session(runtime=runtime)
    await session.turn("first")
    await session.close()
    resumed, _ = await make_session(runtime=runtime, resume=session.id)
    await resumed.turn("second")
    await resumed.close()
    assert _hooks().count("on_session_start") == 1
    assert [f["reason"] for f in _seen("on_session_finalize")] == ["shutdown", "shutdown"]


async def test_terminal_output_is_replaced_by_the_hook(loaded, tmp_path: Path) -> None:
    runtime = loaded("lifecycle")
    executor = runtime.executor(broker=None, cwd=str(tmp_path))
    try:
        (outcome,) = await executor.run(
            [{"id": "1", "name": "terminal", "arguments": {"command": "echo my secret word"}}]
        )
    finally:
        executor.shutdown()
    result = json.loads(outcome.content)
    assert result["output"].strip() == "my [redacted] word" and result["exit_code"] == 0
    (seen,) = _seen("transform_terminal_output")
    assert seen == {"command": "echo my secret word", "returncode": 0, "env_type": "local"}


async def test_hooks_that_raise_or_hang_never_take_a_turn_down(
    loaded, make_session, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    runtime = loaded("lifecycle", "stuck")
    fake.add(tools(("lifecycle_note", {"text": "x"})), text("Done."))
    session, _ = await make_session(runtime=runtime)
    began = time.monotonic()
    finished = await session.turn("note x")
    took = time.monotonic() - began
    assert finished.reason == "answered" and finished.text == "[checked] Done."
    # the lifecycle plugin's store was opened although another on_session_start hung
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"])["noted"] == "x"
    (sent,) = _user_messages(fake.requests[0])
    assert sent.endswith("Said after the stuck ones.")  # the callback after the hung one ran
    # four hangs (on_session_start, pre_llm_call, transform_llm_output, on_session_end)
    assert 4 * TIMEOUT <= took < 4 * TIMEOUT + 5
    assert len(_plugin("stuck").HUNG) == 4
    executor = runtime.executor(broker=None, cwd=str(tmp_path))
    try:
        (outcome,) = await executor.run(
            [{"id": "1", "name": "terminal", "arguments": {"command": "echo secret"}}]
        )
    finally:
        executor.shutdown()
    assert json.loads(outcome.content)["output"].strip() == "[redacted]"
    await session.close()
    assert [f["reason"] for f in _seen("on_session_finalize")] == ["shutdown"]
    log = (home / "logs" / "hermes-tui.log").read_text()
    assert "hook on_session_start of plugin stuck failed: RuntimeError" in log
    assert f"hook pre_llm_call of plugin stuck did not return within {TIMEOUT:g} s" in log
    assert "hook post_llm_call of plugin stuck failed" in log


async def test_an_llm_request_middleware_that_fails_blocks_the_request(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("stuck")
    fake.add(text("never sent"))
    session, _ = await make_session(runtime=runtime)
    finished = await session.turn("BLOCK ME please")
    assert finished.reason == "error" and not fake.requests
    assert "llm_request middleware of plugin stuck failed" in finished.error
    assert "policy service unreachable" in finished.error


async def test_a_call_session_starts_and_finalizes(loaded) -> None:
    runtime = loaded("lifecycle")
    with one_call_session(runtime.hooks, "call-id") as session:
        assert session.session_id == "call-id"
        assert json.loads(_plugin("lifecycle").note({"text": "t"})) == {"noted": "t", "count": 1}
    assert _hooks() == ["on_session_start", "on_session_finalize"]
    assert _seen("on_session_finalize")[0]["reason"] == "shutdown"


def _executed() -> list[dict[str, Any]]:
    return list(_plugin("llm_exec").CALLS)


async def test_llm_execution_middleware_wraps_each_model_call_with_hermes_arguments(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("lifecycle", "llm_exec")
    fake.add(tools(("lifecycle_note", {"text": "tea"})), text("Noted tea."))
    session, _ = await make_session(runtime=runtime)
    finished = await session.turn("note tea")
    assert finished.reason == "answered" and finished.text == "[checked] Noted tea."
    first, second = _executed()
    # the request it saw is the one sent (llm_request's change in it), the call ran once each
    assert len(fake.requests) == 2
    assert first["request"]["temperature"] == 0.25 and fake.requests[0]["temperature"] == 0.25
    assert first["original"]["messages"] == first["request"]["messages"]
    assert first["tool_calls"] == [("lifecycle_note", '{"text": "tea"}')]
    assert second["content"] == "Noted tea."
    context = first["context"]
    assert {
        "task_id", "turn_id", "api_request_id", "session_id", "platform", "model", "provider",
        "base_url", "api_mode", "api_call_count", "middleware_trace",
    } <= set(context)  # fmt: skip
    assert (context["session_id"], context["model"], context["platform"]) == (
        session.id,
        "test-model",
        "cli",
    )
    assert [c["context"]["api_call_count"] for c in (first, second)] == [1, 2]
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"]) == {"noted": "tea", "count": 1}


async def test_llm_execution_middleware_may_replace_the_answer(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("llm_exec")
    fake.add(text("Tea."), text("never sent"))
    session, events = await make_session(runtime=runtime)
    replaced = await session.turn("REPLACE the answer")
    assert replaced.text == "[executed] Tea."
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "[executed] Tea."  # never the model's own words
    assert session.agent.messages[-1] == {"role": "assistant", "content": "[executed] Tea."}
    own = await session.turn("answer on your OWN")
    assert own.reason == "answered" and own.text == "From the plugin."
    assert len(fake.requests) == 1  # it answered without the call


async def test_llm_execution_middleware_that_fails_first_blocks_the_call(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("llm_exec")
    fake.add(text("Tea."), text("never sent"))
    session, _ = await make_session(runtime=runtime)
    junk = await session.turn("answer JUNK")
    assert junk.reason == "error" and len(fake.requests) == 1
    assert "llm_execution middleware of plugin llm_exec gave no model response" in junk.error
    assert "it returned str" in junk.error
    refused = await session.turn("REFUSE this")
    assert refused.reason == "error" and len(fake.requests) == 1  # nothing more was sent
    assert "llm_execution middleware of plugin llm_exec failed" in refused.error
    assert "the budget service said no" in refused.error


async def test_subagent_start_and_stop_run_around_a_child_with_hermes_arguments(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("subagents")
    fake.add(tools(("delegate_task", {"goal": "inspect alpha"})), text("alpha is done"))
    fake.route("inspect alpha", text("alpha holds one line"))
    session, _ = await make_session(runtime=runtime)
    finished = await session.turn("look at alpha")
    assert finished.reason == "answered"
    (start_name, start), (stop_name, stop) = _plugin("subagents").CALLS
    assert (start_name, stop_name) == ("subagent_start", "subagent_stop")
    turn_id = session.agent.turn_id
    assert turn_id
    child = f"{session.id}/sub-agent 1"
    assert {k: v for k, v in start.items() if k != "telemetry_schema_version"} == {
        "parent_session_id": session.id,
        "parent_turn_id": turn_id,
        "parent_subagent_id": None,
        "child_session_id": child,
        "child_subagent_id": start["child_subagent_id"],
        "child_role": "leaf",  # at the default depth limit it cannot delegate further
        "child_goal": "inspect alpha",
    }
    assert start["child_subagent_id"].startswith("sa-1-")
    duration = stop.pop("duration_ms")
    assert isinstance(duration, int) and duration >= 0
    assert {k: v for k, v in stop.items() if k != "telemetry_schema_version"} == {
        "parent_session_id": session.id,
        "parent_turn_id": turn_id,
        "child_session_id": child,
        "child_role": "leaf",
        "child_summary": "alpha holds one line",
        "child_status": "completed",
    }
    # the child's transcript records the session id the hooks were given
    first = json.loads(next(session._subagents_dir().glob("*.jsonl")).read_text().splitlines()[0])
    assert first["id"] == child


async def test_a_turn_cancelled_inside_llm_execution_middleware_ends_cancelled(
    loaded, make_session, fake: FakeOpenAI
) -> None:
    runtime = loaded("llm_exec")
    answer = threading.Event()  # the reply is held until the test is done
    fake.add(text("never read", hold=answer), text("Tea."))
    session, _ = await make_session(runtime=runtime)
    task = asyncio.create_task(session.turn("tell a long story"))
    try:
        await until(lambda: len(fake.requests) == 1, what="the middleware's call is made")
        session.cancel()
        finished = await asyncio.wait_for(task, PATIENCE)
    finally:
        answer.set()
    assert finished.reason == "cancelled"
    again = await session.turn("REPLACE now")  # the session goes on, the middleware too
    assert again.reason == "answered" and again.text == "[executed] Tea."
