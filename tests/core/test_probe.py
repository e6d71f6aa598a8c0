"""The model probe against the scripted OpenAI-protocol server, one mode for each way a
server loses a tool call: each reply classified as it is, the agent's request being the one
a session's first round sends, and advice for what was found."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_openai import REFUSAL, FakeOpenAI, text
from workbench.core import probe
from workbench.core.model.settings import ModelSettings
from workbench.core.runtime import load_runtime
from workbench.core.session import ChatSession

ORDER = [("minimal", True), ("minimal", False), ("agent", True), ("agent", False)]


def _settings(fake: FakeOpenAI) -> ModelSettings:
    return ModelSettings("test-model", base_url=fake.url, api_key="test-key", temperature=0.0)


async def _probe(home: Path, fake: FakeOpenAI, workdir: Path, **kw) -> probe.Report:
    return await probe.run(load_runtime(home), _settings(fake), cwd=str(workdir), **kw)


@pytest.mark.parametrize(
    ("mode", "kinds", "detail"),
    [
        ("native", ["native"] * 4, ""),
        ("text-fence", ["text"] * 4, "fence: "),
        ("text-tags", ["text"] * 4, "tags: "),
        ("text-bare", ["text"] * 4, "bare JSON: "),
        ("text-brackets", ["text"] * 4, "brackets: "),
        ("wrong-name", ["wrong-name"] * 4, "no_such_tool"),
        ("bad-arguments", ["bad-arguments"] * 4, "not valid JSON"),
        ("no-call", ["no-call"] * 4, "probably noon"),
        ("stream-broken", ["stream-broken", "native"] * 2, ""),
        ("refused", ["refused"] * 4, REFUSAL),
    ],
)
async def test_each_way_of_losing_a_call_is_told_apart(
    home: Path, fake: FakeOpenAI, workdir: Path, mode: str, kinds: list[str], detail: str
) -> None:
    fake.mode = mode
    seen: list[probe.Finding] = []
    report = await _probe(home, fake, workdir, on_finding=seen.append)
    assert [(f.request, f.stream) for f in report.findings] == ORDER
    assert [f.kind for f in report.findings] == kinds
    assert seen == report.findings  # each told as it came
    assert all(detail in f.detail for f in report.findings if f.kind == kinds[0])
    assert len(fake.requests) == 4
    assert [bool(r.get("stream")) for r in fake.requests] == [s for _, s in ORDER]
    assert report.ok is (mode == "native")
    (advice,) = [a for a in report.advice if a.startswith(kinds[0])]
    data = report.as_json()
    assert [r["class"] for r in data["requests"]] == kinds
    assert set(data) == {"endpoint", "requests", "advice"} and data["advice"][0] == advice


async def test_a_server_that_never_answers_is_a_timeout(
    home: Path, fake: FakeOpenAI, workdir: Path
) -> None:
    fake.mode = "timeout"
    report = await _probe(home, fake, workdir, timeout=0.5)
    assert [f.kind for f in report.findings] == ["timeout"] * 4
    assert report.findings[0].detail == "no complete reply within 0.5 s"
    assert "--timeout" in report.advice[0]


async def test_no_endpoint_listening_is_refused_with_why(home: Path, workdir: Path) -> None:
    gone = FakeOpenAI().start()
    gone.stop()  # its port now refuses connections
    report = await _probe(home, gone, workdir)
    assert [f.kind for f in report.findings] == ["refused"] * 4
    assert "Cannot reach the model endpoint" in report.findings[0].detail


async def test_the_agent_request_is_the_one_a_session_sends(
    home: Path, fake: FakeOpenAI, workdir: Path
) -> None:
    runtime = load_runtime(home)
    session = ChatSession(runtime, _settings(fake), cwd=str(workdir))
    await session.start()
    fake.add(text("It is a readme."))
    try:
        await session.turn(probe.AGENT_PROMPT)
    finally:
        await session.close()
    (sent,) = fake.requests
    fake.requests.clear()
    fake.mode = "native"
    await probe.run(runtime, _settings(fake), cwd=str(workdir))
    streamed, plain = fake.requests[2:]
    assert streamed == sent  # tools, system text, options: byte for byte the session's
    assert len(sent["tools"]) > 5
    assert plain == {k: v for k, v in sent.items() if k not in ("stream", "stream_options")}
    minimal = fake.requests[0]
    assert [t["function"]["name"] for t in minimal["tools"]] == ["get_time"]


def test_a_call_written_as_text_names_its_form() -> None:
    tools = [probe.MINIMAL_TOOL]
    reply = probe.Reply('<tool_call>{"name": "get_time", "arguments": {}}</tool_call>', [], "stop")
    assert probe.classify(reply, tools) == ("text", "tags: get_time({}) in the text")
    missing = probe.Reply("", [("get_time", "{}")], "tool_calls")
    kind, detail = probe.classify(missing, tools)
    assert kind == "bad-arguments" and "missing required argument 'city'" in detail
    assert (
        probe.classify(probe.Reply("", [("get_time", '{"city": "Oslo"}')], "tool_calls"), tools)[0]
        == "native"
    )


async def test_a_stream_that_breaks_off_is_stream_broken(
    home: Path, fake: FakeOpenAI, workdir: Path
) -> None:
    from tests.support.fake_openai import cut, garbage, tools

    call = ("get_time", {"city": "Paris"})
    fake.add(cut(), tools(call), garbage(), tools(("read_file", {"path": "README.md"})))
    report = await _probe(home, fake, workdir)
    assert [f.kind for f in report.findings] == ["stream-broken", "native"] * 2
    assert "without streaming the same request got the call" in report.findings[0].detail
    assert "broke off or was not valid" in report.findings[2].detail
