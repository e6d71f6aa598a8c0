"""Full-text search over past sessions: an SQLite FTS5 index beside the transcripts.

The transcripts stay the truth; the index (`sessions/index.sqlite`) is derived from them.
Each refresh reads only what was appended to a transcript since the last one (its indexed
byte offset is kept per file); a transcript that shrank or was replaced is indexed again.
An index that is missing, unreadable or corrupt is deleted and rebuilt from the transcripts.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workbench.core.agent import transcript
from workbench.core.agent.bridge import inner_calls
from workbench.core.storage.private import private_dir, touch_private

logger = logging.getLogger(__name__)

INDEX_NAME = "index.sqlite"
SCHEMA_VERSION = 2
_WORD = re.compile(r"\w+", re.UNICODE)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, offset INTEGER, size INTEGER,
                                  messages INTEGER);
CREATE TABLE IF NOT EXISTS msgs (id INTEGER PRIMARY KEY, session TEXT, seq INTEGER,
                                 role TEXT, at REAL, content TEXT);
CREATE INDEX IF NOT EXISTS msgs_by_place ON msgs (session, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    content, content = 'msgs', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
"""


@dataclass(frozen=True)
class Hit:
    session: str
    at: float
    role: str
    text: str  # the matching message, with the matches in [brackets]
    before: str  # the message before it in that session, if any
    after: str  # and the one after


class SessionIndex:
    def __init__(self, home: Path) -> None:
        self.dir = transcript.sessions_dir(home)
        self.path = self.dir / INDEX_NAME
        self._lock = threading.Lock()  # one connection, used from any thread
        self._db: sqlite3.Connection | None = None
        self.rebuilt = ""  # why the index was last rebuilt, if it was

    # -- opening ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            private_dir(self.dir)
            try:
                self._db = self._open()
            except sqlite3.DatabaseError as exc:
                self._db = self._rebuild(f"the index was unreadable ({exc})")
        return self._db

    def _open(self) -> sqlite3.Connection:
        touch_private(self.path)  # SQLite would create it with the umask's mode
        db = sqlite3.connect(self.path, check_same_thread=False)
        db.executescript(_SCHEMA)
        version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if version is None:
            db.execute("INSERT INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))
            db.commit()
        elif version[0] != str(SCHEMA_VERSION):
            db.close()
            raise sqlite3.DatabaseError(f"schema version {version[0]}")
        db.execute("SELECT count(*) FROM fts").fetchone()  # touches the FTS tables
        return db

    def _rebuild(self, why: str) -> sqlite3.Connection:
        logger.warning("session index rebuilt: %s", why)
        self.rebuilt = why
        if self._db is not None:
            self._db.close()
            self._db = None
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        return self._open()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- indexing -----------------------------------------------------------------------

    def refresh(self) -> int:
        """Index what the transcripts gained since last time; returns how many messages."""
        with self._lock:
            try:
                return self._refresh(self._connect())
            except sqlite3.DatabaseError as exc:
                self._db = self._rebuild(f"the index failed ({exc})")
                return self._refresh(self._db)

    def _refresh(self, db: sqlite3.Connection) -> int:
        known = {row[0]: row[1:] for row in db.execute("SELECT * FROM files")}
        # sessions, and their sub-agents' conversations (<session>/<sub-agent>.jsonl)
        names = {  # regular files only: a FIFO would block, a directory cannot be read
            path.relative_to(self.dir).as_posix(): path
            for path in [*self.dir.glob("*.jsonl"), *self.dir.glob("*/*.jsonl")]
            if path.is_file()
        }
        gone = [name for name in known if name not in names]
        for name in gone:  # a deleted session leaves no hits behind
            db.execute("DELETE FROM msgs WHERE session = ?", (name.removesuffix(".jsonl"),))
            db.execute("DELETE FROM files WHERE name = ?", (name,))
        if gone:
            db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
        added = 0
        for name, path in sorted(names.items()):
            session = name.removesuffix(".jsonl")
            try:
                size = path.stat().st_size
            except OSError:
                continue
            offset, old_size, count = known.get(name, (0, 0, 0))
            if size < old_size:  # rewritten: start over for this file
                db.execute("DELETE FROM msgs WHERE session = ?", (session,))
                db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
                offset, count = 0, 0
            if size == offset:
                continue
            try:
                rows, offset = _read_messages(path, session, offset, count)
            except OSError as exc:  # unreadable now (permissions, replaced by a FIFO)
                logger.warning("session index: skipped %s: %s", name, exc)
                continue
            for row in rows:
                cursor = db.execute(
                    "INSERT INTO msgs (session, seq, role, at, content) VALUES (?, ?, ?, ?, ?)",
                    row,
                )
                db.execute(
                    "INSERT INTO fts (rowid, content) VALUES (?, ?)", (cursor.lastrowid, row[4])
                )
            db.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                (name, offset, size, count + len(rows)),
            )
            added += len(rows)
        db.commit()
        return added

    # -- searching ----------------------------------------------------------------------

    def search(self, query: str, limit: int = 10, exclude: str = "") -> list[Hit]:
        """Messages matching every word of `query` (any order), best first. A hit in a
        sub-agent's conversation has the session id `<session>/<sub-agent>`. `exclude` is a
        session left out with its sub-agents (the one asking would find its own question)."""
        words = _WORD.findall(query)
        if not words:
            return []
        match = " ".join(f'"{w}"' for w in words)  # literal words: no FTS syntax from users
        self.refresh()
        with self._lock:
            db = self._connect()
            rows = db.execute(
                "SELECT m.session, m.seq, m.at, m.role, highlight(fts, 0, '[', ']') "
                "FROM fts JOIN msgs AS m ON m.id = fts.rowid "
                "WHERE fts MATCH ? AND m.session != ? AND m.session NOT LIKE ? "
                "ORDER BY rank LIMIT ?",
                (match, exclude, f"{exclude}/%", max(1, min(limit, 100))),
            ).fetchall()
            return [self._hit(db, *row) for row in rows]

    def _hit(
        self, db: sqlite3.Connection, session: str, seq: int, at: str, role: str, text: str
    ) -> Hit:
        def neighbour(n: int) -> str:
            row = db.execute(
                "SELECT role, content FROM msgs WHERE session = ? AND seq = ?", (session, n)
            ).fetchone()
            return f"{row[0]}: {_clip(row[1])}" if row else ""

        return Hit(
            session, float(at), role, _clip(text, 600), neighbour(seq - 1), neighbour(seq + 1)
        )

    def count(self) -> int:
        with self._lock:
            count: int = self._connect().execute("SELECT count(*) FROM msgs").fetchone()[0]
            return count


def _read_messages(
    path: Path, session: str, offset: int, seq: int
) -> tuple[list[tuple[Any, ...]], int]:
    """The messages in `path` after byte `offset`, and where complete lines end."""
    rows = []
    with transcript.open_regular(path) as handle:
        handle.seek(offset)
        for line in handle:
            if not line.endswith(b"\n"):
                break  # a line still being written: read it next time
            offset += len(line)
            record = transcript.parse_line(line)  # None for a damaged line: skipped
            text = _searchable(record) if record is not None else ""
            if text and record is not None:
                role = record["message"].get("role", "")
                rows.append((session, seq, role, record.get("at", 0), text))
                seq += 1
    return rows, offset


def _searchable(record: dict[str, Any]) -> str:
    if record.get("kind") != "message" or not isinstance(record.get("message"), dict):
        return ""
    message = record["message"]
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False)
    calls = message.get("tool_calls") or []
    for call in calls:
        function = call.get("function") or {}
        name, arguments = function.get("name", ""), function.get("arguments", "")
        for real, args in inner_calls(name, arguments):  # a tool_call: the call it made
            shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            text += f"\n{real}({shown})" + (f" via {name}" if real != name else "")
    return text.strip()


def _clip(text: str, size: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


def hits_as_json(hits: list[Hit]) -> list[dict[str, Any]]:
    return [asdict(hit) for hit in hits]
