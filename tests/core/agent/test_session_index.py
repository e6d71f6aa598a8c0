"""Session search: hits from hundreds of real transcript files, incremental refresh, and an
index rebuilt when it is missing or corrupt."""

from __future__ import annotations

from pathlib import Path

from tests.support.transcripts import write_sessions
from workbench.core.agent import transcript
from workbench.core.agent.session_index import SessionIndex


def test_search_finds_the_message_with_its_session_and_neighbours(home: Path) -> None:
    write_sessions(home, 300)
    index = SessionIndex(home)
    (hit,) = index.search("kubernetes zebra")
    assert hit.session == "20260101-0000123-00007b" and hit.role == "user"
    assert "[kubernetes]" in hit.text and "[zebra]" in hit.text
    assert hit.before.startswith("assistant: session 123 message 1")
    assert hit.after.startswith("assistant: session 123 message 3")
    assert len(index.search("topic3", limit=500)) == 100  # capped
    assert index.search("kubernetes nothere") == []  # every word must match
    assert index.search('"; DROP TABLE messages; --') == []  # words, never FTS syntax
    assert index.count() == 1200


def test_refresh_reads_only_what_was_appended(home: Path) -> None:
    write_sessions(home, 3)
    index = SessionIndex(home)
    assert index.refresh() == 12 and index.refresh() == 0
    path = next(transcript.sessions_dir(home).glob("*.jsonl"))
    record = transcript.Transcript(path)
    record.record("message", message={"role": "user", "content": "a brand new walrus"})
    record.record("tool_started", id="x", name="read_file")  # not a message: not indexed
    record.close()
    assert index.refresh() == 1
    assert index.search("walrus")[0].session == path.stem
    with open(path, "a") as handle:  # a torn line from a crash: waits, never half-indexed
        handle.write('{"kind": "message", "message": {"role": "user", "content": "half')
    assert index.refresh() == 0


def test_a_missing_or_corrupt_index_is_rebuilt_from_the_transcripts(home: Path) -> None:
    write_sessions(home, 5)
    index = SessionIndex(home)
    assert len(index.search("topic1")) == 4
    index.close()
    index.path.write_bytes(b"this is not a database" * 100)
    again = SessionIndex(home)
    assert len(again.search("topic1")) == 4 and "unreadable" in again.rebuilt
    again.close()
    index.path.unlink()
    assert len(SessionIndex(home).search("topic1")) == 4


async def test_the_model_searches_past_sessions(make_session, fake, home: Path) -> None:
    import json

    from tests.support.fake_openai import text, tools

    write_sessions(home, 200)
    # called directly: auto sends it in full (deferring it alone would grow the request)
    fake.add(tools(("session_search", {"query": "zebra-service deploy"})), text("found it"))
    session, _ = await make_session()
    await session.turn("when did we talk about the zebra deploy?")
    (message,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    result = json.loads(message["content"])
    assert result["count"] == 1 and result["hits"][0]["session"] == "20260101-0000123-00007b"
    await session.close()


def test_sub_agent_conversations_are_found_under_their_session(home: Path) -> None:
    write_sessions(home, 2)
    child = transcript.Transcript(
        transcript.sessions_dir(home) / "20260101-000000-000000" / "sub-agent-1.jsonl"
    )
    child.record("message", message={"role": "assistant", "content": "the quokka report"})
    child.close()
    index = SessionIndex(home)
    (hit,) = index.search("quokka")
    assert hit.session == "20260101-000000-000000/sub-agent-1"
    assert index.search("quokka", exclude="20260101-000000-000000") == []  # with its children
    assert len(index.search("quokka", exclude="20260101-000000-000001")) == 1


def test_a_deleted_session_leaves_no_hits(home: Path) -> None:
    write_sessions(home, 3)
    index = SessionIndex(home)
    assert len(index.search("topic1")) == 4
    (transcript.sessions_dir(home) / "20260101-000001-000001.jsonl").unlink()
    assert index.search("topic1") == [] and index.count() == 8
    assert len(index.search("topic2")) == 4  # the others are untouched


def test_damaged_lines_a_directory_and_a_fifo_are_skipped(home: Path) -> None:
    import os

    from tests.support.transcripts import write_damaged_session

    write_damaged_session(home)
    (transcript.sessions_dir(home) / "x.jsonl").mkdir()
    os.mkfifo(transcript.sessions_dir(home) / "y.jsonl")
    index = SessionIndex(home)
    assert index.refresh() == 4  # the readable messages: a question, a call, two results
    assert [hit.role for hit in index.search("read both")] == ["user"]
