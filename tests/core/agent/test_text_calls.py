"""A tool call the model wrote as text is run as the call it is, through the same gate,
within the turn's limits, and never shown as the answer: the recogniser on its own, then
the loop against the scripted OpenAI-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.agent.events import ContextNotice, TextDelta
from workbench.core.agent.text_calls import held_from, written_call
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import ToolCallFinished

NAMES = ["read_file", "terminal"]
FENCED = '```tool_call\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```'
BARE = '{"name": "read_file", "arguments": {"path": "b.txt"}}'


@pytest.mark.parametrize(
    ("reply", "name", "arguments"),
    [
        (FENCED, "read_file", {"path": "a.txt"}),
        (BARE, "read_file", {"path": "b.txt"}),
        ("Let me look.\n" + FENCED.replace("tool_call", "json"), "read_file", {"path": "a.txt"}),
        ('<tool_call>\n{"name": "terminal", "arguments": "{\\"command\\": \\"ls\\"}"}\n</tool_call>',
         "terminal", {"command": "ls"}),
    ],
)  # fmt: skip
def test_calls_written_as_text_are_recognised(reply: str, name: str, arguments: dict) -> None:
    found = written_call(reply, NAMES)
    assert found is not None and found.name == name and json.loads(found.arguments) == arguments
    assert held_from(reply) <= found.start  # never streamed before the reply is complete


@pytest.mark.parametrize(
    ("reply", "form"),
    [
        (FENCED, "fence"),
        ("Let me look.\n" + FENCED.replace("tool_call", "json"), "fence"),
        (f"<tool_call>{BARE}</tool_call>", "tags"),
        (f"  {BARE}\n", "bare JSON"),
        (f"[{BARE}]", "brackets"),
        (f"[TOOL_CALLS] [{BARE}, {BARE}]", "brackets"),
    ],
)
def test_the_form_a_call_was_written_in_is_said(reply: str, form: str) -> None:
    found = written_call(reply, NAMES)
    assert found is not None and found.form == form and found.name == "read_file"
    assert held_from(reply) <= found.start


def test_a_reply_that_may_open_a_list_of_calls_is_held_back() -> None:
    for partial in ("[", "  [TOOL", "[TOOL_CALLS] ", "[ {", '[{"name": "read_'):
        assert held_from(partial) == len(partial) - len(partial.lstrip())
    assert held_from("[1] is the first source.") == len("[1] is the first source.")
    assert written_call('[{"name": "Priya"}]', NAMES) is None  # a list that holds no call


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "delete_everything", "arguments": {}}',  # not an offered tool
        '```json\n{"name": "Priya", "port": 8421}\n```',  # an answer that is JSON
        '```tool_call\n{"name": "read_file", "arguments": [1]}\n```',  # not an object
        "The port is 8421.",
    ],
)
def test_other_text_is_not_a_call(reply: str) -> None:
    assert written_call(reply, NAMES) is None


def test_only_what_may_become_a_call_is_held_back() -> None:
    assert held_from("The answer is 45.") == len("The answer is 45.")
    code = "Run this:\n```python\nprint(1)\n```\nThen "
    assert held_from(code) == len(code)  # an ordinary block streams as it comes
    assert held_from("Reading it now ``") == len("Reading it now ")  # a fence may be starting
    assert held_from("  {") == 2


def _shown(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_call_written_in_the_final_round_runs_then_the_model_answers(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(
        tools(("read_file", {"path": "b.txt"})), text(FENCED, chunks=12), text("It says alpha.")
    )
    session, events = await make_session(max_rounds=1)
    finished = await session.turn("what is in a.txt?")
    assert (finished.reason, finished.text, finished.rounds) == ("max_rounds", "It says alpha.", 3)
    ran = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.name, e.status) for e in ran] == [("read_file", "ok"), ("read_file", "ok")]
    assert "alpha" in tool_messages(fake.requests[2])[-1]["content"]
    assert fake.requests[1]["tool_choice"] == fake.requests[2]["tool_choice"] == "none"
    assert "tool_call" not in _shown(events) and _shown(events) == "It says alpha."
    await session.close()


async def test_a_second_written_call_is_not_run_and_not_shown_as_the_answer(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(("read_file", {"path": "a.txt"})), text(BARE), text(FENCED))
    session, events = await make_session(max_rounds=1)
    finished = await session.turn("what is in a.txt?")
    assert finished.reason == "max_rounds" and finished.text == "" and finished.rounds == 3
    assert len(fake.requests) == 3  # within the turn's limits: no fourth request
    ran = [e.name for e in events if isinstance(e, ToolCallFinished)]
    assert ran == ["read_file", "read_file"]  # the first written call ran, the second did not
    limit, written = [e.text for e in events if isinstance(e, ContextNotice)]
    assert "agent.max_turns" in limit  # the limit reached, said first
    assert "read_file" in written and "not run" in written and "agent.max_turns" in written
    assert _shown(events) == ""
    # the conversation stays one the API accepts: the unrun call has its result
    assert session.agent.messages[-1]["role"] == "tool"
    await session.close()


async def test_a_written_call_goes_through_the_same_gate(
    make_session, fake: FakeOpenAI, home: Path, workdir: Path
) -> None:
    # a glob: what it deletes is known only when it runs, so it asks whatever a checkpoint holds
    written = '```tool_call\n{"name": "terminal", "arguments": {"command": "rm *.txt"}}\n```'
    fake.add(text("I will delete it.\n" + written), text("Not deleted."))
    asked: list[str] = []
    broker = ApprovalBroker()
    broker.attach(lambda request: (asked.append(request.command), broker.answer(request.id, "d")))
    session, events = await make_session(broker=broker)
    finished = await session.turn("delete a.txt")
    assert asked == ["rm *.txt"] and (workdir / "a.txt").exists()
    assert finished.text == "Not deleted."
    assert _shown(events) == "I will delete it.\nNot deleted."
    await session.close()


async def test_json_naming_no_offered_tool_is_the_answer(make_session, fake: FakeOpenAI) -> None:
    answer = '{"name": "orders", "port": 8421}'
    fake.add(text(answer))
    session, events = await make_session()
    finished = await session.turn("print settings.json")
    assert finished.reason == "answered" and finished.text == answer and _shown(events) == answer
    await session.close()
