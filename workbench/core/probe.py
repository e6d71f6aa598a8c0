"""The model probe (`hermes-tui doctor model`, the workbench's model check): does this
endpoint give the agent tool calls it can use?

Against the configured endpoint (or the bundled model, started for the probe) it sends a
minimal request with one harmless tool, then the request the agent's first round would
send (`Agent.first_request`: its tools, system text, options and tool_choice), each
streamed and not, and classifies each reply (`CLASSES`). A streamed reply is read by the
agent's own stream reader; a call written in the text is recognised by the agent's own
reader (core.agent.text_calls), which says its form. Nothing the model calls is run.
The advice says what to change and what hermes-tui already does about each finding.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.agent.loop import Agent, describe_error
from workbench.core.agent.text_calls import FORMS, written_call
from workbench.core.model.local import LocalModelError, LocalServer
from workbench.core.model.settings import ModelSettings
from workbench.core.runtime import Runtime
from workbench.core.session import probe_agent, session_window, start_local
from workbench.core.tools.arguments import ArgumentError, prepare_arguments

CLASSES = (
    "native",  # a proper tool call
    "text",  # a call written in the reply's text (detail: its form, FORMS)
    "wrong-name",  # a call of a tool that was not offered
    "bad-arguments",  # arguments that are not JSON or do not fit the tool's schema
    "no-call",  # an answer without a call
    "stream-broken",  # streamed: no call (or a broken stream); not streamed: a call
    "refused",  # an HTTP error (detail: its message)
    "timeout",  # no complete reply in time
)
TIMEOUT = 120.0  # seconds a request may take (an endpoint)
LOCAL_TIMEOUT = 600.0  # the bundled model on a small CPU reads the agent's prompt for minutes

MINIMAL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current local time in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
MINIMAL_PROMPT = "What time is it in Paris? Call the get_time tool to find out."
AGENT_PROMPT = "Please read the file README.md and say in one line what it is about."
REPLY_TOKENS = 256  # the minimal request's room for its reply


@dataclass(frozen=True)
class Finding:
    request: str  # "minimal" or "agent"
    stream: bool
    kind: str  # one of CLASSES ("class" in JSON)
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "stream": self.stream,
            "class": self.kind,
            "detail": self.detail,
        }

    @property
    def label(self) -> str:
        return f"{self.request}, {'streamed' if self.stream else 'not streamed'}"


@dataclass
class Report:
    endpoint: str  # which model and where (ModelSettings.describe)
    findings: list[Finding] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every request got a proper tool call."""
        return bool(self.findings) and all(f.kind == "native" for f in self.findings)

    def as_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "requests": [f.as_json() for f in self.findings],
            "advice": list(self.advice),
        }


@dataclass(frozen=True)
class Reply:
    text: str
    calls: list[tuple[str, str]]  # (name, arguments text), in order
    finish: str


def classify(reply: Reply, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """(class, detail) of one reply to a request that offered `tools`."""
    functions = {d["function"]["name"]: d["function"] for d in tools if "function" in d}
    if reply.calls:
        name, arguments = reply.calls[0]
        if name not in functions:
            return "wrong-name", (
                f"called '{_short(name, 60)}', which is not one of the {len(functions)} "
                "tool(s) offered"
            )
        try:
            prepare_arguments(arguments, functions[name])
        except ArgumentError as exc:
            return "bad-arguments", f"{name}: {exc} (arguments: {_short(arguments)})"
        return "native", f"{name}({_short(arguments)})"
    written = written_call(reply.text, list(functions))
    if written is not None:
        return "text", f"{written.form}: {written.name}({_short(written.arguments)}) in the text"
    said = _short(reply.text.strip(), 160) or "nothing"
    return "no-call", f"answered without a call (finish_reason {reply.finish or 'none'}): {said}"


async def run(
    runtime: Runtime,
    settings: ModelSettings,
    *,
    timeout: float | None = None,
    cwd: str | None = None,
    server: LocalServer | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> Report:
    """Probe the endpoint of `settings` (the bundled model: `server` if given, else one
    started for the probe and stopped after it). `on_finding` hears each as it comes."""
    import openai

    report = Report(settings.describe())
    limit = timeout or (LOCAL_TIMEOUT if settings.local else TIMEOUT)
    owned: LocalServer | None = None
    executor = runtime.executor(broker=None, cwd=cwd)
    try:
        if settings.local and server is None:
            window = session_window(runtime, settings)
            try:
                owned = server = await asyncio.to_thread(start_local, runtime, settings, window)
            except LocalModelError as exc:
                report.findings = [
                    Finding(kind, flag, "refused", f"the bundled model: {exc}")
                    for kind in ("minimal", "agent")
                    for flag in (True, False)
                ]
                report.advice = advise(report.findings, settings)
                return report
        base_url: str | None  # None only for the bundled model, which has its server
        if server is not None:
            base_url, api_key = server.base_url, server.api_key
        else:
            base_url, api_key = settings.base_url, settings.api_key or "not-needed"
        agent = probe_agent(runtime, settings, executor)
        agent.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=limit
        )
        try:
            for name, request in (("minimal", minimal_request(settings)),
                                  ("agent", agent.first_request(AGENT_PROMPT))):  # fmt: skip
                pair = []
                for stream in (True, False):
                    finding = await _probe_one(agent, name, request, stream, limit, settings)
                    pair.append(finding)
                streamed, plain = pair
                if streamed.kind in ("no-call", "stream-broken") and plain.kind == "native":
                    pair[0] = Finding(
                        name,
                        True,
                        "stream-broken",
                        f"{streamed.detail}; without streaming the same request got the call",
                    )
                for finding in pair:
                    report.findings.append(finding)
                    if on_finding is not None:
                        on_finding(finding)
        finally:
            await agent.client.close()
    finally:
        executor.shutdown()
        if owned is not None:
            owned.stop()
    report.advice = advise(report.findings, settings)
    return report


def minimal_request(settings: ModelSettings) -> dict[str, Any]:
    return {
        "model": settings.model,
        "messages": [{"role": "user", "content": MINIMAL_PROMPT}],
        "tools": [MINIMAL_TOOL],
        "temperature": settings.temperature,
        "max_tokens": REPLY_TOKENS,
    }


async def _probe_one(
    agent: Agent,
    name: str,
    request: dict[str, Any],
    stream: bool,
    limit: float,
    settings: ModelSettings,
) -> Finding:
    import openai

    sent = dict(request, stream=True)
    if not stream:  # what only a stream takes (usage at its end, llama.cpp's progress)
        for key in ("stream", "stream_options", "extra_body"):
            sent.pop(key, None)
    tools = list(sent.get("tools") or [])
    try:
        reply = await asyncio.wait_for(_send(agent, sent, stream), limit)
    except (TimeoutError, openai.APITimeoutError):
        return Finding(name, stream, "timeout", f"no complete reply within {limit:g} s")
    except openai.APIStatusError as exc:
        return Finding(name, stream, "refused", describe_error(exc, settings))
    except openai.APIConnectionError as exc:
        return Finding(name, stream, "refused", describe_error(exc, settings))
    except Exception as exc:  # a stream that broke off or was not valid
        if stream:
            return Finding(name, stream, "stream-broken", describe_error(exc, settings))
        return Finding(name, stream, "refused", describe_error(exc, settings))
    kind, detail = classify(reply, tools)
    return Finding(name, stream, kind, detail)


async def _send(agent: Agent, request: dict[str, Any], stream: bool) -> Reply:
    if stream:
        text, calls, finish = await agent.streamed(request)
        return Reply(text, calls, finish)
    completion = await agent.client.chat.completions.create(**request)
    choice = completion.choices[0]
    message = choice.message
    calls = [
        (c.function.name or "", c.function.arguments or "{}")
        for c in message.tool_calls or []
        if getattr(c, "function", None) is not None
    ]
    return Reply(message.content or "", calls, choice.finish_reason or "")


def advise(findings: list[Finding], settings: ModelSettings) -> list[str]:
    """What to change for what was found, and what hermes-tui already does about it."""
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    advice = []
    for kind in CLASSES:
        found = by_kind.get(kind)
        if not found or (kind == "native" and len(found) < len(findings)):
            continue  # what went wrong is said, not what went right
        where = (
            "every request" if len(found) == len(findings) else "; ".join(f.label for f in found)
        )
        only_agent = all(f.request == "agent" for f in found)
        advice.append(f"{kind} ({where}): {_ADVICE[kind](found, settings, only_agent)}")
    if not advice:
        advice.append("nothing was probed")
    return advice


def _native(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    return "proper tool calls: nothing to change."


def _text(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    forms = sorted({f.detail.split(":", 1)[0] for f in found})
    return (
        f"the call came back as text ({', '.join(forms)}), not as a tool call: the server's "
        "chat template does not parse the form the model writes. Serve the model with a "
        "chat template whose tool-call format is the model's (llama.cpp: --jinja and the "
        "model's template; vLLM: --enable-auto-tool-choice with the model's "
        "--tool-call-parser; Ollama: a model whose template has tools). hermes-tui already "
        f"reads a call written as {', '.join(FORMS)} in the reply and runs it through the same "
        "approval gate, so sessions work; but the server cannot enforce tool_choice on it "
        "(model.first_tool_call: required has no effect)."
    )


def _wrong_name(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    return (
        "the model called a tool that was not offered. Offer fewer tools (`hermes-tui "
        "toolsets disable NAME`, tools.tool_search to defer them, or model.lean: true for "
        "a small model), or use a larger model. hermes-tui answers such a call with "
        "Hermes's \"Tool '...' does not exist. Available tools: ...\", so the model can "
        "call the right one."
    )


def _bad_arguments(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    return (
        "the call's arguments are not a JSON object that fits the tool's schema. Fewer or "
        "simpler tools, a lower model.temperature or a larger model help. hermes-tui "
        "already coerces arguments as Hermes does (numbers, booleans, JSON in strings) and "
        "answers what still does not fit with the argument named, without running the tool."
    )


def _no_call(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    fewer = (
        " Only the agent's request went without a call: it offers many tools; offer fewer "
        "(`hermes-tui toolsets disable NAME`, tools.tool_search) or set model.lean: true."
        if only_agent
        else ""
    )
    return (
        "the model answered without calling the tool. Set model.first_tool_call: required "
        '(tool_choice "required" in a turn\'s first round), and check that the server '
        "renders tools into the prompt (llama.cpp: --jinja; vLLM: "
        f"--enable-auto-tool-choice).{fewer} hermes-tui already asks a lean model once more "
        "when it answers without looking."
    )


def _stream_broken(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    return (
        "streamed, the call was lost (or the stream broke off); without streaming it came. "
        "The server's streaming tool-call parser is at fault: update it (llama.cpp, vLLM "
        "and Ollama have each fixed such bugs) or put a proxy that does not stream in "
        "front of it. hermes-tui always streams (to show the reply as it comes) and has no "
        "setting to turn streaming off, so sessions on this endpoint lose these calls."
    )


def _refused(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    first = found[0].detail
    if only_agent:
        return (
            f"{first} Only the agent's request was refused: its tools or options are what "
            "the endpoint does not take, or it is too long for the model's context. Offer "
            "fewer tools (tools.tool_search, `hermes-tui toolsets disable NAME`), or check "
            "that the server accepts `tools` and `tool_choice` (vLLM: "
            "--enable-auto-tool-choice; llama.cpp: --jinja)."
        )
    return (
        f"{first} hermes-tui retries a refused request twice in a session; one refused as "
        "too long is compressed and sent again."
    )


def _timeout(found: list[Finding], settings: ModelSettings, only_agent: bool) -> str:
    return (
        "no complete reply in time. A local server reading a long prompt is slow on a "
        "small CPU: fewer tools shorten the agent's prompt (tools.tool_search). A session "
        "waits up to model.turn_timeout for a turn; `hermes-tui doctor model --timeout S` "
        "waits longer."
    )


_ADVICE: dict[str, Callable[[list[Finding], ModelSettings, bool], str]] = {
    "native": _native,
    "text": _text,
    "wrong-name": _wrong_name,
    "bad-arguments": _bad_arguments,
    "no-call": _no_call,
    "stream-broken": _stream_broken,
    "refused": _refused,
    "timeout": _timeout,
}


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def dumps(report: Report) -> str:
    return json.dumps(report.as_json(), indent=2, ensure_ascii=False)
