"""Every tool call gets a result, whatever fails; a transcript is always a conversation to resume.

Against the scripted OpenAI server over a real socket: the requests it records are what a
real endpoint would have received, and each is checked as the chat API checks it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.conversation import assert_valid_conversation
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.transcripts import write_damaged_session
from workbench.core.agent import transcript
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.safety import analyze_command


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_a_nul_byte_path_fails_alone_and_the_turn_goes_on(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(
        tools(("read_file", {"path": "a\u0000b.txt"}), ("read_file", {"path": "a.txt"})),
        text("done"),
    )
    session, _ = await make_session()
    finished = await session.turn("read")
    assert (finished.reason, finished.text) == ("answered", "done")
    bad, good = tool_results(fake.requests[1])
    assert "contains a NUL byte" in bad["message"]
    assert good["content"] == "     1|alpha"  # the other call of the batch ran
    assert_valid_conversation(fake.requests[1]["messages"])
    await session.close()


def test_a_command_nested_past_the_parser_is_dangerous_not_harmless() -> None:
    command = "(" * 3000 + "echo hi" + ")" * 3000
    verdict = analyze_command(command)
    assert verdict.dangerous and not verdict.hardline
    assert "nested too deeply to be checked" in verdict.reasons[0]


async def test_a_deeply_nested_command_asks_and_the_turn_goes_on(
    make_session, fake: FakeOpenAI
) -> None:
    command = "echo " + "$(" * 3000 + "echo hi" + ")" * 3000
    fake.add(tools(("terminal", {"command": command})), text("ok"))
    asked: list[str] = []
    broker = ApprovalBroker()
    broker.attach(lambda request: (asked.append(request.command), broker.answer(request.id, "d")))
    session, _ = await make_session(broker=broker)
    finished = await session.turn("run it")
    assert finished.reason == "answered"
    assert asked == [command]
    assert "denied by the user" in tool_results(fake.requests[1])[0]["error"]
    await session.close()


async def test_a_failure_inside_the_call_path_is_that_calls_result(
    make_session, fake: FakeOpenAI, monkeypatch, workdir: Path
) -> None:
    """Fault injection: the approval check raises for one call; it does not run, the other does."""
    from workbench.core.execution import executor as executor_module

    real = executor_module.assess

    def failing(registry, name, args, *rest, **options):
        if args.get("path") == "c.txt":
            raise RuntimeError("injected fault")
        return real(registry, name, args, *rest, **options)

    monkeypatch.setattr(executor_module, "assess", failing)
    fake.add(
        tools(
            ("write_file", {"path": "c.txt", "content": "x"}),
            ("write_file", {"path": "d.txt", "content": "y"}),
        ),
        text("ok"),
    )
    session, _ = await make_session()
    assert (await session.turn("write")).reason == "answered"
    failed, written = tool_results(fake.requests[1])
    assert "RuntimeError: injected fault" in failed["error"] and "did not run" in failed["error"]
    assert "error" not in written
    assert not (workdir / "c.txt").exists() and (workdir / "d.txt").read_text() == "y"
    await session.close()


async def test_a_turn_killed_mid_batch_still_answers_every_call(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    """The turn's task is cancelled from outside (not the user's interrupt) while a call runs."""
    fake.add(tools(("terminal", {"command": "sleep 30"}), ("read_file", {"path": "a.txt"})))
    broker = ApprovalBroker(mode="off")
    session, events = await make_session(broker=broker)
    task = asyncio.create_task(session.turn("slow"))
    while not any(type(e).__name__ == "ToolCallStarted" for e in events):
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    history = transcript.messages(transcript.read(session.transcript.path))
    assert_valid_conversation(history)
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    await session.close()


async def test_resuming_a_damaged_transcript_sends_a_valid_conversation(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    session_id = write_damaged_session(home)
    fake.add(text("resumed"))
    session, _ = await make_session(resume=session_id)
    assert any("5 damaged line(s)" in note for note in session.notes)
    assert any("1 tool call(s) had no result" in note for note in session.notes)
    assert (await session.turn("go on")).text == "resumed"
    sent = fake.requests[0]["messages"]
    assert_valid_conversation(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user"]
    assert "Not run" in json.loads(sent[3]["content"])["error"]
    await session.close()
