"""Context compression: a long conversation made to fit its model's window again.

In order, stopping as soon as the conversation is under its target:
1. old tool results (outside the latest turns) are replaced by their spill stubs: the full
   text is saved in the session's private spill directory, the model keeps a preview and
   the path to read it back from;
2. the middle of the conversation is summarised by the model itself; the first user request
   and the latest turns stay whole, and the memory provider's `on_pre_compress` text is
   given to the summariser to keep;
3. if the request is still over the window (a single huge message), the largest messages
   are cut, their heads kept, with a note saying so.
The caller records the new conversation (a `compressed` transcript record), so a resumed
session goes on from it rather than from the whole raw history.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.agent.bridge import inner_calls
from workbench.core.agent.context import Window
from workbench.core.agent.events import ContextCompressed
from workbench.core.execution.budget import Budgeted, SpillStore, spill
from workbench.core.model.tokens import Meter

TARGET = (
    0.5  # after compressing, half the room the fixed part (tools, first request) leaves is free
)
TAIL = 0.35  # the latest turns kept whole take at most this much of it
MIN_MIDDLE = 0.1  # a middle smaller than this share of the window is not worth a summary
STUB_MIN_CHARS = 600  # shorter tool results stay as they are
STUB_PREVIEW = 200
SUMMARY_PREFIX = "[Summary of the earlier conversation"
SUMMARY_SYSTEM = (
    "You summarise the earlier part of a conversation between a user and an AI agent that "
    "uses tools, so the agent can continue the work without it. Keep: what the user asked "
    "for, decisions made, facts found (file paths, names, values, errors), what was changed, "
    "and what remains to do. Be concise and specific; write plain text, no preamble."
)
LATEST_REQUEST_CHARS = 2_000


class ContextTooSmall(Exception):
    """Nothing more can be removed and the request is still over the window."""


Summarise = Callable[[str, str, int], Awaitable[str]]  # (system, text, max_tokens) -> summary


@dataclass
class Compressor:
    meter: Meter
    window: Window
    store: SpillStore | None = None
    summarise: Summarise | None = None
    pre_compress: Callable[[list[dict[str, Any]]], str] | None = None
    problems: list[str] = field(default_factory=list)

    async def compress(
        self,
        messages: list[dict[str, Any]],
        extra: list[dict[str, Any]],
        definitions: list[dict[str, Any]],
        *,
        reason: str = "threshold",
        target: int | None = None,
    ) -> tuple[list[dict[str, Any]], ContextCompressed]:
        """The conversation made to fit under `target` (default: half the window)."""

        def count(conversation: list[dict[str, Any]]) -> int:
            return self.meter.request(extra + conversation, definitions)

        before = count(messages)
        head = _head_end(messages)
        # what no compression can remove: tool definitions, system text, the first request
        free = max(0, self.window.prompt - count(messages[:head]))
        target = target if target is not None else self.window.prompt - int(free * (1 - TARGET))
        tail = self._tail_start(messages, head, int(free * TAIL))
        insights = await self._pre_compress(messages[head:tail])
        out, stubbed = await asyncio.to_thread(self._stub_old_results, messages, head, tail)
        summarised, summary, problem = 0, "", ""
        middle = out[head:tail]
        worth = bool(middle) and self._tokens(middle) >= free * MIN_MIDDLE
        if count(out) > target and worth:
            summary, problem = await self._summary(middle, latest_request(out, tail), insights)
            role = "assistant" if tail < len(out) and out[tail].get("role") == "user" else "user"
            out = [*out[:head], {"role": role, "content": summary}, *out[tail:]]
            summarised = len(middle)
        out, trimmed = self._trim(out, extra, definitions)
        event = ContextCompressed(
            before, count(out), self.window.context, stubbed, summarised, trimmed,
            summary, reason, problem,
        )  # fmt: skip
        return out, event

    # -- which messages ------------------------------------------------------------------

    def _tokens(self, messages: list[dict[str, Any]]) -> int:
        return self.meter.corrected(sum(self.meter.message(m) for m in messages))

    def _tail_start(self, messages: list[dict[str, Any]], head: int, budget: int) -> int:
        """Where the latest turns begin: whole units (a user message, or an assistant
        message with its tool results), as many as fit the tail's share, at least one."""
        starts = [
            i
            for i in range(head, len(messages))
            if messages[i].get("role") in ("user", "assistant")
        ]
        if not starts:
            return len(messages)
        chosen, used = starts[-1], 0
        for start in reversed(starts):
            used = self._tokens(messages[start:])
            if used > budget and start != starts[-1]:
                break
            chosen = start
        return chosen

    def _stub_old_results(
        self, messages: list[dict[str, Any]], head: int, tail: int
    ) -> tuple[list[dict[str, Any]], int]:
        out, stubbed = list(messages), 0
        for index in range(head, tail):
            message = out[index]
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str):
                continue
            if len(content) <= STUB_MIN_CHARS:
                continue
            out[index] = {**message, "content": self._stub(message, content)}
            stubbed += 1
        return out, stubbed

    def _stub(self, message: dict[str, Any], content: str) -> str:
        saved = re.search(r"Full output saved to: (.+)", content)
        if "<persisted-output>" in content and saved:  # spilled already: a shorter preview
            preview = content.split("):\n", 1)[-1][:STUB_PREVIEW]
            return (
                "<persisted-output>\n"
                f"Full output saved to: {saved.group(1).strip()}\n"
                "Use the read_file tool with offset and limit to read it again.\n"
                f"Preview:\n{preview}\n...\n</persisted-output>"
            )
        call_id = str(message.get("tool_call_id") or "tool_result")
        stub = spill(Budgeted("", call_id, content, len(content)), self.store, STUB_PREVIEW).content
        assert isinstance(stub, str)  # a spill's stub is always text
        return stub

    # -- the summary -------------------------------------------------------------------

    async def _pre_compress(self, middle: list[dict[str, Any]]) -> str:
        """The memory provider sees what is about to go; what it returns is kept."""
        if self.pre_compress is None or not middle:
            return ""
        text = await asyncio.to_thread(self.pre_compress, list(middle))
        return text if isinstance(text, str) else ""

    async def _summary(
        self, middle: list[dict[str, Any]], latest: str, insights: str
    ) -> tuple[str, str]:
        problem = ""
        text = ""
        if self.summarise is not None:
            reply_tokens = max(128, min(1024, self.window.prompt // 6))
            room = self.window.prompt - reply_tokens - self.meter.text(SUMMARY_SYSTEM) - 64
            source = transcript_text(middle, max(500, int(room * self.meter.chars_per_token())))
            if insights.strip():
                source += f"\n\nThe memory provider asks to keep:\n{insights.strip()}"
            try:
                text = (await self.summarise(SUMMARY_SYSTEM, source, reply_tokens)).strip()
            except Exception as exc:  # a failed summary must never end the turn
                problem = f"the summary request failed ({type(exc).__name__}: {exc})"
            if not text and not problem:
                problem = "the model wrote an empty summary"
        if not text:
            text = mechanical_summary(middle)
        if problem:
            problem += "; the earlier messages were replaced by a list of what they were"
            self.problems.append(problem)
        head = (
            f"{SUMMARY_PREFIX}: {len(middle)} messages were summarised to fit the model's "
            "context window; the whole conversation is in the session's transcript.]"
        )
        body = f"{head}\n\n{text}"
        if latest:
            body += f"\n\nThe user's latest request, verbatim:\n{latest}"
        return body, problem

    # -- the last resort ---------------------------------------------------------------

    def _trim(
        self,
        messages: list[dict[str, Any]],
        extra: list[dict[str, Any]],
        definitions: list[dict[str, Any]],
    ) -> tuple[list[dict[str, Any]], int]:
        """Cut the largest messages (heads kept) until the request fits the window."""
        out, cut = list(messages), set[int]()
        limit = self.window.prompt
        for _ in range(64):
            total = self.meter.request(extra + out, definitions)
            if total <= limit:
                return out, len(cut)
            sizes = [(self.meter.message(m), i) for i, m in enumerate(out)]
            size, index = max(sizes)
            if size <= 64:
                break
            excess = total - limit
            keep_tokens = max(16, min(size // 2, size - excess - 32))
            keep_chars = int(keep_tokens * self.meter.chars_per_token() * 0.9)
            out[index] = cut_message(out[index], keep_chars)
            cut.add(index)
        total = self.meter.request(extra + out, definitions)
        if total > limit:
            raise ContextTooSmall(
                f"the request needs {total:,} tokens even with every message cut, and the "
                f"model's window holds {limit:,} (the tool definitions alone take "
                f"{self.meter.corrected(self.meter.tools(definitions)):,}): raise "
                "model.context_window and the server's context size, or offer fewer tools"
            )
        return out, len(cut)


def _head_end(messages: list[dict[str, Any]]) -> int:
    """The head kept whole: everything up to and including the first user request."""
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            return index + 1
    return 0


def latest_request(messages: list[dict[str, Any]], tail: int) -> str:
    """The latest user request, when the summary is about to swallow it."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        text = message.get("content")
        text = text if isinstance(text, str) else ""
        if text.startswith(SUMMARY_PREFIX):
            return ""
        in_tail = any(m is message for m in messages[tail:])
        in_head = messages.index(message) < _head_end(messages)
        return "" if in_tail or in_head else text[:LATEST_REQUEST_CHARS]
    return ""


def transcript_text(messages: list[dict[str, Any]], limit: int) -> str:
    """The messages as plain text for the summariser, each capped so all of them fit."""
    per = max(200, limit // max(1, len(messages)))
    lines = []
    for message in messages:
        role = str(message.get("role") or "?").upper()
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            for name, arguments in inner_calls(
                str(function.get("name")), function.get("arguments")
            ):
                shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
                text += f"\n[calls {name}({shown})]"
        if len(text) > per:
            text = text[: per - 40] + f" … [{len(text) - per + 40:,} characters left out]"
        lines.append(f"{role}: {text}")
    return "\n\n".join(lines)[:limit]


def mechanical_summary(messages: list[dict[str, Any]]) -> str:
    """No summary from the model: say what the removed messages were."""
    calls: dict[str, int] = {}
    requests = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            for name, _ in inner_calls(str(function.get("name") or "?"), function.get("arguments")):
                calls[name] = calls.get(name, 0) + 1
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            requests.append(message["content"][:200])
    lines = []
    if requests:
        lines.append("Earlier requests: " + " | ".join(requests))
    if calls:
        lines.append("Tools called: " + ", ".join(f"{n} ×{c}" for n, c in sorted(calls.items())))
    return "\n".join(lines) or "(nothing of note)"


def cut_message(message: dict[str, Any], keep_chars: int) -> dict[str, Any]:
    """A message with its content (and any call arguments) cut to `keep_chars`, head kept."""
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str) and len(content) > keep_chars:
        out["content"] = (
            content[:keep_chars]
            + f"\n[… cut to fit the model's context window: {len(content) - keep_chars:,} "
            "more characters are in the session's transcript]"
        )
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [_cut_call(call, keep_chars) for call in calls]
    return out


def _cut_call(call: dict[str, Any], keep_chars: int) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = str(function.get("arguments") or "")
    if len(arguments) <= keep_chars:
        return call
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):  # stays valid JSON: servers parse past calls' arguments
        per = max(40, keep_chars // max(1, len(parsed)))
        parsed = {
            k: (v[:per] + " …[cut]" if isinstance(v, str) and len(v) > per else v)
            for k, v in parsed.items()
        }
        function["arguments"] = json.dumps(parsed, ensure_ascii=False)
    else:
        function["arguments"] = "{}"
    return {**call, "function": function}
