"""Keeping a turn on track: repeated calls refused, and the lean profile for small models.

Every model gets the repeated-call guard: a call with the same name and arguments as one
already run in this turn is not run again (nothing has changed since, so neither would its
result); the model is told so and to answer or do something else. A successful write
(write_file, patch) clears what was seen, since a file read before it may now read
differently; the same write again is still refused.

A small model (the bundled one) gets a lean profile: a short system prompt that says how
to work, only the shared tools (it misuses the agent's own: clarify, memory, todo,
delegate_task, session_search), and after tool results a one-line nudge to answer if it
can. Measured on bench/bench_local_tasks.py.
"""

from __future__ import annotations

import json
from typing import Any

WRITERS = frozenset({"write_file", "patch"})

REPEATED = (
    "Not run: you already called {name} with these same arguments in this turn, and its "
    "result is above. Do not call it again. Answer the user now from what you have, or do "
    "something different."
)

LEAN_SYSTEM = (
    "You are a coding assistant working in the user's project directory; paths are relative "
    "to it. Use the tools to look at files and run commands; never guess or invent what a "
    "file says. To read a file the user names, use read_file. To find which file mentions "
    "something, or a line in a large file, use search_files with a short word from it as the "
    "pattern. To change part of a file use patch; to create a file use write_file. When you "
    "have what the user asked for, stop calling tools and answer in one or two plain "
    "sentences."
)

NUDGE = (
    "[If everything the user asked for is done, answer now in plain text without calling a "
    "tool. If a step is left (such as writing a file), call the tool for it.]"
)
RETRY_NUDGE = (
    "[That found nothing or failed. Try another way with a tool (a shorter pattern, another "
    "file, or read_file); do not answer from a guess.]"
)


def nudge(results: list[str]) -> str:
    """The line sent after tool results: to answer if the work is done, or, when every
    result came back empty or failed, to try another way (a small model otherwise reads
    "nothing found" as the end of the search and guesses the answer)."""
    return RETRY_NUDGE if results and all(map(_found_nothing, results)) else NUDGE


def _found_nothing(result: str) -> bool:
    """An error, or a search whose result says nothing matched."""
    try:
        data = json.loads(result)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    return bool(data.get("error")) or (data.get("matches") == [] and "hint" in data)


def call_key(name: str, arguments: Any) -> str:
    """The same call whatever its JSON's spacing or key order."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return f"{name}\0{arguments.strip()}"
    return f"{name}\0{json.dumps(arguments, sort_keys=True, ensure_ascii=False)}"


class RepeatGuard:
    """The calls run in this turn, to refuse an identical one."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def reset(self) -> None:
        self._seen.clear()

    def repeated(self, name: str, arguments: Any) -> bool:
        """Whether this call already ran; if not, it is remembered as run."""
        key = call_key(name, arguments)
        if key in self._seen:
            return True
        self._seen.add(key)
        return False

    def wrote(self, name: str, arguments: Any, ok: bool) -> None:
        """A successful write changes what reads return: earlier calls may run again, but
        not the same write (it would change nothing: small models repeat a write until
        the round cap)."""
        if ok and name in WRITERS:
            self._seen.clear()
            self._seen.add(call_key(name, arguments))
