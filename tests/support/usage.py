"""Sessions with known tool calls, written through the real transcript writer."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.hermes_store import bridge, call
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


T0 = 1_795_000_000.0  # 2026-11-18, the oldest session; one an hour after it


def at(session: int, second: float = 0) -> float:
    return T0 + 3600 * session + second


def session_id(n: int) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(at(n))) + f"-{n:06x}"


def write_known_sessions(home: Path) -> list[str]:
    """Six sessions, oldest first. In the last five: read_file 6 calls in 5 sessions (one
    through the bridge, one by a sub-agent, one in a turn cut short), terminal 3 in 3,
    project_report 1 (through the bridge); write_file only in the oldest. Requests: 3, 2,
    4, 4 and 2 (15, so 3 a session)."""
    copy = {"role": "assistant", "content": "", "tool_calls": [call("read_file")]}
    write_session(home, session_id(0), at(0), [Turn([(at(0, 10), [call("write_file")])])])
    write_session(
        home,
        session_id(1),
        at(1),
        [
            Turn(
                [
                    (at(1, 10), [call("read_file"), call("read_file")]),
                    (at(1, 20), [call("terminal")]),
                ]
            )
        ],
    )
    write_session(
        home, session_id(2), at(2), [Turn([(at(2, 10), [bridge("project_report", "read_file")])])]
    )
    write_session(
        home,
        session_id(3),
        at(3),
        [Turn([(at(3, 10), [call("read_file")])]), Turn([(at(3, 20), [call("terminal")])])],
        compressed=[copy],  # a copy of an earlier call: not counted again
    )
    write_session(
        home,
        session_id(4),
        at(4),
        [Turn([(at(4, 10), [call("terminal")])])],
        subagents={"helper": [Turn([(at(4, 30), [call("read_file")])])]},
    )
    write_session(
        home,
        session_id(5),
        at(5),
        [Turn([]), Turn([(at(5, 10), [call("read_file")])], finished=False)],
    )
    return [session_id(n) for n in range(6)]
