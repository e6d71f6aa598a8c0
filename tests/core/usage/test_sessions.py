"""Calls and requests of past sessions, read from transcripts written by the real writer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.support.hermes_store import bridge, call
from tests.support.usage import at
from workbench.core.usage.sessions import OURS, called_names, recent_transcripts


def test_the_last_sessions_calls_and_requests_are_counted(home: Path, sessions) -> None:
    problems: list[str] = []
    read = recent_transcripts(home, 5, problems)
    assert problems == []
    assert [s.id for s in read] == sessions[1:]  # the oldest is outside the window
    assert {s.source for s in read} == {OURS}
    assert [s.started for s in read] == [at(n) for n in range(1, 6)]
    calls = Counter(c.name for s in read for c in s.calls)
    assert calls == {"read_file": 6, "terminal": 3, "project_report": 1}
    assert [s.requests for s in read] == [3, 2, 4, 4, 2]
    last = {c.name: c.at for s in read for c in s.calls}  # oldest first: the last one wins
    assert last == {"read_file": at(5, 10), "terminal": at(4, 10), "project_report": at(2, 10)}


def test_a_wider_window_reaches_the_older_session(home: Path, sessions) -> None:
    read = recent_transcripts(home, 50, [])
    assert [s.id for s in read] == sessions
    assert [c.name for c in read[0].calls] == ["write_file"]


def test_a_bridge_entry_counts_as_the_real_tools_inside_it() -> None:
    assert list(called_names([bridge("a", "b"), call("c")])) == ["a", "b", "c"]
    unreadable = {"id": "x", "function": {"name": "tool_call", "arguments": "{not json"}}
    assert list(called_names([unreadable])) == ["tool_call"]  # what it called is unknown
    as_object = {
        "id": "y",
        "function": {"name": "tool_call", "arguments": {"calls": [{"name": "d"}]}},
    }
    assert list(called_names([as_object, {"function": {}}, "junk", None])) == ["d"]
    assert list(called_names("not a list")) == []


def test_damaged_lines_are_skipped_and_said(home: Path, sessions) -> None:
    path = home / "sessions" / f"{sessions[-1]}.jsonl"
    with path.open("a") as handle:
        handle.write(
            '{"kind": "message", "message": {"role": "assistant", "tool_calls": 7}}\n{torn'
        )
    problems: list[str] = []
    read = recent_transcripts(home, 5, problems)
    assert [s.requests for s in read][-1] == 2  # the damaged message is not a request
    assert problems == [f"{path.name}: 2 line(s) could not be read"]
