"""Hermes's own session store: read for its calls, never written, and a damaged or locked
one said, not fatal."""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.support.hermes_store import HermesSession, bridge, call, write_store
from workbench.core.usage.hermes_store import HERMES, read_store, store_path

H0, H1, H2 = 1_795_100_000.0, 1_795_200_000.0, 1_795_300_000.0


def sessions() -> list[HermesSession]:
    """h1 with a compressed continuation (a child row); h2 from a Hermes that kept no count
    of model calls; h0 whose parent was pruned."""
    return [
        HermesSession("h0", H0, 3, [(H0 + 1, [call("patch")])], parent="pruned"),
        HermesSession(
            "h1",
            H1,
            5,
            [(H1 + 1, [call("web_search")]), (H1 + 2, [bridge("browser_navigate", "web_search")])],
        ),
        HermesSession("h1c", H1 + 100, 2, [(H1 + 101, [call("terminal")])], parent="h1"),
        HermesSession("h2", H2, 0, [(H2 + 1, [call("read_file")])]),
    ]


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file of the folder: its modification time and its bytes' digest."""
    return {
        p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.iterdir())
    }


def test_the_last_sessions_are_read_and_the_store_is_left_as_it_was(home: Path) -> None:
    write_store(store_path(home), sessions())
    before = snapshot(home)
    read = read_store(home, 2)
    assert snapshot(home) == before  # no byte, no time, no new file (-wal, -shm, -journal)
    assert read.found and read.problem == "" and read.note == ""
    assert [(s.source, s.id, s.started) for s in read.sessions] == [
        (HERMES, "h1", H1),
        (HERMES, "h2", H2),
    ]
    h1, h2 = read.sessions
    assert Counter(c.name for c in h1.calls) == {
        "web_search": 2,
        "browser_navigate": 1,
        "terminal": 1,
    }
    assert max(c.at for c in h1.calls) == H1 + 101  # the continuation's call is the session's
    assert h1.requests == 7  # its own count and its continuation's
    assert h2.requests == 1  # no count kept: its assistant messages
    assert [s.id for s in read_store(home, 10).sessions] == ["h0", "h1", "h2"]


def test_a_store_hermes_has_open_is_read_through_its_own_files(home: Path) -> None:
    path = store_path(home)
    write_store(path, sessions(), wal=True)
    writer = sqlite3.connect(path)  # Hermes, running: its latest write still in the log
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO sessions (id, source, started_at, api_call_count) VALUES ('h3', 'cli', ?, 1)",
            (H2 + 1000,),
        )
        writer.execute(
            "INSERT INTO messages (session_id, role, tool_calls, timestamp) VALUES ('h3', 'assistant', ?, ?)",
            ('[{"id": "1", "function": {"name": "memory", "arguments": "{}"}}]', H2 + 1001),
        )
        writer.commit()
        before = snapshot(home)
        read = read_store(home, 1)
        after = snapshot(home)
    finally:
        writer.close()
    assert read.problem == ""
    assert [(s.id, [c.name for c in s.calls]) for s in read.sessions] == [("h3", ["memory"])]
    assert set(after) == set(before)
    for name in ("state.db", "state.db-wal"):  # only the readers' shared index may move
        assert after[name] == before[name]


@pytest.mark.parametrize(
    ("damage", "why"),
    [("pages", "malformed"), ("header", "not a database"), ("shape", "no such table: sessions")],
)
def test_a_damaged_store_is_said_and_nothing_is_read(home: Path, damage: str, why: str) -> None:
    path = store_path(home)
    if damage == "shape":  # a database, of another shape
        home.mkdir(parents=True)
        sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.close()
    else:
        write_store(path, sessions())
        data = bytearray(path.read_bytes())
        start = 4096 if damage == "pages" else 0  # its tables' pages, or the file's header
        data[start : start + 8192] = b"\xa5" * 8192
        path.write_bytes(bytes(data))
    before = snapshot(home)
    read = read_store(home, 5)
    assert snapshot(home) == before
    assert read.found and read.sessions == []
    assert read.problem.startswith(f"Hermes's session store {path} could not be read (")
    assert why in read.problem and read.problem.endswith("its sessions are left out")


def test_a_locked_store_is_said_busy(home: Path) -> None:
    path = store_path(home)
    write_store(path, sessions())
    writer = sqlite3.connect(path, isolation_level=None)  # Hermes in the middle of a write
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE sessions SET api_call_count = 9")
        read = read_store(home, 5)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert read.sessions == []
    assert "locked" in read.problem and "Hermes is writing to it; try again" in read.problem


def test_no_store_is_no_problem(home: Path) -> None:
    read = read_store(home, 5)
    assert not read.found and read.sessions == [] and read.problem == ""
    assert not home.exists() or not store_path(home).exists()  # never created


def test_a_store_that_is_not_a_file_is_said(home: Path) -> None:
    store_path(home).mkdir(parents=True)
    read = read_store(home, 5)
    assert read.found and "not a regular file" in read.problem
