"""Sessions with tool calls known in advance: five in the window the tests read, one older."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.hermes_store import bridge, call
from tests.support.usage import Turn, write_session

T0 = 1_795_000_000.0  # 2026-11-18, the oldest session; one an hour after it


def at(session: int, second: float = 0) -> float:
    return T0 + 3600 * session + second


def session_id(n: int) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(at(n))) + f"-{n:06x}"


@pytest.fixture
def sessions(home: Path) -> list[str]:
    """Six sessions, oldest first. In the last five: read_file 6 calls in 5 sessions (one
    through the bridge, one by a sub-agent, one in a turn cut short), terminal 3 in 3,
    project_report 1 (through the bridge); write_file only in the oldest. Requests: 3, 2,
    4, 4 and 2 (15, so 3 a session)."""
    copy = {"role": "assistant", "content": "", "tool_calls": [call("read_file")]}
    write_session(home, session_id(0), at(0), [Turn([(at(0, 10), [call("write_file")])])])
    write_session(
        home,
        session_id(1),
        at(1),
        [
            Turn(
                [
                    (at(1, 10), [call("read_file"), call("read_file")]),
                    (at(1, 20), [call("terminal")]),
                ]
            )
        ],
    )
    write_session(
        home, session_id(2), at(2), [Turn([(at(2, 10), [bridge("project_report", "read_file")])])]
    )
    write_session(
        home,
        session_id(3),
        at(3),
        [Turn([(at(3, 10), [call("read_file")])]), Turn([(at(3, 20), [call("terminal")])])],
        compressed=[copy],  # a copy of an earlier call: not counted again
    )
    write_session(
        home,
        session_id(4),
        at(4),
        [Turn([(at(4, 10), [call("terminal")])])],
        subagents={"helper": [Turn([(at(4, 30), [call("read_file")])])]},
    )
    write_session(
        home,
        session_id(5),
        at(5),
        [Turn([]), Turn([(at(5, 10), [call("read_file")])], finished=False)],
    )
    return [session_id(n) for n in range(6)]
