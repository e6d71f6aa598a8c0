"""Session transcripts: an append-only JSON-lines file per session that survives a crash.

Every record is written and flushed as it happens (a killed process loses nothing written
before); a torn last line is skipped on read. The conversation is rebuilt from `message`
records, so a session can be resumed; everything else (tool calls, approvals, errors,
usage) is there for the UI, search and export.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.private import open_private

SESSION_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


class Transcript:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open_private(path)  # kept open for the session

    @property
    def session_id(self) -> str:
        return self.path.stem

    def record(self, kind: str, **data: Any) -> None:
        if self._file.closed:  # a straggler after the session closed: nowhere to write it
            return
        line = json.dumps(
            {"kind": kind, "at": time.time(), **data}, ensure_ascii=False, default=str
        )
        self._file.write(line + "\n")
        self._file.flush()

    def sync(self) -> None:
        """Make the records durable (end of a turn), not only safe from a process crash."""
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def read(path: Path) -> list[dict[str, Any]]:
    records = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line from a crash
    return records


def messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["message"] for r in records if r.get("kind") == "message"]


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    started: float
    updated: float
    turns: int
    title: str
    model: str


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def list_sessions(home: Path) -> list[SessionInfo]:
    out = []
    for path in sorted(sessions_dir(home).glob("*.jsonl")):
        records = read(path)
        if not records:
            continue
        prompts = [
            r["message"]["content"]
            for r in records
            if r.get("kind") == "message" and r["message"].get("role") == "user"
        ]
        header = next((r for r in records if r.get("kind") == "session"), {})
        out.append(
            SessionInfo(
                path.stem,
                path,
                records[0].get("at", 0),
                records[-1].get("at", 0),
                len(prompts),
                (prompts[0] if prompts else "")[:70],
                header.get("model", ""),
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
            lines.append(
                f"> `{record.get('name')}` → **{record.get('status')}** ({record.get('duration', 0):.2f}s)\n"
            )
        elif kind == "approval":
            lines.append(
                f"> approval for `{record.get('command', '')}`: **{record.get('decision')}**\n"
            )
        elif kind == "error":
            lines.append(f"> **error:** {record.get('message')}\n")
    return "\n".join(lines) + "\n"


def _message_markdown(message: dict[str, Any]) -> Iterator[str]:
    role = message.get("role")
    content = message.get("content") or ""
    if role == "user":
        yield f"## You\n\n{content}\n"
    elif role == "assistant":
        yield f"## Assistant\n\n{content}\n" if content else "## Assistant\n"
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            yield f"- calls `{function.get('name')}` with `{function.get('arguments')}`"
        if message.get("tool_calls"):
            yield ""
    elif role == "tool":
        text = content if isinstance(content, str) else json.dumps(content)
        preview = text if len(text) <= 800 else text[:800] + " …"
        yield f"<details><summary>result of {message.get('tool_call_id')}</summary>\n\n```\n{preview}\n```\n</details>\n"
