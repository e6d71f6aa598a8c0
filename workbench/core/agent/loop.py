"""The agent loop: stream a reply, run its tool calls, send the results back, repeat.

Each round offers the tools available at that moment (enabled toolsets, passing checks, the
session's own tools), streams the reply, assembles tool calls from the stream deltas, runs
them through the executor (parallel segments, approvals, timeouts, budgets) and sends the
results back in the model's order. At the round cap it asks once more for a final answer,
with tool_choice "none". The user's interrupt stops the stream and the running calls; the transcript
records what ran, what was cancelled and what never started. Endpoint failures end the turn
with a clear message, never a crash.

Every request fits the model's window: it is counted before it is sent (core.model.tokens), the
conversation is compressed when it nears the window (core.agent.compress), and tool results are
sized to the room left (core.agent.context). An endpoint that still refuses a request as too long
gets one retry after room is made, and the turn says what happened.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.agent.bridge import Bridge, Inner, Offer
from workbench.core.agent.completion import FINISHES, as_completion, read_completion
from workbench.core.agent.compress import Compressor, ContextTooSmall
from workbench.core.agent.context import Refusal, Window, refusal, result_room, short
from workbench.core.agent.events import (
    ContextCompressed,
    ContextNotice,
    ContextUsage,
    ModelProgress,
    RoundStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TurnFinished,
)
from workbench.core.agent.guards import (
    DESCRIBED,
    LEAN_SYSTEM,
    RepeatGuard,
    described_call,
    file_names,
    nudge,
    to_write,
    unlooked,
    unwritten,
)
from workbench.core.agent.offered import offered as offered_tools
from workbench.core.agent.own_tools import OwnToolsState, ToolRouter
from workbench.core.agent.text_calls import held_from, written_call
from workbench.core.agent.transcript import Transcript
from workbench.core.execution.events import (
    ApprovalAnswered,
    ToolCallFinished,
    ToolCallStarted,
)
from workbench.core.execution.executor import Executor
from workbench.core.execution.kept import by_hand
from workbench.core.execution.scheduler import ToolCall
from workbench.core.model.settings import ModelSettings, shown_url
from workbench.core.model.tokens import Estimate, Meter
from workbench.core.plugins.hooks import MiddlewareBlocked
from workbench.core.plugins.lifecycle import SessionHooks
from workbench.core.tools import errors
from workbench.core.tools.deferral import (
    TOOL_CALL,
    TOOL_DESCRIBE,
    TOOL_SEARCH,
    ToolSearchSettings,
    assemble,
)
from workbench.core.tools.entry import ToolEntry
from workbench.core.tools.memory import MemorySession

DELTA_INTERVAL = 0.03  # coalesce stream deltas to at most ~33 events a second
TIME_GRACE = 60.0  # after the time limit, the answer it asked for gets this long
ONE_CALL = "one_call"  # the finish of a lean reply whose stream was closed at a second call
WRITTEN_RUNS = 1  # calls written as text in the final round run per turn, then it must answer
WRITTEN_NOT_RUN = (
    "The model wrote a call to {name} instead of an answer after the tool-call limit; it was "
    "not run. Ask it to go on (it keeps what it found), or raise agent.max_turns."
)
MAX_TURNS_REACHED = (
    "The turn reached its limit of {n} model call(s) with tools (agent.max_turns): the model "
    "is asked to answer from what it has, without tools."
)
FINAL_NUDGE = "[The tool-call limit for this turn is reached. Answer from what you have, without calling tools.]"


class IncompleteStream(ValueError):
    """The endpoint closed the stream before finishing the reply."""


class ContextRefused(Exception):
    """The endpoint refused a request as too long, again after room was made."""


@dataclass(frozen=True)
class ServerTimings:
    """What a llama.cpp-based server says it did for a reply: tokens of the prompt taken
    from its cache and evaluated anew, tokens generated, and the time each took."""

    cached: int
    evaluated: int
    prompt_ms: float
    generated: int
    generate_ms: float


@dataclass
class _Reply:
    text: str = ""
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    usage: tuple[int, int] = (0, 0)
    finish: str = ""
    timings: ServerTimings | None = None
    shown: int = 0  # characters of `text` already streamed to the front ends
    written: str = ""  # the tool of a call the model wrote as text (text_calls)


class Agent:
    def __init__(
        self,
        settings: ModelSettings,
        tools: ToolRouter,
        state: OwnToolsState,
        executor: Executor,
        offered: Callable[[], list[str]],
        *,
        transcript: Transcript | None = None,
        client: Any = None,
        on_event: Callable[[object], None] | None = None,
        messages: list[dict[str, Any]] | None = None,
        memory: MemorySession | None = None,
        window: Window | None = None,
        meter: Meter | None = None,
        deferral: ToolSearchSettings | None = None,
        lifecycle: SessionHooks | None = None,
    ) -> None:
        self.settings = settings
        self.tools = tools
        self.state = state
        self.executor = executor
        self.offered = offered  # the tools the switches leave on now (the agent's own too)
        self.transcript = transcript
        self.client = client
        self.on_event = on_event
        self.messages: list[dict[str, Any]] = list(messages or [])
        self.memory = memory  # the memory provider's hooks (None for sub-agents, as Hermes)
        self._context = ""  # this turn's system text from the memory provider
        # the session's plugin hooks (None for sub-agents): on_session_start, pre_llm_call,
        # transform_llm_output, post_llm_call, on_session_end (core.plugins.lifecycle)
        self.lifecycle = lifecycle
        # user messages as the model was sent them (pre_llm_call's context appended), by
        # the stored message's identity: the stored one keeps the user's own words
        self._sent_as: dict[int, tuple[dict[str, Any], str]] = {}
        self._holding = False  # the answer is shown once transform_llm_output has run
        self._quiet = False  # the reply goes through llm_execution middleware: not streamed
        self._turn_id, self._requests = "", 0  # this turn's id, and its model requests so far
        self._held = ""  # the text of a reply without calls, not shown yet
        self.last_offered: list[str] = []
        self.overhead: list[float] = []  # our own time per round (excludes model and tools)
        self._stream_task: asyncio.Task[Any] | None = None  # the reply (or summary) awaited
        self._partial = ""  # the streaming reply's text so far, kept if the turn is cancelled
        self._cancelled = False
        self._timed_out = False  # the turn's hard wall-time cap stopped it
        self.guard = RepeatGuard()
        self._only_repeats = False  # the last round's calls were all refused as repeats
        self._first_round = False
        self._final = False  # this round must answer: tool_choice "none"
        self._to_write: list[str] = []  # lean: files the request asks for that do not exist
        self._must_look: list[str] = []  # lean: files the request names that exist: look first
        self.window = window or Window.for_model(
            settings.model, settings.context_window, settings.max_tokens, None
        )
        self.meter = meter or Meter(Estimate())
        self.used = 0  # tokens of the context in use (the last request and its reply)
        self._definitions_sent: list[dict[str, Any]] = []
        # tools.tool_search (None: every tool sent in full); the bridge answers the model's
        # tool_search, tool_describe and tool_call, and keeps what it described
        self.deferral = deferral
        self.bridge: Bridge | None = None
        # the local server's fixed prompt being restored or read: a request waits for it
        # (inside the stream's task, so the user's interrupt stops the wait)
        self.ready: asyncio.Future[Any] | None = None
        self._raw_sent = 0  # our uncorrected count of the last request sent
        self.compressor = Compressor(
            self.meter,
            self.window,
            executor.store,
            self._summarise,
            memory.pre_compress if memory is not None else None,
        )

    # -- public ------------------------------------------------------------------------

    def _time_up(self) -> None:
        self._timed_out = True
        self.cancel()

    def cancel(self) -> None:
        """The user's interrupt: stop the stream and the running tool calls."""
        self._cancelled = True
        if self._stream_task is not None:
            self._stream_task.cancel()
        self.executor.cancel()

    @property
    def turn_id(self) -> str:
        """The id of the turn running (or the last one): Hermes's turn_id in hooks."""
        return self._turn_id

    async def run_turn(self, prompt: str) -> TurnFinished:
        self._cancelled = self._timed_out = self._only_repeats = False
        self.guard.reset()
        checkpoints = self.executor.checkpoints  # one snapshot for the turn's rounds
        if checkpoints is not None:
            checkpoints.begin_turn()
        started = time.monotonic()
        # past the time limit the next round must answer; a grace later the turn is stopped
        limit = self.settings.turn_timeout
        watchdog = asyncio.get_running_loop().call_later(limit + TIME_GRACE, self._time_up)
        tokens = [0, 0]
        if self.memory is not None:
            context = await asyncio.to_thread(self.memory.context, prompt)
            self._context = await asyncio.to_thread(self._bounded_context, context)
        turn_id, task_id = secrets.token_hex(6), self.executor.label or "default"
        self._turn_id, self._requests = turn_id, 0
        first = not any(m.get("role") == "user" for m in self.messages)
        self._append({"role": "user", "content": prompt})
        lifecycle = self.lifecycle
        self._holding, self._held = (
            lifecycle is not None and lifecycle.hooks.has("transform_llm_output"),
            "",
        )
        if lifecycle is not None:
            await asyncio.to_thread(lifecycle.start)
            await self._plugin_context(lifecycle, task_id, turn_id, prompt, first)
        self._to_write = self._files_to_write(prompt)
        self._must_look = self._files_named(prompt) if self.settings.lean else []
        rounds, text, reason, error = 0, "", "answered", ""
        written_left = WRITTEN_RUNS
        try:
            # the rounds, the final one, and one more per call written as text in it
            for rounds in range(1, self.settings.max_rounds + 2 + WRITTEN_RUNS):
                final = (
                    rounds > self.settings.max_rounds
                    or self._only_repeats
                    or (rounds > 1 and time.monotonic() - started > limit)
                )
                if rounds == self.settings.max_rounds + 1:  # said once, when it is reached
                    self._emit(ContextNotice(MAX_TURNS_REACHED.format(n=self.settings.max_rounds)))
                reply = await self._round(rounds, final, tokens)
                text = reply.text
                if reply.calls or rounds > 1:
                    self._must_look = []  # it looked, or had its second chance
                if not reply.calls and not final and self._follow_up(reply.text, rounds == 1):
                    continue
                if not reply.calls:
                    reason = "max_rounds" if rounds > self.settings.max_rounds else "answered"
                    break
                if final and reply.written and written_left and time.monotonic() - started <= limit:
                    # told to answer, it wrote its next call as text: run it (the same gate)
                    # and ask for the answer again, once a turn
                    written_left -= 1
                    await self._run_calls(
                        reply, [d["function"]["name"] for d in self._definitions_sent]
                    )
                    if self._cancelled:
                        reason = "cancelled"
                        break
                    continue
                if final:  # a model that calls tools when told not to gets no more rounds
                    reason = "max_rounds"
                    if reply.written:  # its call is not its answer
                        self._emit(ContextNotice(WRITTEN_NOT_RUN.format(name=reply.written)))
                    break
                await self._run_calls(reply)
                if self._cancelled:
                    reason = "cancelled"
                    break
        except asyncio.CancelledError:
            if not self._cancelled:
                raise
            reason = "cancelled"
            if self._timed_out:
                reason, error = "time_limit", _time_limit_message(limit + TIME_GRACE)
                self._record("error", message=error)
        except Exception as exc:  # an endpoint failure ends the turn, never the app
            reason, error = "error", describe_error(exc, self.settings)
            self._record("error", message=error)
        finally:  # however the turn ended, the conversation stays one the API accepts
            watchdog.cancel()
            if checkpoints is not None:
                checkpoints.end_turn()
            self._answer_open_calls(error or "the turn was cancelled before it ran")
        if lifecycle is not None:
            text = await self._plugin_answer(lifecycle, task_id, turn_id, prompt, text, reason)
        finished = TurnFinished(
            reason, text, tokens[0], tokens[1], time.monotonic() - started, rounds, error,
            self.used, self.window.context,
        )  # fmt: skip
        if self.memory is not None and reason in ("answered", "max_rounds"):
            await asyncio.to_thread(self.memory.turn_finished, prompt, text, list(self.messages))
        self._record("turn_finished", **finished.__dict__)
        if self.transcript is not None:
            self.transcript.sync()
        self._emit(finished)
        return finished

    async def _plugin_context(
        self, lifecycle: SessionHooks, task_id: str, turn_id: str, prompt: str, first: bool
    ) -> None:
        """pre_llm_call: its context goes on the copy of this user message the model is sent,
        on this turn and the next ones (as Hermes sends it again), never into the record."""
        context = await asyncio.to_thread(
            lifecycle.turn_context,
            task_id=task_id,
            turn_id=turn_id,
            user_message=prompt,
            history=self.messages,
            first=first,
        )
        if context:
            message = self.messages[-1]
            self._sent_as[id(message)] = (message, f"{prompt}\n\n{context}")

    async def _plugin_answer(
        self,
        lifecycle: SessionHooks,
        task_id: str,
        turn_id: str,
        prompt: str,
        text: str,
        reason: str,
    ) -> str:
        """After the rounds: an answer goes through transform_llm_output (shown only then)
        and post_llm_call; every turn ends with on_session_end."""
        answered = bool(text) and reason in ("answered", "max_rounds")
        if answered:
            text = await asyncio.to_thread(lifecycle.answer, text)
        if self._holding and (answered or self._held):
            self._emit(TextDelta(text if answered else self._held))
        self._held = ""
        if answered:
            await asyncio.to_thread(
                lifecycle.answered,
                task_id=task_id,
                turn_id=turn_id,
                user_message=prompt,
                answer=text,
                history=self.messages,
            )
        await asyncio.to_thread(
            lifecycle.turn_ended,
            task_id=task_id,
            turn_id=turn_id,
            completed=reason == "answered",
            interrupted=reason in ("cancelled", "time_limit"),
        )
        return text

    def _as_sent(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The stored messages as the model is sent them: a user message pre_llm_call gave
        context to carries it (a copy; the stored one is the user's own words)."""
        if not self._sent_as:
            return messages
        out = []
        for message in messages:
            sent = self._sent_as.get(id(message))
            if sent is not None and sent[0] is message:
                message = {**message, "content": sent[1]}
            out.append(message)
        return out

    def _files_to_write(self, prompt: str) -> list[str]:
        if not self.settings.lean:
            return []
        return to_write(prompt, self._exists)

    def _files_named(self, prompt: str) -> list[str]:
        return [name for name in file_names(prompt) if self._exists(name)]

    def _exists(self, name: str) -> bool:
        return os.path.lexists(os.path.join(self.executor.cwd, name))

    def _follow_up(self, text: str, first: bool) -> bool:
        """Lean: an answer given without looking gets one more round, told why: a first
        reply that names a tool it did not call or calls none although the request names a
        file there is, or a turn that wrote nothing although its request asked for a file
        to be written (each once a turn)."""
        if not self.settings.lean:
            return False
        named = described_call(text, self.last_offered) if first else None
        if named is not None:
            self._append({"role": "user", "content": DESCRIBED.format(name=named)})
            return True
        if first and self._must_look:
            self._append({"role": "user", "content": unlooked(self._must_look)})
            return True
        if not self._to_write or self.guard.wrote_any:
            return False
        self._append({"role": "user", "content": unwritten(self._to_write)})
        self._to_write = []
        return True

    def warm_request(self) -> dict[str, Any]:
        """A request of one token whose prompt starts with the fixed part of every request
        of this session: the system prompt and the tools. Its prompt, less the model and
        the sampling, also names the fixed part (core.model.prompt_cache keys on it)."""
        definitions, _ = self._definitions()
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [*self._extra(), {"role": "user", "content": "Hello."}],
            "temperature": self.settings.temperature,
            "max_tokens": 1,
        }
        if definitions:
            request["tools"] = definitions
        return request

    def first_request(self, prompt: str) -> dict[str, Any]:
        """The request a turn's first round would send for `prompt` after this conversation:
        its tools, system text, options and tool_choice, built as `run_turn` builds it
        (less the memory provider's text, which is the provider's answer to the prompt).
        Nothing is sent and nothing kept (the doctor's probe sends it itself)."""
        kept = self.messages, self._must_look, self._first_round, self._final
        self.messages = [*self.messages, {"role": "user", "content": prompt}]
        self._must_look = self._files_named(prompt) if self.settings.lean else []
        self._first_round, self._final = True, False
        try:
            definitions, _ = self._definitions()
            return self._request(definitions)
        finally:
            self.messages, self._must_look, self._first_round, self._final = kept

    async def streamed(self, request: dict[str, Any]) -> tuple[str, list[tuple[str, str]], str]:
        """`request` streamed and read as a round reads it: the text, the calls (name and
        arguments, in order) and the finish reason. Raises what the stream raises."""
        reply = await self._stream(request)
        calls = [(c["name"], c["arguments"]) for _, c in sorted(reply.calls.items())]
        return reply.text, calls, reply.finish

    async def warm(self) -> bool:
        """Fill a local server's prompt cache with the system prompt and the tools, before
        the first prompt: on a 2-core CPU they take the bundled model about a minute to
        read, and a user types for a while after the session opens. The first turn then
        reads only its own tokens. What fails is ignored (the first turn says what is
        wrong); returns whether it worked."""
        request = {**self.warm_request(), "stream": True}
        if self.settings.local:
            request["extra_body"] = {"return_progress": True}
        try:
            stream = await self.client.chat.completions.create(**request)
            async for chunk in stream:  # how far it has read, for a user who waits on it
                progress = _progress(getattr(chunk, "prompt_progress", None))
                if progress is not None:
                    self._emit(replace(progress, phase="preparing"))
        except Exception:
            return False
        return True

    # -- one round ---------------------------------------------------------------------

    async def _round(self, number: int, final: bool, tokens: list[int]) -> _Reply:
        began = time.perf_counter()
        self._first_round = number == 1
        self._final = final
        # the final round keeps the tools in the request, with tool_choice "none": a request
        # without them is another prompt from its first tokens (the template renders them
        # in the system message), which a local server would evaluate again in full
        definitions, names = self._definitions()
        names = [] if final else names
        self.last_offered = names
        if self._held:  # the last reply was not the answer after all: shown as it was
            self._emit(TextDelta(self._held))
            self._held = ""
        self._emit(RoundStarted(number, tuple(names)))
        if final:
            self._append({"role": "user", "content": FINAL_NUDGE})
        self.overhead.append(time.perf_counter() - began)
        request = await self._fitted(definitions)
        reply = await self._send(request, definitions)
        self._shown_rest(reply, definitions)
        began = time.perf_counter()
        tokens[0] += reply.usage[0]
        tokens[1] += reply.usage[1]
        self._measured(reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _replayable(c["arguments"])},
                }
                for _, c in sorted(reply.calls.items())
            ]
        self._append(message)
        self.overhead[-1] += time.perf_counter() - began
        return reply

    def _shown_rest(self, reply: _Reply, definitions: list[dict[str, Any]]) -> None:
        """The reply's text not streamed yet, less a call written as text: that is made
        the call it is (run through the same gate as any other), never shown as text."""
        text, end = reply.text, len(reply.text)
        names = [d["function"]["name"] for d in definitions]
        written = written_call(text, names) if names and not reply.calls else None
        if written is not None:
            reply.calls = {
                0: {"id": f"call_text_{int(time.time() * 1000)}", "name": written.name,
                    "arguments": written.arguments}
            }  # fmt: skip
            reply.written, end = written.name, written.start
            reply.text = (text[: written.start] + text[written.end :]).strip()
            self._record("written_call", name=written.name, arguments=written.arguments)
        if end > reply.shown:
            if self._holding and not reply.calls:  # maybe the answer: shown once transformed
                self._held += text[reply.shown : end]
            else:
                self._emit(TextDelta(text[reply.shown : end]))
        reply.shown = len(text)

    def _definitions(self) -> tuple[list[dict[str, Any]], list[str]]:
        definitions, names = offered_tools(self.tools, self.offered(), self.settings.lean)
        if self.deferral is None:
            return definitions, names
        offer = self._offer(definitions, names)
        return offer.definitions, offer.names

    def _offer(self, definitions: list[dict[str, Any]], names: list[str]) -> Offer:
        """What the model is sent with deferral on. Made anew each round from what is offered
        then, as the tools are without deferral: the same tools give the same bytes (the
        assembly is deterministic), so a server's prompt cache keeps the prefix, and a tool
        switched on or off mid-conversation is seen. The bridge tools run as tools."""
        assert self.deferral is not None
        toolsets = {n: e.toolset for n in names if (e := self.tools.get_entry(n)) is not None}
        assembly = assemble(definitions, toolsets, self.deferral, self.window.context)
        deferred = set(assembly.deferred)
        offer = Offer(
            assembly.definitions,
            {d["function"]["name"]: d for d in definitions if d["function"]["name"] in deferred},
            self.deferral,
        )
        if self.bridge is None:
            self.bridge = Bridge(offer, source=self._source, known=self._known)
        else:  # what it described stays described
            self.bridge.offer = offer
        handlers = {TOOL_SEARCH: self.bridge.search, TOOL_DESCRIBE: self.bridge.describe}
        self.tools.bridge = {
            d["function"]["name"]: _bridge_entry(d, handlers[d["function"]["name"]])
            for d in assembly.bridge
            if d["function"]["name"] in handlers
        }
        return offer

    def _source(self, name: str) -> tuple[str, str]:
        entry = self.tools.get_entry(name)
        return (entry.source.value, entry.toolset) if entry is not None else ("builtin", "")

    def _known(self, name: str) -> bool:
        return self.tools.get_entry(name) is not None

    def _bounded_context(self, text: str) -> str:
        """A memory provider's text takes at most a quarter of the window: it is sent on
        every request and no compression can shrink it."""
        share = self.window.prompt // 4
        if self.meter.corrected(self.meter.text(text)) <= share:
            return text
        keep = int(share * self.meter.chars_per_token() * 0.9)
        return (
            text[:keep] + f"\n[… the memory provider's text was cut to fit the model's context "
            f"window: {len(text) - keep:,} more characters]"
        )

    def _extra(self) -> list[dict[str, Any]]:
        """The system text: the lean profile's and this turn's from the memory provider.

        Sent, never stored; the same in every round of a turn, so the server's prompt cache
        keeps the conversation's prefix.
        """
        parts = [LEAN_SYSTEM] if self.settings.lean else []
        parts += [self._context] if self._context else []
        return [{"role": "system", "content": "\n\n".join(parts)}] if parts else []

    def _request(self, definitions: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": self._extra() + one_voice(self._as_sent(self.messages)),
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": self.settings.temperature,
            "max_tokens": self.window.reply,  # the room the window keeps for the reply
        }
        if self.settings.local:  # llama.cpp says how far it has read the prompt, as it goes
            request["extra_body"] = {"return_progress": True}
        if definitions:
            request["tools"] = definitions
            if self._final:
                request["tool_choice"] = "none"
            elif self._must_look or (self._first_round and self.settings.require_tool):
                # look before answering: asked to, or (lean) the request names a file there
                # is. With our template llama.cpp takes it as a strong request, not a rule:
                # a reply without a call is asked once more (_follow_up)
                request["tool_choice"] = "required"
            request["messages"] += self._nudge()
        return request

    def _nudge(self) -> list[dict[str, Any]]:
        """The lean profile's line after tool results: sent, never stored, so the next
        round's prefix is unchanged."""
        if self.settings.lean and self.messages and self.messages[-1]["role"] == "tool":
            return [{"role": "user", "content": nudge(self._last_results())}]
        return []

    def _last_results(self) -> list[str]:
        """The contents of the tool results after the last assistant message."""
        results = []
        for message in reversed(self.messages):
            if message["role"] != "tool":
                break
            results.append(message["content"] if isinstance(message["content"], str) else "")
        return results

    # -- the window --------------------------------------------------------------------

    async def _count(self, definitions: list[dict[str, Any]]) -> tuple[int, int]:
        """(our raw count, the corrected count) of the conversation sent with `definitions`."""
        sent = self._extra() + one_voice(self._as_sent(self.messages))
        sent += self._nudge() if definitions else []
        raw = await asyncio.to_thread(self.meter.raw, sent, definitions)
        return raw, self.meter.corrected(raw)

    async def _fitted(self, definitions: list[dict[str, Any]]) -> dict[str, Any]:
        """The next request, the conversation compressed first if it nears the window."""
        raw, used = await self._count(definitions)
        if used > self.window.compress_at:
            await self.compress(definitions, reason="threshold")
            raw, used = await self._count(definitions)
        self._raw_sent, self._definitions_sent = raw, definitions
        return self._request(definitions)

    async def compress(
        self, definitions: list[dict[str, Any]], *, reason: str, target: int | None = None
    ) -> ContextCompressed | None:
        """Make room; the transcript records the new conversation so resume goes on from it."""
        messages, event = await self.compressor.compress(
            self.messages, self._extra(), definitions, reason=reason, target=target
        )
        if not (event.stubbed or event.summarised or event.trimmed):
            return None
        if self.bridge is not None:  # the schemas it loaded stay in what it is sent
            messages = self.bridge.kept(messages, self.messages)
        self.messages = messages
        alive = {id(m) for m in messages}
        self._sent_as = {k: v for k, v in self._sent_as.items() if k in alive}
        self._record("compressed", messages=messages, **event.__dict__)
        self.used = event.after
        self._emit(event)
        self._emit(ContextUsage(self.used, self.window.context))
        return event

    async def _summarise(self, system: str, text: str, max_tokens: int) -> str:
        """The summariser: the same model, no tools, one reply (the user's interrupt stops it)."""
        self._stream_task = asyncio.ensure_future(
            self.client.chat.completions.create(
                model=self.settings.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": text},
                ],
                temperature=self.settings.temperature,
                max_tokens=max_tokens,
                stream=False,
            )
        )
        try:
            response = await self._stream_task
        finally:
            self._stream_task = None
        choices = getattr(response, "choices", None) or []
        return str(choices[0].message.content or "") if choices else ""

    def _measured(self, reply: _Reply) -> None:
        """The endpoint's count of what we sent corrects ours; the context in use is shown."""
        prompt, completion = reply.usage
        if prompt > 0 and 0.25 <= prompt / max(1, self._raw_sent) <= 4:  # a sane report
            self.meter.observe(self._raw_sent, prompt)
            self.used = prompt + completion
        else:
            self.used = self.meter.corrected(self._raw_sent) + self.meter.text(reply.text)
        self._emit(ContextUsage(self.used, self.window.context))

    async def _send(self, request: dict[str, Any], definitions: list[dict[str, Any]]) -> _Reply:
        """Stream the reply; a refusal as too long makes room and tries once more."""
        try:
            return await self._stream_cancellable(request)
        except Exception as exc:
            found = refusal(exc)
            if found is None:
                raise
        await self._refused(found, definitions)
        request = self._request(definitions)
        try:
            return await self._stream_cancellable(request)
        except Exception as exc:
            again = refusal(exc)
            if again is None:
                raise
            raise ContextRefused(
                f"The endpoint refused the request as too long for the model's context "
                f"({again.message}), again after the conversation was compressed to "
                f"{short(self._raw_sent_corrected())} tokens of a {short(self.window.prompt)} "
                "window. Start a new session, or raise the model's context size "
                "(model.context_window and the server's)."
            ) from exc

    def _raw_sent_corrected(self) -> int:
        return self.meter.corrected(self._raw_sent)

    async def _refused(self, found: Refusal, definitions: list[dict[str, Any]]) -> None:
        """Learn from the refusal (the server's count, its real window), then make room."""
        notes = [f"The endpoint refused the request as too long ({found.message})."]
        if found.prompt_tokens:
            self.meter.observe(self._raw_sent, found.prompt_tokens)
        if found.context and found.context < self.window.context:
            notes.append(
                f"Its context holds {found.context:,} tokens, not the {self.window.context:,} "
                "assumed: the session uses its size from now on."
            )
            self.window.resize(found.context, self.settings.max_tokens)
            self.window.source = "endpoint"
        event = await self.compress(definitions, reason="refused")
        raw, _ = await self._count(definitions)
        self._raw_sent = raw
        notes.append(
            "The conversation was compressed and the request sent again."
            if event is not None
            else "Nothing could be removed; the request was sent again."
        )
        text = " ".join(notes)
        self._record("context_refused", message=found.message, note=text)
        self._emit(ContextNotice(text))

    async def _middleware(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request after the plugins' llm_request middleware (Hermes's arguments); one
        that fails blocks it (MiddlewareBlocked ends the turn). The stream stays ours."""
        hooks = self.executor.hooks
        self._requests += 1
        if hooks is None or not hooks.has_middleware("llm_request"):
            return request
        changed = await asyncio.to_thread(hooks.llm_request, request, **self._request_context())
        return {**changed, "stream": True, "stream_options": {"include_usage": True}}

    def _request_context(self) -> dict[str, Any]:
        """What Hermes tells llm_request and llm_execution middleware of this request."""
        return {
            "task_id": self.executor.label or "default",
            "turn_id": self._turn_id,
            "api_request_id": f"{self._turn_id}-{self._requests}",
            "session_id": self.executor.session_id,
            "platform": self.lifecycle.platform if self.lifecycle is not None else "",
            "model": self.settings.model,
            "provider": self.settings.provider,
            "base_url": self.settings.base_url or "",
            "api_mode": "chat_completions",
            "api_call_count": self._requests,
        }

    async def _executed(self, request: dict[str, Any]) -> _Reply:
        """The model call, through the plugins' llm_execution middleware when one is
        registered: the chain runs on a worker thread, its `next_call` makes our call on this
        loop (not streamed to the front ends: the chain may replace the answer, shown whole)
        and returns it as a ChatCompletion; what the chain returns is read back as the reply.
        One that fails before passing the call on, or answers no response, ends the turn."""
        hooks = self.executor.hooks
        if hooks is None or not hooks.has_middleware("llm_execution"):
            return await self._stream(request)
        loop = asyncio.get_running_loop()
        made: list[_Reply] = []
        inner: list[concurrent.futures.Future[_Reply]] = []
        stopped: list[bool] = []
        request_id = f"{self._turn_id}-{self._requests}"

        def next_call(payload: dict[str, Any]) -> Any:
            if stopped:
                raise asyncio.CancelledError
            payload = {**payload, "stream": True, "stream_options": {"include_usage": True}}
            future = asyncio.run_coroutine_threadsafe(self._stream(payload), loop)
            inner.append(future)
            reply = future.result()
            made.append(reply)
            return as_completion(
                reply.text, reply.calls, reply.finish, reply.usage, self.settings.model, request_id
            )

        self._quiet = True
        try:
            owner, answer = await asyncio.to_thread(
                hooks.llm_execution, request, next_call, **self._request_context()
            )
        except asyncio.CancelledError:
            stopped.append(True)
            for future in inner:
                future.cancel()
            raise
        finally:
            self._quiet = False
        try:
            read = read_completion(answer)
        except ValueError as exc:
            raise MiddlewareBlocked(
                f"llm_execution middleware of plugin {owner} gave no model response ({exc}): "
                "the turn ended"
            ) from None
        base = made[0] if made else _Reply()
        kept = base.finish if base.finish not in FINISHES else ""
        reply = _Reply(
            text=read.text,
            calls=read.calls,
            usage=read.usage or base.usage,
            finish=kept if kept and read.finish in ("stop", "tool_calls") else read.finish,
            timings=base.timings,
        )
        _named(reply)
        return reply

    async def _stream_cancellable(self, request: dict[str, Any]) -> _Reply:
        request = await self._middleware(request)
        task = asyncio.ensure_future(self._executed(request))
        self._stream_task = task
        try:
            return await task
        except asyncio.CancelledError:
            if self._cancelled and self._partial:
                self._append({"role": "assistant", "content": self._partial + " [interrupted]"})
                if self._holding:  # none of it was shown
                    self._held = self._partial
            raise
        finally:
            self._stream_task = None

    async def _stream(self, request: dict[str, Any]) -> _Reply:
        reply = _Reply()
        self._partial = ""
        local = self.settings.local
        if self.ready is not None and not self.ready.done():
            self._emit(ModelProgress("preparing"))
            await asyncio.wait({self.ready})  # never cancels it: it goes on being saved
        if local:
            self._emit(ModelProgress("reading"))
        last_emit = time.monotonic()
        # text that may be a call written as text is held back until the reply is complete
        calls_possible = bool(request.get("tools"))
        stream = await self.client.chat.completions.create(**request)
        tracking, generating = local, False  # any llama.cpp server may say it unasked
        async for chunk in stream:
            if progress := _progress(getattr(chunk, "prompt_progress", None)):
                tracking = True
                self._emit(progress)
            if tracking and not generating and _produced(chunk):
                generating = True
                self._emit(ModelProgress("generating"))
            if getattr(chunk, "usage", None):
                reply.usage = (chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
            reply.timings = _timings(getattr(chunk, "timings", None)) or reply.timings
            for choice in chunk.choices or []:
                delta = choice.delta
                if delta.content:
                    reply.text += delta.content
                    self._partial = reply.text
                for call in delta.tool_calls or []:
                    if self.settings.lean and reply.calls and call.index not in reply.calls:
                        # a small model gets one call a round; the server stops generating
                        # when the stream is closed (the 1.5B wrote the same search four
                        # times in one reply, to its 512-token cap)
                        reply.finish = ONE_CALL
                        break
                    slot = reply.calls.setdefault(
                        call.index, {"id": "", "name": "", "arguments": ""}
                    )
                    slot["id"] = call.id or slot["id"]
                    if call.function is not None:
                        slot["name"] += call.function.name or ""
                        slot["arguments"] += call.function.arguments or ""
                if choice.finish_reason and reply.finish != ONE_CALL:
                    reply.finish = choice.finish_reason
            if (
                not (self._holding or self._quiet)
                and time.monotonic() - last_emit >= DELTA_INTERVAL
            ):
                safe = held_from(reply.text) if calls_possible else len(reply.text)
                if safe > reply.shown:
                    self._emit(TextDelta(reply.text[reply.shown : safe]))
                    reply.shown, last_emit = safe, time.monotonic()
            if reply.finish == ONE_CALL:
                await stream.close()
                break
        if reply.timings is not None:
            self._emit(reply.timings)
        if not reply.finish:
            raise IncompleteStream(
                "the stream ended before the reply was complete (no finish_reason)"
            )
        _named(reply)
        return reply

    async def _run_calls(self, reply: _Reply, allowed: list[str] | None = None) -> None:
        calls = [
            {"id": c["id"], "name": c["name"], "arguments": c["arguments"]}
            for _, c in sorted(reply.calls.items())
        ]
        offered = frozenset(self.last_offered if allowed is None else allowed)
        inners = [self._unwrap(c) for c in calls]
        judged = [_judged(c, inner, offered) for c, inner in zip(calls, inners, strict=True)]
        fresh = {
            i for i, real in enumerate(judged) if real is None or not self.guard.repeated(*real)
        }
        refused = [real for i, real in enumerate(judged) if i not in fresh and real is not None]
        self._only_repeats = not fresh and not self.guard.another_try(refused)
        results: dict[str, Any] = {}
        runs, bridged = self._unwrapped([(calls[i], inners[i]) for i in sorted(fresh)], results)
        if runs:
            budget = await self._result_budget(len(runs))
            sent = {calls[i]["id"]: calls[i]["arguments"] for i in fresh}
            for outcome in await self.executor.run(runs, budget=budget, allowed=offered):
                arguments = sent.get(outcome.call.id, outcome.call.arguments)
                self.guard.wrote(outcome.call.name, arguments, outcome.status == "ok")
                self.guard.found(outcome.call.name, arguments, outcome.content)
                via = outcome.call.via
                results[via or outcome.call.id] = outcome.content
                if via:
                    self._bridge_event(bridged.pop(via), outcome.status, outcome.content)
        for pair in bridged.values():  # never run (no outcome came back)
            self._bridge_event(pair, "skipped", errors.not_run("no result came back"))
        began = time.perf_counter()
        for i, call in enumerate(calls):
            real = judged[i]
            if i in fresh or real is None:
                content = results.get(call["id"], errors.not_run("no result came back"))
            else:
                content = self.guard.refusal(*real)
                self._record("repeated_call", id=call["id"], name=real[0])
            if isinstance(content, dict):  # a multimodal result: the model gets its text here
                content = content.get("text_summary") or json.dumps(content.get("content"))[:2000]
            self._append({"role": "tool", "tool_call_id": call["id"], "content": content})
        self.overhead[-1] += time.perf_counter() - began

    def _unwrap(self, call: dict[str, Any]) -> Inner | str | None:
        """The real call a tool_call names, or the error the model gets instead; None for
        any other call, and when the bridge is not offered (tool_call is then no tool)."""
        if call["name"] != TOOL_CALL or self.bridge is None or not self.bridge.offer.active:
            return None
        return self.bridge.unwrap(call["id"], call["arguments"])

    def _unwrapped(
        self, calls: list[tuple[dict[str, Any], Inner | str | None]], results: dict[str, Any]
    ) -> tuple[list[Any], dict[str, tuple[dict[str, Any], float]]]:
        """The calls to run, each with what `_unwrap` made of it: a tool_call is the real call
        it names (run, gated and recorded as any call, marked with the bridge call it came
        through), or its error at once. The bridge call itself is a row of its own, the
        parent of the call it made."""
        runs: list[Any] = []
        bridged: dict[str, tuple[dict[str, Any], float]] = {}
        for call, inner in calls:
            if inner is None:
                runs.append(call)
                continue
            started = self._bridge_started(call)
            if isinstance(inner, Inner):
                runs.append(ToolCall(inner.id, inner.name, inner.arguments, via=inner.via))
                bridged[call["id"]] = (call, started)
            else:
                results[call["id"]] = inner
                self._bridge_event((call, started), "invalid", inner)
        return runs, bridged

    def _bridge_started(self, call: dict[str, Any]) -> float:
        try:
            arguments = json.loads(call["arguments"])
        except ValueError:
            arguments = None
        at = time.monotonic()
        executor = self.executor
        self._call_event(
            ToolCallStarted(
                call["id"], TOOL_CALL, arguments if isinstance(arguments, dict) else None,
                0, False, "", at, executor.label, executor.parent,
            )
        )  # fmt: skip
        return at

    def _bridge_event(
        self, bridged: tuple[dict[str, Any], float], status: str, content: Any
    ) -> None:
        call, started = bridged
        executor = self.executor
        self._call_event(
            ToolCallFinished(
                call["id"], TOOL_CALL, status, content, started, time.monotonic(),
                label=executor.label, parent=executor.parent,
            )
        )  # fmt: skip

    def _call_event(self, event: ToolCallStarted | ToolCallFinished) -> None:
        """A bridge call's event goes where the executor's go (transcript, front end)."""
        observe = self.executor.on_event or self.observe
        observe(event)

    def _answer_open_calls(self, why: str) -> None:
        """Give each tool call of the last assistant message a result if it has none."""
        last = next(
            (
                i
                for i in range(len(self.messages) - 1, -1, -1)
                if self.messages[i]["role"] == "assistant"
            ),
            None,
        )
        if last is None:
            return
        after = self.messages[last + 1 :]  # ids may repeat across turns: only these count
        answered = {m.get("tool_call_id") for m in after if m.get("role") == "tool"}
        for call in self.messages[last].get("tool_calls") or []:
            if call["id"] not in answered:
                self._append(
                    {"role": "tool", "tool_call_id": call["id"], "content": errors.not_run(why)}
                )

    async def _result_budget(self, calls: int) -> Any:
        """Results sized to the room left; too little room makes room first."""
        definitions = self._definitions_sent
        _, used = await self._count(definitions)
        room = result_room(self.window, used, calls, self.meter)
        crowded = used + room.tokens > self.window.compress_at
        if crowded and await self.compress(definitions, reason="threshold") is not None:
            _, used = await self._count(definitions)
            room = result_room(self.window, used, calls, self.meter)
        return room.budget

    # -- events and records ------------------------------------------------------------

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._record("message", message=message)

    def _record(self, kind: str, **data: Any) -> None:
        if self.transcript is not None:
            self.transcript.record(kind, **data)

    def _emit(self, event: object) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def observe(self, event: object) -> None:
        """The executor's and the broker's events, into the transcript and on to the front end.
        Calls, approvals and sub-agents are recorded; every event (a checkpoint's too) is
        passed on."""
        match event:
            case ToolCallStarted():
                self._record(
                    "tool_started",
                    id=event.call_id,
                    name=event.name,
                    arguments=event.arguments,
                    segment=event.segment,
                    parallel=event.parallel,
                    reason=event.reason,
                    label=event.label,
                    parent=event.parent,
                    **_via(event.via),
                )
            case ToolCallFinished():
                self._record(
                    "tool_finished",
                    id=event.call_id,
                    name=event.name,
                    status=event.status,
                    duration=event.duration,
                    spilled=str(event.spilled) if event.spilled else None,
                    content=event.content if isinstance(event.content, str) else "<multimodal>",
                    **_via(event.via),
                )
            case SubagentStarted():
                self._record(
                    "child_started",
                    id=event.call_id,
                    name=event.name,
                    goal=event.goal,
                    transcript=str(event.transcript or ""),
                )
            case SubagentFinished():
                self._record("child_finished", **event.__dict__)
            case ApprovalAnswered(request=request, decision=decision):
                self._record(
                    "approval",
                    tool=request.tool,
                    command=request.command,
                    reason=request.reason,
                    decision=decision.choice.value,
                    why=decision.reason,
                )
        self._emit(event)


def _judged(
    call: dict[str, Any], inner: Inner | str | None, offered: frozenset[str]
) -> tuple[str, Any] | None:
    """The call the repeat guard judges: the real one a tool_call makes, so the same call
    made directly or through the bridge, in any of tool_call's shapes, is one call. None for
    a call that cannot run (a name not offered, a tool_call the bridge refuses): it gets its
    error again, and the same call made the way that runs is not taken for a repeat of it."""
    if isinstance(inner, Inner):
        return inner.name, inner.arguments
    if inner is not None or call["name"] not in offered:
        return None
    return call["name"], call["arguments"]


def _via(call_id: str) -> dict[str, str]:
    """A recorded call's bridge call, when it came through one (no key otherwise)."""
    return {"via": call_id} if call_id else {}


def _bridge_entry(definition: dict[str, Any], handler: Callable[..., str]) -> ToolEntry:
    """A bridge tool as the executor sees a tool: read-only, so it runs beside others."""
    function = definition["function"]
    return ToolEntry(
        name=function["name"],
        toolset="tool_search",
        schema={"description": function["description"], "parameters": function["parameters"]},
        handler=handler,
        emoji="🔎",
        parallel_safe=True,
    )


def _timings(data: Any) -> ServerTimings | None:
    """llama.cpp's `timings` (an extra field of a stream's last chunk), if it sent them."""
    if not isinstance(data, dict):
        return None
    try:
        return ServerTimings(
            int(data.get("cache_n", 0)),
            int(data["prompt_n"]),
            float(data.get("prompt_ms", 0.0)),
            int(data.get("predicted_n", 0)),
            float(data.get("predicted_ms", 0.0)),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _progress(data: Any) -> ModelProgress | None:
    """llama.cpp's `prompt_progress` (asked for with `return_progress`), as an event."""
    if not isinstance(data, dict):
        return None
    try:
        total, done = int(data["total"]), int(data["processed"])
        return ModelProgress("reading", min(done, total), total, int(data.get("cache", 0)))
    except (KeyError, TypeError, ValueError):
        return None


def _produced(chunk: Any) -> bool:
    """Whether a stream chunk carries generated text or a tool call's part."""
    return any(
        c.delta is not None and (c.delta.content or c.delta.tool_calls) for c in chunk.choices or []
    )


def one_voice(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as sent: user messages in a row joined into one. A compressed
    conversation has them (its first request, the note of kept schemas, a summary), and so
    has a prompt after a turn cancelled before any reply; some endpoints refuse them, and a
    model reads them as one request anyway. The stored messages stay as they are."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if out and message.get("role") == "user" and out[-1].get("role") == "user":
            joined = _joined(out[-1].get("content"), message.get("content"))
            out[-1] = {**out[-1], "content": joined}
        else:
            out.append(message)
    return out


def _joined(first: Any, second: Any) -> Any:
    """Two messages' contents as one: text with a blank line between, or the parts of both."""
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return [*_parts(first), *_parts(second)]


def _parts(content: Any) -> list[Any]:
    return (
        list(content)
        if isinstance(content, list)
        else [{"type": "text", "text": str(content or "")}]
    )


def _replayable(arguments: str) -> str:
    """A call's arguments as the conversation keeps them: a JSON object, or `{}` when the
    model's were not one (cut off by the reply's cap, or malformed). The call itself runs
    with what the model wrote, so its result says what was wrong; but llama.cpp's server
    refuses every later request whose history holds arguments it cannot parse."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return "{}"
    return arguments if isinstance(parsed, dict) else "{}"


def _time_limit_message(seconds: float) -> str:
    return (
        f"The turn was stopped after {seconds:.0f} s (model.turn_timeout): the model had been "
        "asked to answer and had not finished."
    )


def _named(reply: _Reply) -> None:
    """Every call of a reply with an id of its own (never one that passes for a call run by
    hand) and arguments."""
    for index, slot in reply.calls.items():
        slot["id"] = slot["id"] or f"call_{index}_{int(time.time() * 1000)}"
        if by_hand(slot["id"]):  # an endpoint's id must not pass for a call run by hand
            slot["id"] = f"call_{slot['id']}"
        slot["arguments"] = slot["arguments"] or "{}"


def describe_error(exc: BaseException, settings: ModelSettings) -> str:
    """What went wrong with the endpoint, and what to do about it."""
    import openai

    where = settings.describe()
    if isinstance(exc, ContextRefused | MiddlewareBlocked):
        return str(exc)
    if isinstance(exc, ContextTooSmall):
        return f"The conversation cannot fit the model's context window: {exc}."
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        url = shown_url(settings.base_url or "")
        return f"Cannot reach the model endpoint ({url}): {cause}. Is it running?"
    if isinstance(exc, openai.AuthenticationError):
        used = (
            f"Check {settings.key_source}."
            if settings.key_source
            else "No key was sent: set model.api_key_env (or the provider's key variable)."
        )
        return f"The endpoint rejected the API key (401) for {where}. {used}"
    if isinstance(exc, openai.NotFoundError):
        return f"Not found (404) at {where}: is the model name '{settings.model}' right? {_message(exc)}"
    if isinstance(exc, openai.RateLimitError):
        return (
            f"Rate limited (429) by {where}, still after retries. Try again later. {_message(exc)}"
        )
    if isinstance(exc, openai.APIStatusError):
        return f"The endpoint failed ({exc.status_code}) after retries: {_message(exc)}"
    if isinstance(exc, openai.APIError | json.JSONDecodeError | ValueError) or type(
        exc
    ).__module__.startswith(("httpx", "httpcore")):
        return f"The reply stream broke off or was not valid ({type(exc).__name__}: {exc}). The turn was ended."
    return f"The turn failed: {type(exc).__name__}: {exc}"


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        return str(error.get("message") if isinstance(error, dict) else error)
    return str(getattr(exc, "message", "") or exc)
