"""Session transcripts: an append-only JSON-lines file per session that survives a crash.

Every record is written and flushed as it happens (a killed process loses nothing written
before); a torn last line is skipped on read. The conversation is rebuilt from `message`
records, so a session can be resumed; everything else (tool calls, approvals, errors,
usage) is there for the UI, search and export.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.agent.bridge import inner_calls
from workbench.core.agent.events import ContextCompressed, TranscriptFailed
from workbench.core.storage.private import open_private
from workbench.core.tools import errors

logger = logging.getLogger(__name__)

SESSION_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


def not_saved(reason: str) -> str:
    """What a front end tells the user when the transcript stops being written."""
    return f"The transcript is not being saved ({reason}); the session goes on in memory."


class Transcript:
    """A session's records, appended as they happen. When the file cannot be written, the
    session goes on in memory: `failure` says why, and `on_failure` is told once."""

    def __init__(
        self, path: Path, on_failure: Callable[[TranscriptFailed], None] | None = None
    ) -> None:
        self.path = path
        self.failure = ""
        self.on_failure = on_failure
        self._file: Any = None
        try:
            self._file = open_private(path)  # kept open for the session
        except OSError as exc:
            self._fail(exc)

    @property
    def session_id(self) -> str:
        return self.path.stem

    def record(self, kind: str, **data: Any) -> None:
        if self._file is None or self._file.closed:  # failed, or a straggler after close
            return
        line = json.dumps(
            {"kind": kind, "at": time.time(), **data}, ensure_ascii=False, default=str
        )
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError as exc:  # a torn last line, if any, is skipped on read
            self._fail(exc)

    def sync(self) -> None:
        """Make the records durable (end of a turn), not only safe from a process crash."""
        if self._file is None or self._file.closed:
            return
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # what the buffer held is lost either way
                self._file.close()

    def _fail(self, exc: OSError) -> None:
        self.failure = f"cannot write {self.path}: {exc.strerror or exc}"
        logger.warning("transcript not saved from now on: %s", self.failure)
        self.close()
        self._file = None
        if self.on_failure is not None:
            self.on_failure(TranscriptFailed(self.failure))


class Records(list[dict[str, Any]]):
    """A transcript's readable records; `skipped` counts the lines that could not be read."""

    skipped: int = 0


class NotATranscript(OSError):
    """The path is not a regular file (a directory, a FIFO, a device): never opened."""


ROLES = frozenset({"system", "user", "assistant", "tool"})
MAX_DEPTH = 64  # a record nested deeper than this is damage, not a conversation


def read(path: Path) -> Records:
    """The records of a transcript; damaged lines (a torn last line from a crash, `null`, a
    list, a message without its keys, deep nesting) are skipped and counted."""
    records = Records()
    with open_regular(path) as handle:
        for line in handle:
            record = parse_line(line)
            if record is not None:
                records.append(record)
            elif line.strip():
                records.skipped += 1
    return records


def open_regular(path: Path) -> Any:
    """Open a file for reading only if it is a regular file: a FIFO would block the read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotATranscript(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")


def parse_line(line: bytes | str) -> dict[str, Any] | None:
    """One record, or None when the line is not one this program wrote (or a torn one)."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")  # one bad byte loses no record
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # bad JSON, bad UTF-8, nested past the parser
        return None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        return None
    if not isinstance(record.get("at", 0), int | float):
        record.pop("at")
    if _too_deep(record):
        return None
    kind = record["kind"]
    if kind == "message":
        return record if _valid_message(record.get("message")) else None
    if kind in ("tool_started", "tool_finished", "child_started"):
        ok = isinstance(record.get("id"), str) and isinstance(record.get("name"), str)
        return record if ok else None
    return record


def _valid_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return False
    if not isinstance(message.get("content"), str | list | None):
        return False
    calls = message.get("tool_calls")
    if calls is None:
        return True
    return isinstance(calls, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("id"), str)
        and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str)
        for c in calls
    )


def _too_deep(value: Any) -> bool:
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return True


def messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message ever sent, compressed or not (what the user and search see)."""
    return [r["message"] for r in records if r.get("kind") == "message"]


def resumable(history: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The conversation as the chat API accepts it, and how many results were added.

    Every tool call of an assistant message gets a result right after it: a transcript
    written before this guarantee (or cut by a crash) may lack some, and the API refuses the
    whole request then. A tool result that answers no call is dropped.
    """
    out: list[dict[str, Any]] = []
    open_ids: list[str] = []
    added = 0

    def close() -> None:
        nonlocal added
        for call_id in open_ids:
            why = "the session ended before this call had a result"
            out.append({"role": "tool", "tool_call_id": call_id, "content": errors.not_run(why)})
            added += 1
        open_ids.clear()

    for message in history:
        if message["role"] == "tool":
            if message.get("tool_call_id") in open_ids:
                open_ids.remove(message["tool_call_id"])
                out.append(message)
            continue
        close()
        out.append(message)
        if message["role"] == "assistant":
            open_ids = [c["id"] for c in message.get("tool_calls") or []]
    close()
    return out, added


def conversation(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the model last had it: a `compressed` record replaces what came
    before it with the compressed messages it holds; later messages follow it."""
    out: list[dict[str, Any]] = []
    for record in records:
        if record.get("kind") == "message":
            out.append(record["message"])
        elif record.get("kind") == "compressed" and isinstance(record.get("messages"), list):
            out = [m for m in record["messages"] if _valid_message(m)]
    return out


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    started: float
    updated: float
    turns: int
    title: str
    model: str
    skipped: int = 0  # lines that could not be read


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def approval_records(home: Path) -> Iterator[dict[str, Any]]:
    """Every `approval` record of every session and sub-agent, oldest file first."""
    root = sessions_dir(home)
    try:
        paths = sorted(root.glob("*.jsonl")) + sorted(root.glob("*/*.jsonl"))
    except OSError:
        return
    for path in paths:
        try:
            records = read(path)
        except OSError:
            continue
        yield from (r for r in records if r.get("kind") == "approval")


def list_sessions(home: Path, problems: list[str] | None = None) -> list[SessionInfo]:
    """Every readable session; what cannot be read is skipped, and said in `problems`."""
    out = []
    problems = problems if problems is not None else []
    try:
        paths = sorted(sessions_dir(home).glob("*.jsonl"))
    except OSError as exc:
        problems.append(f"cannot list {sessions_dir(home)}: {exc.strerror or exc}")
        paths = []
    for path in paths:
        try:
            records = read(path)
        except OSError as exc:
            problems.append(f"skipped {path.name}: {exc.strerror or exc}")
            continue
        if records.skipped:
            problems.append(f"{path.name}: {records.skipped} line(s) could not be read")
        if not records:
            continue
        prompts = [m["content"] for m in messages(records) if m["role"] == "user"]
        header: dict[str, Any] = next((r for r in records if r.get("kind") == "session"), {})
        title = prompts[0] if prompts and isinstance(prompts[0], str) else ""
        out.append(
            SessionInfo(
                path.stem,
                path,
                records[0].get("at", 0),
                records[-1].get("at", 0),
                len(prompts),
                title[:70],
                str(header.get("model", "")),
                records.skipped,
            )
        )
    return sorted(out, key=lambda s: s.updated)


def find(home: Path, session_id: str | None) -> Path | None:
    """The session file for an id (or unique prefix), or the latest when `session_id` is None."""
    sessions = list_sessions(home)
    if session_id is None:
        return sessions[-1].path if sessions else None
    matches = [s.path for s in sessions if s.id.startswith(session_id)]
    return matches[0] if len(matches) == 1 else None


def export_markdown(records: list[dict[str, Any]]) -> str:
    lines = []
    header = next((r for r in records if r.get("kind") == "session"), {})
    lines.append(f"# Session {header.get('id', '')}\n\nModel: {header.get('model', '')}\n")
    for record in records:
        kind = record.get("kind")
        if kind == "message":
            lines.extend(_message_markdown(record["message"]))
        elif kind == "tool_finished":
            via = f" (via `tool_call` {record['via']})" if record.get("via") else ""
            lines.append(
                f"> `{record.get('name')}`{via} → **{record.get('status')}** "
                f"({_seconds(record):.2f}s)\n"
            )
        elif kind == "approval":
            lines.append(
                f"> approval for `{record.get('command', '')}`: **{record.get('decision')}**\n"
            )
        elif kind == "error":
            lines.append(f"> **error:** {record.get('message')}\n")
        elif kind == "compressed":
            lines.append(f"---\n\n> *{ContextCompressed.from_record(record).describe()}*\n")
    return "\n".join(lines) + "\n"


def _seconds(record: dict[str, Any]) -> float:
    value = record.get("duration")
    return float(value) if isinstance(value, int | float) else 0.0


def _message_markdown(message: dict[str, Any]) -> Iterator[str]:
    role = message.get("role")
    content = message.get("content") or ""
    if role == "user":
        yield f"## You\n\n{content}\n"
    elif role == "assistant":
        yield f"## Assistant\n\n{content}\n" if content else "## Assistant\n"
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            name, arguments = function.get("name"), function.get("arguments")
            for real, args in inner_calls(str(name), arguments):  # a tool_call: its call
                shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                via = f" (via `{name}`)" if real != name else ""
                yield f"- calls `{real}` with `{shown}`{via}"
        if message.get("tool_calls"):
            yield ""
    elif role == "tool":
        text = content if isinstance(content, str) else json.dumps(content)
        preview = text if len(text) <= 800 else text[:800] + " …"
        yield f"<details><summary>result of {message.get('tool_call_id')}</summary>\n\n```\n{preview}\n```\n</details>\n"
