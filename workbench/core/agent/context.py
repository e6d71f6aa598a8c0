"""The model's window: how much a request may hold, and how big tool results may be.

The window is the model's context size less what its reply may take (the `max_tokens` we
send). A request is counted before it is sent (core.model.tokens) and never sent over the window.
Tool results are sized to what is left of it: the room under the compression threshold,
shared among the batch's calls, with a floor so a small window still gets the head of a
file. When an endpoint refuses a request as too long anyway, `refusal` reads what it said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.execution.budget import DEFAULT_PREVIEW_SIZE_CHARS, BudgetConfig
from workbench.core.model.tokens import Meter

DEFAULT_THRESHOLD = 0.75  # compress when the conversation fills this much of the window
UNKNOWN_WINDOW = 32_768  # a model we know nothing about; an endpoint's refusal corrects it
MIN_REPLY = 256
RESULT_FLOOR = 0.25  # a batch's results may always take this much of the window
MARGIN = 0.03  # counts are corrected estimates: never plan to the last token
READ_OVERHEAD = 0.85  # read_file's JSON (escapes, line numbers' padding) takes the rest
MIN_PREVIEW = 200

# Context sizes of model families we know, by name prefix (after any "provider/" part).
KNOWN_WINDOWS = (
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.5", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
)


def known_window(model: str) -> int | None:
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, size in KNOWN_WINDOWS:
        if name == prefix or name.startswith((prefix + "-", prefix + ".", prefix + ":")):
            return size
    return None


@dataclass
class Window:
    context: int  # the model's whole context, in tokens
    reply: int  # reserved for the reply: the max_tokens every request sends
    threshold: float = DEFAULT_THRESHOLD
    source: str = "config"  # config, model name, default, endpoint (learnt from a refusal)

    @classmethod
    def for_model(
        cls, model: str, context_window: int | None, max_tokens: int, threshold: float | None
    ) -> Window:
        size, source = context_window, "config"
        if not size:
            size, source = known_window(model), "model name"
        if not size:
            size, source = UNKNOWN_WINDOW, "default"
        window = cls(size, 0, _threshold(threshold), source)
        window.resize(size, max_tokens)
        return window

    def resize(self, context: int, max_tokens: int) -> None:
        """A small window keeps most of itself for the prompt: the reply gets at most a quarter."""
        self.context = max(512, int(context))
        self.reply = max(64, min(int(max_tokens), max(MIN_REPLY, self.context // 4)))

    @property
    def prompt(self) -> int:
        """The most a request may hold: the context less the reply's room and a margin."""
        return int((self.context - self.reply) * (1 - MARGIN))

    @property
    def compress_at(self) -> int:
        return int(self.prompt * self.threshold)


def _threshold(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.1 <= value <= 0.95:
        return float(value)
    return DEFAULT_THRESHOLD


@dataclass(frozen=True)
class ResultRoom:
    """What a batch of tool results may take, in tokens and in characters per call."""

    tokens: int
    per_call_chars: int
    budget: BudgetConfig


def result_room(window: Window, used: int, calls: int, meter: Meter) -> ResultRoom:
    """Results share the room left under the compression threshold (never less than a floor,
    never more than the window itself allows), each call an equal part."""
    hard = window.prompt - used
    room = max(window.compress_at - used, int(window.prompt * RESULT_FLOOR))
    tokens = max(0, min(room, hard))
    chars = int(tokens * meter.chars_per_token())
    share = max(1, chars // max(1, calls))
    budget = BudgetConfig(
        result_chars=share,
        turn_chars=max(1, chars),
        preview_chars=max(MIN_PREVIEW, min(DEFAULT_PREVIEW_SIZE_CHARS, share // 3)),
        read_chars=max(1, int(share * READ_OVERHEAD)),
    )
    return ResultRoom(tokens, share, budget)


# -- an endpoint's "too long" ---------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """An endpoint refused a request as longer than its context."""

    message: str
    prompt_tokens: int | None = None  # what it counted, when it says
    context: int | None = None  # its real context size, when it says


_MARKERS = (
    "exceeds the available context size",  # llama.cpp
    "exceed_context_size_error",
    "context_length_exceeded",  # OpenAI
    "maximum context length",
)


def refusal(exc: BaseException) -> Refusal | None:
    """The refusal in an HTTP 400 (llama.cpp's or OpenAI's wording), or None."""
    if getattr(exc, "status_code", None) != 400:
        return None
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or getattr(exc, "message", "") or exc)
    words = " ".join([message, str(error.get("type") or ""), str(error.get("code") or "")])
    if not any(marker in words for marker in _MARKERS):
        return None
    prompt = _int(error.get("n_prompt_tokens")) or _number_after(
        message, (r"request \((\d+) tokens\)", r"resulted in (\d+) tokens", r"(\d+) tokens in")
    )
    context = _int(error.get("n_ctx")) or _number_after(
        message, (r"context size \((\d+) tokens\)", r"maximum context length is (\d+)")
    )
    return Refusal(message, prompt, context)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and value > 0 else None


def _number_after(text: str, patterns: tuple[str, ...]) -> int | None:
    for pattern in patterns:
        found = re.search(pattern, text)
        if found:
            return int(found.group(1))
    return None


def signed(tokens: int) -> str:
    """A change in tokens: +208, -1.2k, ±0."""
    return ("+" if tokens > 0 else "-" if tokens < 0 else "±") + short(abs(tokens))


def short(tokens: int) -> str:
    """12345 → '12.3k', 900 → '900'; a window of 32768 → '32k', as context sizes are said."""
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024}k"
    if tokens < 1000:
        return str(tokens)
    value = tokens / 1000
    return f"{value:.0f}k" if value >= 100 or value == int(value) else f"{value:.1f}k"
