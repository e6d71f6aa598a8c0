"""A Hermes-shaped session store (`state.db`) for tests: the `sessions` and `messages`
tables with the columns Hermes 0.21 creates (hermes_state_common.SCHEMA_SQL in the Hermes
repository), filled with the sessions a test gives."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT,
    api_call_count INTEGER DEFAULT 0, tool_names TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
INSERT INTO schema_version VALUES (30);
"""


@dataclass
class HermesSession:
    id: str
    started: float
    api_calls: int
    calls: list[tuple[float, list[Any]]] = field(default_factory=list)  # (at, tool_calls)
    parent: str | None = None
    source: str = "cli"


def call(name: str, arguments: Any = None, call_id: str = "c") -> dict[str, Any]:
    """One entry of an assistant message's `tool_calls`, as Hermes stores them."""
    args = json.dumps(arguments if arguments is not None else {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def bridge(*names: str) -> dict[str, Any]:
    """A `tool_call` bridge entry calling `names` (deferred tools)."""
    return call("tool_call", {"calls": [{"name": n, "arguments": {}} for n in names]}, "b")


def write_store(path: Path, sessions: list[HermesSession], wal: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    for s in sessions:
        db.execute(
            "INSERT INTO sessions (id, source, parent_session_id, started_at, api_call_count,"
            " tool_call_count) VALUES (?, ?, ?, ?, ?, ?)",
            (s.id, s.source, s.parent, s.started, s.api_calls, sum(len(c) for _, c in s.calls)),
        )
        db.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (s.id, "do it", s.started),
        )
        for at, tool_calls in s.calls:
            db.execute(
                "INSERT INTO messages (session_id, role, content, tool_calls, timestamp)"
                " VALUES (?, 'assistant', '', ?, ?)",
                (s.id, json.dumps(tool_calls), at),
            )
            for entry in tool_calls:
                db.execute(
                    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_name,"
                    " timestamp) VALUES (?, 'tool', 'ok', ?, ?, ?)",
                    (s.id, entry["id"], entry["function"]["name"], at),
                )
    db.commit()
    db.close()
