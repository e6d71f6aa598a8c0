"""Waiting in an asyncio test for exactly what it asserts, never for a fixed time.

The deadline is generous on purpose: a test that passes never reaches it, and the machine the
tests run on may be busy (a short deadline makes a test depend on the machine's speed)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

PATIENCE = 60.0  # seconds before a condition that never comes fails the test


async def until(predicate: Callable[[], object], timeout: float = PATIENCE, what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, f"not reached in {timeout:g} s: {what}"
        await asyncio.sleep(0.01)


def seen(events: list[object], kind: type) -> Callable[[], bool]:
    """A predicate: an event of this kind was emitted."""
    return lambda: any(isinstance(event, kind) for event in events)
