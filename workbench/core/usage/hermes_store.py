"""The tool calls of Hermes's own sessions, from its session store (`$HERMES_HOME/state.db`,
SQLite), read and never written.

Hermes keeps every message in the store's `messages` table (an assistant message's calls
as OpenAI-shaped JSON in `tool_calls`) and every session in `sessions`, a compressed,
branched or delegated part of a conversation as a child row (`parent_session_id`) with its
own count of model calls (`api_call_count`). A session here is a row without a parent
(or whose parent was pruned) with all its descendants.

Nothing is created beside the store: a store with no write-ahead log open is read as an
immutable file (no lock, no `-wal` or `-shm` made); one Hermes has open is read through
the sidecar files it already has, as its own read-only readers do, which touches nothing
but the shared-memory index every reader uses. A store that is damaged, locked or of a
shape this version cannot read is said in `problem`, and its sessions are left out.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.usage.sessions import Call, SessionUse, called_names

HERMES = "hermes"  # the source of a session read from Hermes's store
STORE_NAME = "state.db"
BUSY_TIMEOUT = 1.0  # seconds a read waits for a writer's lock before the store is said busy

_SESSIONS = """
WITH RECURSIVE roots(id, started) AS (
    SELECT id, started_at FROM sessions
    WHERE parent_session_id IS NULL
       OR parent_session_id NOT IN (SELECT id FROM sessions)
    ORDER BY started_at DESC LIMIT ?
), tree(id, root) AS (
    SELECT id, id FROM roots
    UNION SELECT s.id, tree.root FROM sessions s JOIN tree ON s.parent_session_id = tree.id
)
"""
_REQUESTS = (
    _SESSIONS
    + """
SELECT tree.root, roots.started, COALESCE(s.api_call_count, 0),
       (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant')
FROM tree JOIN sessions s ON s.id = tree.id JOIN roots ON roots.id = tree.root
"""
)
_CALLS = (
    _SESSIONS
    + """
SELECT tree.root, m.timestamp, m.tool_calls
FROM tree JOIN messages m ON m.session_id = tree.id
WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL
ORDER BY m.timestamp
"""
)


@dataclass
class StoreRead:
    path: Path
    found: bool = False  # the store exists
    sessions: list[SessionUse] = field(default_factory=list)  # oldest first
    problem: str = ""  # why it was not read (damaged, locked, not understood)
    note: str = ""  # read, with this caveat


def store_path(home: Path) -> Path:
    return home / STORE_NAME


def read_store(home: Path, limit: int) -> StoreRead:
    """The last `limit` sessions of Hermes's store in `home`, if it has one."""
    path = store_path(home)
    read = StoreRead(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return read
    except OSError as exc:
        read.found, read.problem = True, _unreadable(path, exc.strerror or str(exc))
        return read
    read.found = True
    if not stat.S_ISREG(mode):
        read.problem = _unreadable(path, "not a regular file")
        return read
    uri, read.note = _uri(path)
    try:
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)
    except sqlite3.Error as exc:
        read.problem = _unreadable(path, _why(exc))
        return read
    try:
        read.sessions = _sessions(db, limit)
    except sqlite3.Error as exc:
        read.problem = _unreadable(path, _why(exc))
    finally:
        db.close()
    return read


def _uri(path: Path) -> tuple[str, str]:
    """How to open the store without creating or changing a file of it, and the caveat."""
    path = path.resolve()  # a linked store: its files are beside the file itself
    base = path.as_uri()  # `?` or `#` in the home's path is escaped
    sidecar = path.with_name
    wal, shm = sidecar(path.name + "-wal").exists(), sidecar(path.name + "-shm").exists()
    if sidecar(path.name + "-journal").exists() or (wal and shm):
        return base + "?mode=ro", ""  # in use, or a write was cut: through its own files
    if wal:  # a read-only open would make the missing index: read the file as it is
        return base + "?immutable=1", (
            f"{path.name}-wal has no index beside it: Hermes's latest writes are left out"
        )
    return base + "?immutable=1", ""


def _sessions(db: sqlite3.Connection, limit: int) -> list[SessionUse]:
    requests: dict[str, int] = {}
    started: dict[str, float] = {}
    for root, began, api_calls, answered in db.execute(_REQUESTS, (limit,)):
        # a row's own count, or its assistant messages where an older Hermes kept none
        requests[root] = requests.get(root, 0) + max(_int(api_calls), _int(answered))
        started[root] = _float(began)
    calls: dict[str, list[Call]] = {root: [] for root in requests}
    for root, at, tool_calls in db.execute(_CALLS, (limit,)):
        names = called_names(_json(tool_calls))
        calls.setdefault(root, []).extend(Call(name, _float(at)) for name in names)
    out = [
        SessionUse(HERMES, root, started.get(root, 0.0), requests.get(root, 0), tuple(found))
        for root, found in calls.items()
    ]
    return sorted(out, key=lambda s: s.started)


def _json(text: Any) -> Any:
    import json

    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"{text}: Hermes is writing to it; try again in a moment"
    return text


def _unreadable(path: Path, why: str) -> str:
    return f"Hermes's session store {path} could not be read ({why}); its sessions are left out"
