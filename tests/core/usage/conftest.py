"""Sessions with tool calls known in advance (tests.support.usage.write_known_sessions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.usage import write_known_sessions


@pytest.fixture
def sessions(home: Path) -> list[str]:
    return write_known_sessions(home)
