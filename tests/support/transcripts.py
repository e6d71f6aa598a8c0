"""Session transcripts written for tests: damaged ones, and many small ones."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.core.agent import transcript


def write_damaged_session(home: Path) -> str:
    """A transcript from before every call was answered: one call of two has no result,
    a result answers nothing, and a few lines are damage."""
    session_id = "20240101-120000-abcdef"
    path = home / "sessions" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    call = {"type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    lines = [
        {"kind": "session", "id": session_id, "model": "test-model"},
        {"kind": "message", "message": {"role": "user", "content": "read both"}},
        {
            "kind": "message",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", **call}, {"id": "c2", **call}],
            },
        },
        {"kind": "message", "message": {"role": "tool", "tool_call_id": "c1", "content": "a"}},
        None,
        [1, 2],
        {"kind": "message"},
        {"kind": "message", "message": {"role": "user", "content": 42}},
        {"kind": "message", "message": {"role": "tool", "tool_call_id": "zz", "content": "b"}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n" + "[" * 100_000 + "\n")
    return session_id


def write_sessions(home: Path, count: int, per_session: int = 4) -> None:
    for n in range(count):
        record = transcript.Transcript(
            transcript.sessions_dir(home) / f"20260101-0000{n:02d}-{n:06x}.jsonl"
        )
        record.record("session", id=f"s{n}", model="m")
        for m in range(per_session):
            role = "user" if m % 2 == 0 else "assistant"
            words = f"session {n} message {m} about topic{n % 7}"
            if n == 123 and m == 2:
                words += " the flaky kubernetes deploy of zebra-service"
            record.record("message", message={"role": role, "content": words})
        record.close()
