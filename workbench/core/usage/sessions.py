"""The tool calls and model requests of past sessions, read from our transcripts.

A call is what the model asked for in an assistant message. A `tool_call` bridge entry (a
deferred tool called through tool search) counts as each real tool inside it, since that is
the tool the model used; its bridge is not counted again. A session's sub-agents (their
transcripts in a folder named after the session) count with it: their calls are uses of the
same tools. A session's requests are the model requests it made (each turn records how many
rounds it took; a turn cut short counts its assistant messages).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.agent import transcript

BRIDGE_CALL = "tool_call"  # Hermes's bridge: `calls: [{name, arguments}]`
OURS = "hermes-tui"  # the source of a session read from our transcripts


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    at: float  # when the model asked for it (seconds since the epoch; 0 when unknown)


@dataclass(frozen=True)
class SessionUse:
    """One past session: where it was read, when it started, its requests and its calls."""

    source: str  # OURS, or hermes_store.HERMES
    id: str
    started: float
    requests: int
    calls: tuple[Call, ...]


def called_names(tool_calls: Any) -> Iterator[str]:
    """The real tools an assistant message's `tool_calls` asked for (OpenAI's shape: each
    `{function: {name, arguments}}`), a bridge entry unwrapped; anything else is skipped."""
    if not isinstance(tool_calls, list):
        return
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        name = function.get("name")
        if not isinstance(name, str) or not name:
            continue
        inner = bridged(function.get("arguments")) if name == BRIDGE_CALL else None
        yield from inner if inner else (name,)


def bridged(arguments: Any) -> list[str]:
    """The names inside a `tool_call` bridge entry's arguments (a JSON string or an
    object); none when they cannot be read, and the entry then counts as the bridge."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    calls = arguments.get("calls") if isinstance(arguments, dict) else None
    if not isinstance(calls, list):
        return []
    names = [c.get("name") for c in calls if isinstance(c, dict)]
    return [n for n in names if isinstance(n, str) and n]


def recent_transcripts(home: Path, limit: int, problems: list[str]) -> list[SessionUse]:
    """The last `limit` sessions of our transcripts, oldest first. A session's id starts
    with the time it began, so the newest are the last names; what cannot be read is
    skipped and said in `problems`."""
    root = transcript.sessions_dir(home)
    try:
        paths = sorted(p for p in root.glob("*.jsonl") if transcript.SESSION_ID.match(p.stem))
    except OSError as exc:
        problems.append(f"cannot list {root}: {exc.strerror or exc}")
        return []
    out: list[SessionUse] = []
    for path in reversed(paths):
        if len(out) >= limit:
            break
        session = _read_session(path, problems)
        if session is not None:
            out.append(session)
    return out[::-1]


def _read_session(path: Path, problems: list[str]) -> SessionUse | None:
    records = _records(path, problems)
    if not records:
        return None
    requests, calls = _requests(records), list(_calls(records))
    for child in _subagent_paths(path, problems):
        child_records = _records(child, problems)
        requests += _requests(child_records)
        calls += _calls(child_records)
    started = records[0].get("at", 0)
    return SessionUse(OURS, path.stem, float(started), requests, tuple(calls))


def _records(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    try:
        records = transcript.read(path)
    except OSError as exc:
        problems.append(f"skipped {path.name}: {exc.strerror or exc}")
        return []
    if records.skipped:
        problems.append(f"{path.name}: {records.skipped} line(s) could not be read")
    return records


def _subagent_paths(path: Path, problems: list[str]) -> list[Path]:
    folder = path.with_suffix("")
    if not folder.is_dir():
        return []
    try:
        return sorted(folder.glob("*.jsonl"))
    except OSError as exc:
        problems.append(f"cannot list {folder}: {exc.strerror or exc}")
        return []


def _calls(records: Iterable[dict[str, Any]]) -> Iterator[Call]:
    """Every call of the transcript's own messages (a `compressed` record's copies of
    earlier messages are not calls again)."""
    for record in records:
        message = record.get("message") if record.get("kind") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            at = float(record.get("at", 0))
            yield from (Call(name, at) for name in called_names(message.get("tool_calls")))


def _requests(records: Iterable[dict[str, Any]]) -> int:
    """Model requests: each finished turn's rounds; a turn that never finished (a crash, a
    session still open) counts its assistant messages, one per request answered."""
    total = pending = 0
    for record in records:
        kind = record.get("kind")
        if kind == "message" and record["message"].get("role") == "assistant":
            pending += 1
        elif kind == "turn_finished":
            rounds = record.get("rounds")
            total += max(rounds if isinstance(rounds, int) else 0, pending)
            pending = 0
    return total + pending
