"""Numeric settings Hermes users set, read with Hermes's names and meaning first.

Where hermes-tui had its own key for the same thing, ours stays as an alias: it is read only
when Hermes's key is not set. A value that is not a number (a string, a boolean) or is below
the key's least is not used: the caller's default is, and `doctor` says why (`problems`).

| Hermes's key | our alias | what it is |
|---|---|---|
| `agent.max_turns` | `model.max_rounds` | model calls with tools in a turn, then one that answers |
| `delegation.max_spawn_depth` | `delegation.max_depth` (one more) | how deep sub-agents nest |
| `delegation.max_concurrent_children` | `delegation.max_concurrent` | sub-agents at once |
| `delegation.child_timeout_seconds` | `delegation.timeout` | a sub-agent's wall time |
| `terminal.timeout` (or TERMINAL_TIMEOUT) | | a command's timeout when the model names none |
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Get = Callable[[str], Any]


@dataclass(frozen=True)
class Key:
    name: str  # Hermes's
    alias: str = ""  # ours, read when Hermes's is not set
    integer: bool = True
    least: float = 1  # a smaller value is not used
    env: str = ""  # Hermes's environment variable, read when neither key is set


@dataclass(frozen=True)
class Found:
    value: float | None  # None: not set, or not usable (then `problem` says why)
    key: str = ""  # where it came from
    problem: str = ""


MAX_TURNS = Key("agent.max_turns", "model.max_rounds")
MAX_SPAWN_DEPTH = Key("delegation.max_spawn_depth", "delegation.max_depth")
MAX_CHILDREN = Key("delegation.max_concurrent_children", "delegation.max_concurrent")
# 0: no limit (Hermes's default); Hermes raises a positive value under 30 s to 30 s
CHILD_TIMEOUT = Key(
    "delegation.child_timeout_seconds", "delegation.timeout", integer=False, least=0
)
TERMINAL_TIMEOUT = Key("terminal.timeout", env="TERMINAL_TIMEOUT")
KEYS = (MAX_TURNS, MAX_SPAWN_DEPTH, MAX_CHILDREN, CHILD_TIMEOUT, TERMINAL_TIMEOUT)


def read(get: Get, key: Key) -> Found:
    """The key's value: Hermes's name, else our alias, else its environment variable."""
    for name in (key.name, key.alias):
        if name and (value := get(name)) is not None:
            return _checked(name, value, key)
    if key.env and (text := os.environ.get(key.env, "").strip()):
        try:
            number: Any = float(text)
        except ValueError:
            number = text
        return _checked(key.env, number, key)
    return Found(None)


def _checked(name: str, value: Any, key: Key) -> Found:
    kind = "a whole number" if key.integer else "a number"
    least = f"{key.least:g} or more"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return Found(None, name, f"{name} must be {kind} ({least}), not {value!r}")
    if key.integer and value != int(value):
        return Found(None, name, f"{name} must be {kind} ({least}), not {value!r}")
    if value < key.least:
        return Found(None, name, f"{name} must be {least}, not {value!r}")
    return Found(int(value) if key.integer else float(value), name)


def problems(get: Get) -> list[str]:
    """What `doctor` says: each key whose value is not used, and what is used instead."""
    return [
        f"{found.problem}: the default is used" for key in KEYS if (found := read(get, key)).problem
    ]
