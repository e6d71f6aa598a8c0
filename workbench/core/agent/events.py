"""The agent's events, in the order a turn emits them: a round starts, text streams, the
context is measured or compressed, sub-agents start and finish, the transcript may fail, the
turn finishes. `workbench.core.events` gathers them with every other core event."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ContextUsage:
    """How much of the model's context the conversation takes now."""

    used: int  # tokens: the last request and its reply
    window: int  # the model's whole context


@dataclass(frozen=True)
class ContextNotice:
    """Something the user should know about the context (a refusal, a smaller window)."""

    text: str


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class RoundStarted:
    round: int
    offered: tuple[str, ...]


@dataclass(frozen=True)
class ModelProgress:
    """What the bundled model is doing before its reply streams, so a slow model can be
    told from a hung one: loading its file, preparing the fixed prompt (restored from disk
    or read once), reading this request's prompt (tokens so far of the total, those taken
    from its cache counted as read), generating."""

    phase: str  # loading, preparing, reading, generating
    done: int = 0  # reading: prompt tokens read so far (the cached ones included)
    total: int = 0  # reading: tokens of the whole prompt; 0 while the server has not said
    cached: int = 0  # reading: tokens taken from the server's cache

    def describe(self) -> str:
        if self.phase == "loading":
            return "loading the local model…"
        if self.phase == "preparing" and self.total:
            return (
                f"reading the model's fixed prompt: {self.done:,} / {self.total:,} tokens "
                f"({100 * self.done // self.total}%; once, kept for later sessions)"
            )
        if self.phase == "preparing":
            return "reading the model's fixed prompt (once; kept for later sessions)…"
        if self.phase == "generating":
            return "generating…"
        if not self.total:
            return "reading the prompt…"
        percent = 100 * self.done // self.total
        cached = f", {self.cached:,} from cache" if self.cached else ""
        return f"reading the prompt: {self.done:,} / {self.total:,} tokens ({percent}%{cached})"


@dataclass(frozen=True)
class TurnFinished:
    reason: str  # answered, max_rounds, cancelled, error
    text: str
    prompt_tokens: int
    completion_tokens: int
    elapsed: float
    rounds: int
    error: str = ""  # also why a time_limit turn was stopped
    context: int = 0  # tokens of the context in use at the end of the turn
    window: int = 0  # the model's context window


@dataclass(frozen=True)
class ContextCompressed:
    """The conversation was compressed (an event for the front ends, and a record)."""

    before: int  # tokens before
    after: int  # tokens after
    window: int  # the model's context, in tokens
    stubbed: int  # old tool results replaced by their stubs
    summarised: int  # messages replaced by the summary
    trimmed: int  # messages cut to fit
    summary: str = ""
    reason: str = "threshold"  # threshold, refused (the endpoint said too long), resumed
    problem: str = ""  # the summariser failed: what was done instead

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ContextCompressed:
        """The event back from its transcript record (whatever a damaged record holds)."""

        def number(key: str) -> int:
            value = record.get(key)
            return int(value) if isinstance(value, int | float) else 0

        return cls(
            number("before"), number("after"), number("window"), number("stubbed"),
            number("summarised"), number("trimmed"), reason=str(record.get("reason") or ""),
        )  # fmt: skip

    def describe(self) -> str:
        from workbench.core.agent.context import short

        parts = []
        if self.stubbed:
            parts.append(f"{self.stubbed} result{'s' * (self.stubbed != 1)} stubbed")
        if self.summarised:
            parts.append(f"{self.summarised} message{'s' * (self.summarised != 1)} summarised")
        if self.trimmed:
            parts.append(f"{self.trimmed} cut to fit")
        done = ", ".join(parts) or "nothing removed"
        return (
            f"context compressed {short(self.before)} → {short(self.after)} / "
            f"{short(self.window)}: {done}"
        )


@dataclass(frozen=True)
class SubagentStarted:
    call_id: str
    name: str
    goal: str
    transcript: Path | None


@dataclass(frozen=True)
class SubagentFinished:
    call_id: str
    name: str
    reason: str  # answered, max_rounds, error, timeout, cancelled
    rounds: int
    error: str = ""
    goal: str = ""
    answer: str = ""  # the sub-agent's final reply, when it gave one


@dataclass(frozen=True)
class TranscriptFailed:
    """The transcript cannot be written (a full disk, a read-only or unreadable home)."""

    reason: str
