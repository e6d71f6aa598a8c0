"""Sessions with known tool calls, written through the real transcript writer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.agent import transcript


@dataclass
class Turn:
    """One turn: an assistant message per entry of `calls` (when, its `tool_calls`), then
    the answer; `rounds` requests in all. An unfinished turn has no `turn_finished`."""

    calls: list[tuple[float, list[dict[str, Any]]]] = field(default_factory=list)
    finished: bool = True

    @property
    def rounds(self) -> int:
        return len(self.calls) + 1


def write_session(
    home: Path,
    session_id: str,
    started: float,
    turns: list[Turn],
    subagents: dict[str, list[Turn]] | None = None,
    compressed: list[dict[str, Any]] | None = None,
) -> Path:
    """A session's transcript (and its sub-agents'); `compressed`: messages a `compressed`
    record holds (copies of earlier ones, which are not calls again)."""
    path = transcript.sessions_dir(home) / f"{session_id}.jsonl"
    record = transcript.Transcript(path)
    record.record("session", at=started, id=session_id, model="test-model")
    if compressed is not None:
        record.record("compressed", at=started, messages=compressed, before=9, after=3)
    _turns(record, started, turns)
    record.close()
    for name, child_turns in (subagents or {}).items():
        child = transcript.Transcript(path.with_suffix("") / f"{name}.jsonl")
        child.record("session", at=started, id=f"{session_id}/{name}", model="test-model")
        _turns(child, started, child_turns)
        child.close()
    return path


def _turns(record: transcript.Transcript, started: float, turns: list[Turn]) -> None:
    for turn in turns:
        record.record("message", at=started, message={"role": "user", "content": "go"})
        for at, entries in turn.calls:
            message = {"role": "assistant", "content": "", "tool_calls": entries}
            record.record("message", at=at, message=message)
            for entry in entries:
                result = {"role": "tool", "tool_call_id": entry["id"], "content": "ok"}
                record.record("message", at=at, message=result)
        if turn.finished:
            answer = {"role": "assistant", "content": "done"}
            record.record("message", at=started, message=answer)
            record.record("turn_finished", at=started, reason="answered", rounds=turn.rounds)
