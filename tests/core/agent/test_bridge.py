"""Deferred tools in our own sessions (tools.tool_search), against the scripted OpenAI server:
the model searches, describes and calls a deferred tool through the bridge; the real call is
gated, recorded under its own name with the bridge call as its parent, and replayable; the
tools sent never change within the conversation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.conversation import (
    assert_alternating,
    assert_valid_conversation,
    tool_messages,
)
from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.agent import transcript
from workbench.core.agent.bridge import KEPT_PREFIX, inner_calls
from workbench.core.agent.compress import SUMMARY_SYSTEM
from workbench.core.agent.session_index import SessionIndex
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.events import ToolCallFinished, ToolCallStarted
from workbench.core.replay import runner
from workbench.core.replay.cases import Case, Expect

DEFERRED = """\
tools:
  tool_search:
    enabled: "on"
    defer: [search_files, terminal]
"""


def deferring(home: Path, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(DEFERRED + extra)


def names(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request["tools"]}


def started(path: Path) -> list[dict]:
    return [r for r in transcript.read(path) if r["kind"] == "tool_started"]


async def described_then_long(make_session, fake: FakeOpenAI, home: Path, *later: str):
    """A session that loaded search_files' schema, then grew near its window (two turns);
    `later` are the answers to the turns after those."""
    deferring(home)
    fake.route(SUMMARY_SYSTEM[:40], text("SUMMARY: the user asked about alpha."))
    fake.add(
        tools(("tool_describe", {"names": ["search_files"]})),
        text("I can search now"),
        text("second answer"),
        *[text(answer) for answer in later],
    )
    session, _ = await make_session(context_window=8192, max_tokens=512)
    await session.turn("load the search tool " + "please " * 200)
    await session.turn("and now? " + "more words " * 700)
    return session


def kept_notes(messages: list[dict]) -> list[dict]:
    return [m for m in messages if str(m.get("content")).startswith(KEPT_PREFIX)]


def kept_schemas(note: dict) -> dict:
    return json.loads(note["content"].split("\n", 1)[1])["tools"]


async def test_search_describe_and_call_a_deferred_tool(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    deferring(home)
    fake.add(
        tools(("tool_search", {"queries": ["search files contents", "no such capability"]})),
        tools(("tool_describe", {"names": ["search_files", "read_file", "nope"]})),
        tools(
            ("tool_call", {"calls": [{"name": "search_files", "arguments": {"pattern": "alpha"}}]})
        ),
        text("found it in a.txt"),
    )
    session, events = await make_session(max_rounds=5)
    finished = await session.turn("where is alpha?")
    assert finished.reason == "answered", finished.error
    sent = names(fake.requests[0])
    assert {"tool_search", "tool_describe", "tool_call", "read_file"} <= sent
    assert not {"search_files", "terminal"} & sent  # deferred: not sent in full
    # the tools' part of every request is the same bytes (a server's prompt cache holds)
    assert len({json.dumps(r["tools"]) for r in fake.requests}) == 1

    found = json.loads(tool_messages(fake.requests[1])[0]["content"])
    assert found["results"][0]["matches"][0] == "search_files"
    assert found["results"][1]["matches"] == [] and "hint" in found["results"][1]
    assert found["tools"]["search_files"]["source"] == "builtin"
    assert found["total_available"] == 2
    described = json.loads(tool_messages(fake.requests[2])[1]["content"])
    assert "pattern" in described["tools"]["search_files"]["parameters"]["properties"]
    assert described["not_found"] == ["nope"]
    assert described["errors"]["read_file"].startswith("'read_file' is a directly-listed tool")
    result = json.loads(tool_messages(fake.requests[3])[2]["content"])
    assert result["matches"] == [{"line": 1, "path": "a.txt", "text": "alpha"}]
    assert_valid_conversation(fake.requests[3]["messages"])

    # recorded under its real name, the bridge call its parent
    bridge_id = fake.requests[3]["messages"][-2]["tool_calls"][0]["id"]
    records = started(session.transcript.path)
    inner = next(r for r in records if r["name"] == "search_files")
    assert inner["via"] == bridge_id and inner["arguments"] == {"pattern": "alpha"}
    assert any(r["name"] == "tool_call" and r["id"] == bridge_id for r in records)
    live = [e for e in events if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert [(e.name, e.via) for e in live if e.name in ("tool_call", "search_files")] == [
        ("tool_call", ""), ("search_files", bridge_id), ("search_files", bridge_id),
        ("tool_call", ""),
    ]  # fmt: skip

    # kept in the call history as search_files (never as tool_call), and replayable
    kept = session.runtime.history.calls("search_files")
    assert [(c.via, c.arguments) for c in kept] == [(bridge_id, {"pattern": "alpha"})]
    assert session.runtime.history.calls("tool_call") == []
    # session search and the exported transcript name the real call
    index = SessionIndex(session.runtime.home)
    (hit,) = [h for h in index.search("search_files alpha", 5) if h.role == "assistant"]
    assert "via tool_call" in hit.text
    exported = transcript.export_markdown(transcript.read(session.transcript.path))
    assert '- calls `search_files` with `{"pattern": "alpha"}` (via `tool_call`)' in exported
    case = Case(
        "again",
        kept[0].tool,
        dict(kept[0].arguments or {}),
        Expect(status="ok", contains=("a.txt",)),
    )
    (replayed,) = await asyncio.to_thread(runner.replay, session.runtime, [case], cwd=session.cwd)
    assert replayed.passed, replayed.reasons
    await session.close()


async def test_a_destructive_inner_command_asks_and_its_denial_reaches_the_model(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    deferring(home)
    call = {"calls": [{"name": "terminal", "arguments": {"command": "rm *.txt"}}]}
    fake.add(tools(("tool_call", call)), text("could not"))
    broker = ApprovalBroker()
    asked: list[str] = []

    def deny(request) -> None:
        asked.append(request.tool)
        broker.answer(request.id, "d")

    broker.attach(deny)
    session, _ = await make_session(broker=broker)
    await session.turn("delete the text files")
    assert (workdir / "a.txt").exists()
    assert asked == ["terminal"]  # the approval names the real tool
    assert "denied by the user" in tool_messages(fake.requests[1])[0]["content"]
    records = transcript.read(session.transcript.path)
    approval = next(r for r in records if r["kind"] == "approval")
    assert (approval["tool"], approval["command"], approval["decision"]) == (
        "terminal", "rm *.txt", "deny",
    )  # fmt: skip
    finished = [r for r in records if r["kind"] == "tool_finished"]
    assert [(r["name"], r["status"]) for r in finished] == [
        ("terminal", "denied"), ("tool_call", "denied"),
    ]  # fmt: skip
    await session.close()


async def test_inner_calls_the_bridge_cannot_make_get_hermes_errors(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    deferring(home)
    two = [{"name": "terminal", "arguments": {"command": "ls"}}] * 2
    fake.add(
        tools(
            ("tool_call", {"calls": [{"name": "frobnicate", "arguments": {}}]}),
            ("tool_call", {"calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}),
            ("tool_call", {"calls": two}),
            ("tool_call", {"calls": [{"name": "search_files", "arguments": {}}]}),
            ("search_files", {"pattern": "alpha"}),
        ),
        text("ok"),
    )
    session, _ = await make_session()
    await session.turn("try things")
    unknown, eager, batch, missing, direct = (
        json.loads(m["content"]) if m["content"].startswith("{") else m["content"]
        for m in tool_messages(fake.requests[1])
    )
    assert unknown["error"] == (
        "'frobnicate' is not a known tool name. Deferred tools must be invoked through "
        "tool_call by the exact name tool_search returns (e.g. mcp__<server>__<tool>). "
        "Use tool_search to find the exact name."
    )
    assert eager["error"] == (
        "'read_file' is a directly-listed tool, not a deferred one. "
        "Call it directly instead of via tool_call."
    )
    assert batch["error"].startswith(
        "tool_call takes exactly one entry for local tools; you sent 2."
    )
    assert missing["error"].startswith(
        "tool_call to 'search_files' is missing required argument(s): pattern."
    )
    # a deferred tool is reached only through the bridge
    assert direct.startswith("Tool 'search_files' does not exist. Available tools: ")
    assert not [r for r in started(session.transcript.path) if r["name"] == "terminal"]
    await session.close()


async def test_described_schemas_survive_compression(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    session = await described_then_long(make_session, fake, home)
    definitions, _ = session.agent._definitions()
    event = await session.agent.compress(definitions, reason="threshold", target=1)
    assert event is not None and (event.summarised or event.stubbed), [
        (m["role"], len(str(m.get("content")))) for m in session.agent.messages
    ]
    kept = kept_notes(session.agent.messages)
    assert len(kept) == 1
    assert "pattern" in kept_schemas(kept[0])["search_files"]["parameters"]["properties"]
    assert_valid_conversation(session.agent.messages)
    # compressed again: still one note, not two
    await session.agent.compress(definitions, reason="threshold", target=1)
    assert len(kept_notes(session.agent.messages)) <= 1
    await session.close()


async def test_the_kept_schemas_never_make_two_user_messages_in_a_row(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    session = await described_then_long(make_session, fake, home, "third answer")
    # the third request nears the window: compressed before it is sent, the tail its prompt
    await session.turn("and then? " + "other words " * 900)
    sent = fake.requests[-1]["messages"]
    compressed = [r for r in transcript.read(session.transcript.path) if r["kind"] == "compressed"]
    assert compressed, [(m["role"], len(str(m["content"]))) for m in sent]
    assert any(KEPT_PREFIX in str(m["content"]) for m in sent)
    assert_alternating(sent)
    assert_valid_conversation(sent)
    await session.close()


async def test_the_kept_schemas_survive_a_resume_and_the_next_compression(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    session = await described_then_long(make_session, fake, home, "after the resume")
    definitions, _ = session.agent._definitions()
    assert await session.agent.compress(definitions, reason="threshold", target=1) is not None
    await session.close()

    resumed, _ = await make_session(context_window=8192, max_tokens=512, resume=session.id)
    await resumed.turn("and then? " + "other words " * 700)
    definitions, _ = resumed.agent._definitions()
    assert await resumed.agent.compress(definitions, reason="threshold", target=1) is not None
    (note,) = kept_notes(resumed.agent.messages)
    assert "pattern" in kept_schemas(note)["search_files"]["parameters"]["properties"]
    await resumed.close()


def test_a_recorded_tool_call_reads_as_the_call_it_made() -> None:
    wrapped = json.dumps({"calls": [{"name": "terminal", "arguments": {"command": "ls"}}]})
    assert inner_calls("tool_call", wrapped) == [("terminal", {"command": "ls"})]
    assert inner_calls("tool_call", {"name": "read_file", "arguments": '{"path": "a"}'}) == [
        ("read_file", {"path": "a"})
    ]
    assert inner_calls("tool_call", "not json") == [("tool_call", "not json")]
    assert inner_calls("read_file", {"path": "a"}) == [("read_file", {"path": "a"})]


async def test_the_lean_profile_reaches_a_deferred_tool_through_the_bridge(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    deferring(home)
    call = {"calls": [{"name": "search_files", "arguments": {"pattern": "beta"}}]}
    fake.add(tools(("tool_call", call)), text("b.txt"))
    session, _ = await make_session(lean=True)
    finished = await session.turn("which file says beta?")
    assert finished.reason == "answered", finished.error
    assert {"tool_call", "read_file"} <= names(fake.requests[0]) and "todo" not in names(
        fake.requests[0]
    )
    result = json.loads(tool_messages(fake.requests[1])[0]["content"])
    assert result["matches"][0]["path"] == "b.txt"
    await session.close()


async def test_the_sizes_shown_are_those_of_the_request_sent_with_deferral_on(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    from workbench.core.costs import offered_costs
    from workbench.core.model.tokens import PER_DEFINITION, PER_MESSAGE, Encoding

    deferring(home)
    fake.add(text("hello"))
    session, _ = await make_session()
    await session.turn("hi")
    sent = fake.requests[0]["tools"]
    costs = offered_costs(session.runtime, model="gpt-4o", base_url=fake.url, api_key="k")
    encoding = Encoding("o200k_base")
    counted = PER_MESSAGE + sum(
        encoding.count(json.dumps(d, ensure_ascii=False)) + PER_DEFINITION for d in sent
    )
    assert costs.total == counted
    await session.close()


async def test_the_repeat_guard_judges_the_call_a_tool_call_makes(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    deferring(home)
    alpha, nothing = {"pattern": "alpha"}, {"pattern": "zzz"}
    fake.add(
        tools(
            ("search_files", alpha),  # deferred: not offered, so it does not run
            ("tool_call", {"calls": [{"name": "search_files", "arguments": alpha}]}),
            ("tool_call", {"calls": [{"name": "search_files", "arguments": nothing}]}),
        ),
        tools(  # the same two calls again, in tool_call's other shapes
            ("tool_call", {"name": "search_files", "arguments": json.dumps(alpha)}),
            ("tool_call", {"calls": {"name": "search_files", "arguments": nothing}}),
        ),
        text("alpha is in a.txt"),
    )
    session, events = await make_session(max_rounds=5)
    finished = await session.turn("where is alpha?")
    assert finished.reason == "answered", finished.error
    direct, first, _ = tool_messages(fake.requests[1])
    assert direct["content"].startswith("Tool 'search_files' does not exist.")
    assert '"a.txt"' in first["content"]  # the direct call that failed is no repeat of it
    runs = [e.arguments for e in events if isinstance(e, ToolCallStarted) and e.via]
    assert runs.count(alpha) == 1 and runs.count(nothing) == 1
    again, empty = tool_messages(fake.requests[2])[-2:]
    assert again["content"].startswith("Not run: you already called search_files")
    assert "already called search_files" in json.loads(empty["content"])["error"]
    # one of them had found nothing: the model gets another round that may call tools
    assert "tool_choice" not in fake.requests[2]
    await session.close()
