"""Sessions that fit their model's window, against a server that refuses what does not fit.

The scripted server counts tokens its own way (the agent cannot know it in advance), reports
that count as usage, and refuses a request at or over its window with llama.cpp's HTTP 400.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.support.conversation import assert_alternating
from tests.support.fake_openai import FakeOpenAI, error, text, tools
from workbench.core.agent import transcript
from workbench.core.agent.compress import SUMMARY_PREFIX, SUMMARY_SYSTEM, ContextCompressed
from workbench.core.agent.loop import ContextNotice, ContextUsage

SUMMARISER = SUMMARY_SYSTEM[:40]  # the summary requests' system message starts so


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def conversation_requests(fake: FakeOpenAI) -> list[dict]:
    """The agent's own requests (not the summariser's)."""
    return [r for r in fake.requests if SUMMARISER not in json.dumps(r["messages"][:1])]


def summary_requests(fake: FakeOpenAI) -> list[dict]:
    return [r for r in fake.requests if SUMMARISER in json.dumps(r["messages"][:1])]


def small_toolset(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    # every tool sent in full (auto defers none of so few): these tests size requests by
    # the tools they hold
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [terminal, web, skills]\n")


def document(workdir: Path, name: str, lines: int = 300) -> Path:
    path = workdir / name
    body = "".join(f"{name} line {i}: " + "lorem ipsum dolor " * 4 + "\n" for i in range(lines))
    path.write_text(f"HEAD-OF-{name}\n" + body)
    return path


@pytest.mark.parametrize(
    ("window", "chars_per_token"), [(4096, 4.0), (8192, 4.0), (8192, 2.0), (32768, 3.0)]
)
async def test_a_long_conversation_never_overflows_and_every_read_reaches_the_model(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path, window: int, chars_per_token: float
) -> None:
    small_toolset(home)
    fake.window, fake.chars_per_token = window, chars_per_token
    fake.route(SUMMARISER, *[text("The user had documents read; each was read.")] * 60)
    lines = int(window * chars_per_token / 80) + 20  # each file alone is larger than the window
    session, events = await make_session(context_window=window, max_tokens=1024)
    result_tokens, n = 0, 0
    while result_tokens <= 3 * window:  # until the results add up to several windows
        n += 1
        assert n <= 40, "the reads stopped growing the conversation"
        assert document(workdir, f"doc{n}.txt", lines).stat().st_size / chars_per_token > window
        fake.add(tools(("read_file", {"path": f"doc{n}.txt"})), text(f"doc{n} is read"))
        asked = len(conversation_requests(fake))
        finished = await session.turn(f"Read doc{n}.txt and tell me about it")
        assert finished.reason == "answered", finished.error
        answer = conversation_requests(fake)[asked + 1]
        result = tool_messages(answer)[-1]["content"]
        assert f"HEAD-OF-doc{n}.txt" in result  # the head of every file reaches the model
        assert json.loads(result)["next_offset"] > 1  # and where to go on from
        result_tokens += math.ceil(len(result) / chars_per_token)
    assert fake.refused == [] and fake.overflows == []
    records = transcript.read(session.transcript.path)
    if window < 32768:
        assert [r for r in records if r["kind"] == "compressed"]
        assert any(isinstance(e, ContextCompressed) for e in events)
    usage = [e for e in events if isinstance(e, ContextUsage)]
    assert usage and all(e.window == window and 0 < e.used < window for e in usage)
    await session.close()


async def test_compression_keeps_the_first_request_and_the_latest_turn_and_calls_the_hook(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    small_toolset(home)
    fake.window, fake.chars_per_token = 8192, 4.0
    fake.route(SUMMARISER, text("SUMMARY: docs 0-3 were read; they are lorem ipsum."))
    seen: list[list[dict]] = []

    class Provider:
        name = "recorder"

        def get_tool_schemas(self) -> list[dict]:
            return []

        def handle_tool_call(self, name: str, args: dict, **_: object) -> str:
            return "{}"

        def on_pre_compress(self, messages: list[dict]) -> str:
            seen.append(messages)
            return "KEEP: the user's cat is called Tom"

    session, events = await make_session(context_window=8192, max_tokens=1024)
    session.runtime.memory.install("recorder", Provider())
    background = "Some background you will need: " + "the sky is blue. " * 150
    first = f"Read doc0.txt. {background}"
    for n in range(12):
        document(workdir, f"doc{n}.txt", 120)
        fake.add(tools(("read_file", {"path": f"doc{n}.txt"})), text(f"doc{n} is read"))
        await session.turn(f"Read doc{n}.txt. {background}")
        if summary_requests(fake):
            break
    assert summary_requests(fake), "the conversation was never summarised"
    assert any(isinstance(e, ContextCompressed) and e.summarised for e in events)
    (summary_request,) = summary_requests(fake)
    source = summary_request["messages"][1]["content"]
    assert "KEEP: the user's cat is called Tom" in source  # the provider's text is kept
    assert seen and any(m.get("role") == "tool" for m in seen[0])  # the hook saw what went
    after = conversation_requests(fake)[-1]["messages"]
    # the first request, whole; the summary after it is the user's side too, sent with it
    # as one message (no endpoint takes two user messages in a row)
    assert after[0]["role"] == "user" and after[0]["content"].startswith(first + "\n\n")
    assert_alternating(after)
    summary = next(m for m in after if SUMMARY_PREFIX in (m.get("content") or ""))
    assert "SUMMARY: docs 0-3 were read" in summary["content"]
    assert after[-2]["role"] == "assistant" and after[-1]["role"] == "tool"  # the latest turn
    assert "HEAD-OF-doc" in after[-1]["content"]
    (record,) = [r for r in transcript.read(session.transcript.path) if r["kind"] == "compressed"][
        -1:
    ]
    assert record["summarised"] > 0 and record["after"] < record["before"]
    assert record["messages"][0]["content"] == first
    await session.close()

    # resume: the compressed conversation goes on, not the whole raw history
    fake.add(text("still here"))
    resumed, _ = await make_session(context_window=8192, max_tokens=1024, resume=session.id)
    await resumed.turn("and now?")
    sent = conversation_requests(fake)[-1]["messages"]
    assert any(SUMMARY_PREFIX in (m.get("content") or "") for m in sent)
    raw_reads = [m for m in transcript.messages(transcript.read(session.transcript.path))]
    assert len(sent) < len(raw_reads)
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert fake.refused == []
    await resumed.close()


async def test_old_results_become_stubs_before_anything_is_summarised(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    small_toolset(home)
    fake.window = 8192
    fake.route(SUMMARISER, *[text("summary")] * 10)
    session, _ = await make_session(context_window=8192, max_tokens=1024)
    document(workdir, "big.txt", 120)
    fake.add(tools(("read_file", {"path": "big.txt"})), text("read"))
    await session.turn("Read big.txt")
    stored = tool_messages({"messages": session.agent.messages})[0]["content"]
    session.agent.window.threshold = 0.2  # the next request is over the threshold
    fake.add(text("fine"))
    await session.turn("thanks")
    sent = tool_messages(conversation_requests(fake)[-1])
    assert sent[0]["content"].startswith("<persisted-output>")
    path = Path(sent[0]["content"].split("Full output saved to: ")[1].split("\n")[0])
    assert "HEAD-OF-big.txt" in path.read_text()  # the whole result, on disk, private
    assert oct(path.stat().st_mode & 0o777) == "0o600" and "HEAD-OF-big.txt" in stored
    await session.close()


@pytest.mark.parametrize("style", ["llama.cpp", "openai"])
async def test_a_refused_request_makes_room_and_is_sent_once_more(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path, style: str
) -> None:
    small_toolset(home)
    fake.window, fake.refusal_style = 4096, style  # the server is smaller than configured
    fake.route(SUMMARISER, *[text("summary")] * 5)
    document(workdir, "big.txt", 300)
    fake.add(tools(("read_file", {"path": "big.txt"})), text("it is lorem ipsum"))
    session, events = await make_session(context_window=32768, max_tokens=1024)
    finished = await session.turn("Read big.txt")
    assert finished.reason == "answered" and finished.text == "it is lorem ipsum"
    assert len(fake.refused) == 1  # refused once, then it fitted
    retried = conversation_requests(fake)[-1]
    assert "HEAD-OF-big.txt" in tool_messages(retried)[-1]["content"]
    assert session.agent.window.context == 4096  # learnt from what the server said
    (notice,) = [e for e in events if isinstance(e, ContextNotice)]
    assert "refused the request as too long" in notice.text and "4,096" in notice.text
    records = transcript.read(session.transcript.path)
    assert [r for r in records if r["kind"] == "context_refused"]
    await session.close()


async def test_refused_again_after_making_room_ends_the_turn_saying_so(
    make_session, fake: FakeOpenAI
) -> None:
    too_long = "the request exceeds the available context size, try increasing it"
    fake.add(error(400, too_long), error(400, too_long))
    session, events = await make_session()
    finished = await session.turn("hello")
    assert finished.reason == "error"
    assert "refused the request as too long" in finished.error and "again" in finished.error
    assert len(fake.requests) == 2  # once more, never a loop
    assert any(isinstance(e, ContextNotice) for e in events)
    await session.close()


async def test_a_first_request_larger_than_the_window_is_cut_not_refused(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    small_toolset(home)
    fake.window = 4096
    fake.add(text("ok"))
    session, _ = await make_session(context_window=4096, max_tokens=1024)
    pasted = "START " + "word " * 20_000
    finished = await session.turn(pasted)
    assert finished.reason == "answered" and fake.refused == [], finished.error
    sent = conversation_requests(fake)[-1]["messages"][0]["content"]
    assert sent.startswith("START ") and "cut to fit the model's context window" in sent
    await session.close()


async def test_other_results_over_their_share_are_spilled_with_a_stub_that_fits(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [web, skills]\n")
    fake.window = 4096
    (workdir / "big.txt").write_text("".join(f"needle {i}\n" for i in range(3000)))
    fake.add(
        tools(("search_files", {"pattern": "needle", "path": "big.txt", "limit": 1000})),
        text("found them"),
    )
    session, _ = await make_session(context_window=4096, max_tokens=1024)
    finished = await session.turn("find the needles")
    assert finished.reason == "answered" and fake.refused == [] and fake.overflows == []
    stub = tool_messages(conversation_requests(fake)[-1])[-1]["content"]
    assert stub.startswith("<persisted-output>") and "needle 0" in stub
    shown = int(stub.split("Preview (first ")[1].split(" chars)")[0])
    assert shown < 1000  # its preview is sized to the small window, not 1,500 characters
    await session.close()


async def test_the_users_interrupt_stops_a_summary_and_changes_nothing(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    import asyncio

    small_toolset(home)
    fake.route(SUMMARISER, text("too late", delay=30))
    session, _ = await make_session(context_window=8192, max_tokens=1024)
    background = "the sky is blue. " * 100
    for n in range(5):
        fake.add(text(f"noted {n}"))
        await session.turn(f"Remember this, part {n}: {background}")
    before = list(session.agent.messages)
    assert not summary_requests(fake)
    session.agent.window.threshold = 0.2  # the next request must be compressed first
    fake.add(text("never asked for"))
    turn = asyncio.create_task(session.turn("what did I say?"))
    for _ in range(200):
        if summary_requests(fake):
            break
        await asyncio.sleep(0.05)
    assert summary_requests(fake)
    session.cancel()
    finished = await asyncio.wait_for(turn, 10)  # not the summary's 30 s
    assert finished.reason == "cancelled", finished.error
    assert session.agent.messages[: len(before)] == before  # nothing compressed away
    kinds = [r["kind"] for r in transcript.read(session.transcript.path)]
    assert "compressed" not in kinds
    await session.close()


async def test_a_memory_providers_huge_text_is_cut_to_a_share_of_the_window(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    small_toolset(home)
    fake.window = 8192

    class Chatty:
        name = "chatty"

        def get_tool_schemas(self) -> list[dict]:
            return []

        def handle_tool_call(self, name: str, args: dict, **_: object) -> str:
            return "{}"

        def system_prompt_block(self) -> str:
            return "NOTES-START " + "remember everything " * 20_000

    fake.add(text("hello"), text("again"))
    session, _ = await make_session(context_window=8192, max_tokens=1024)
    session.runtime.memory.install("chatty", Chatty())
    for prompt in ("hi", "hi again"):
        finished = await session.turn(prompt)
        assert finished.reason == "answered", finished.error
    system = conversation_requests(fake)[-1]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("NOTES-START ")
    assert "memory provider's text was cut" in system["content"]
    assert len(system["content"]) < 8192  # a quarter of the window, not 400,000 characters
    assert fake.refused == [] and fake.overflows == []
    await session.close()


async def test_a_huge_call_of_the_model_is_cut_in_the_history_and_stays_valid_json(
    make_session, fake: FakeOpenAI, workdir: Path, home: Path
) -> None:
    small_toolset(home)
    fake.window = 8192
    fake.route(SUMMARISER, *[text("summary")] * 5)
    content = "A" * 60_000
    fake.add(tools(("write_file", {"path": "out.txt", "content": content})), text("written"))
    session, _ = await make_session(context_window=8192, max_tokens=1024)
    finished = await session.turn("write a big file")
    assert finished.reason == "answered", finished.error
    assert (workdir / "out.txt").read_text() == content  # the call itself ran whole
    assert fake.refused == [] and fake.overflows == []
    sent = conversation_requests(fake)[-1]["messages"]
    call = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]["function"]
    arguments = json.loads(call["arguments"])  # still JSON: servers parse past calls
    assert arguments["path"] == "out.txt" and len(arguments["content"]) < 20_000
    await session.close()
