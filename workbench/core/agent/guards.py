"""Keeping a turn on track: repeated calls refused, and the lean profile for small models.

Every model gets the repeated-call guard: a call with the same name and arguments as one
already run in this turn is not run again (nothing has changed since, so neither would its
result); the model is told so and to answer or do something else. A successful write
(write_file, patch) clears what was seen, since a file read before it may now read
differently; the same write again is still refused.

A small model (the bundled one) gets a lean profile: a short system prompt that says how
to work, only the shared tools (it misuses the agent's own: clarify, memory, todo,
delegate_task, session_search) without their numeric and boolean options, a first round
that must call a tool when the request names a file the project holds, one tool call a
round, after tool results a one-line nudge to answer if it can, and one more round, told
why, when it answers without writing a file its request asked to be written, or, in the
first round, names a tool it did not call.
Measured on bench/bench_local_tasks.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any

from workbench.core.schema import Node

WRITERS = frozenset({"write_file", "patch"})

REPEATED = (
    "Not run: you already called {name} with these same arguments in this turn, and its "
    "result is above. Do not call it again. Answer the user now from what you have, or do "
    "something different."
)
REPEATED_EMPTY = (
    "Not run: you already called {name} with these same arguments in this turn, and it found "
    "nothing or failed; it would again. Call it with different arguments (one distinctive "
    "word as the pattern, another file) or read the file; do not guess the answer."
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

UNWRITTEN = (
    "[Nothing was written, and {names} does not exist yet. If the user asked for it to be "
    "written, call write_file for it now; if not, give your answer again.]"
)
# A request that asks for a file to be made says so with one of these words; without one, a
# file it names that does not exist is one asked about ("is there a CHANGES.md?"), and
# nudged, the 1.5B creates it all the same.
WRITE_WORDS = re.compile(r"\b(write|create|save|put|store|copy|record|append|make)\b", re.I)
FILE_NAME = re.compile(r"(?<![\w/.~-])((?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")

NOT_FILES = frozenset({"e.g", "i.e"})


def to_write(request: str, exists: Callable[[str], bool]) -> list[str]:
    """The files a request asks to be written that do not exist yet: the names it gives,
    if it asks for a write at all. A small model that finds what goes into such a file
    often answers with it and never writes the file."""
    if not WRITE_WORDS.search(request):
        return []
    return [n for n in file_names(request) if not exists(n)]


def file_names(request: str) -> list[str]:
    """The file names a request gives (`notes.md`, `src/app.py`), each once."""
    names = dict.fromkeys(m.group(1) for m in FILE_NAME.finditer(request))
    return [n for n in names if n.lower() not in NOT_FILES]


def unwritten(names: list[str]) -> str:
    """The line that asks, once, for the file a request named and the turn did not write."""
    return UNWRITTEN.format(names=" and ".join(names))


UNLOOKED = (
    "[You answered without looking at {names}. Call a tool to look at it first (read_file, "
    "or search_files for a word in it), then answer from what it says.]"
)


def unlooked(names: list[str]) -> str:
    """The line that asks, once, for a look at the files a request named and a first reply
    answered about without a call."""
    return UNLOOKED.format(names=" and ".join(names))


DESCRIBED = (
    "[You wrote about {name} but called no tool. If a tool is needed, call it now; if not, "
    "give your answer again.]"
)


def described_call(text: str, names: list[str]) -> str | None:
    """The first offered tool a reply names, when it called none: a small model may write
    what it would do ("I'll use the `search_files` function to ...") and stop there, an
    answer given without looking. A name that is also a word ("patch", "terminal") counts
    in backticks only."""
    found = []
    for name in names:
        shown = name if "_" in name else f"`{name}`"
        if shown in text:
            found.append((text.find(shown), name))
    return min(found)[1] if found else None


KNOBS = frozenset({"integer", "number", "boolean"})
# Options that change what a result shows rather than what it looks at. Offered them, the
# 1.5B searched a phrase of "how many days …?" in output_mode "count" and got a number of
# lines where the answer was in a line.
SHAPES = frozenset({"output_mode"})


def lean_definition(definition: dict[str, Any], tools: Collection[str] = ()) -> dict[str, Any]:
    """A tool's definition for a small model: without its optional numeric and boolean
    parameters (paging, limits, timeouts, flags) and output shapes, whose defaults suit its
    work. The 1.5B fills in every parameter offered, at 8 tokens a second on 2 cores, and
    a guessed limit of 1 hides the match it looks for. A required one always stays, and so does
    `offset` where the tool says its result gives a `next_offset` to go on from (read_file):
    without it a small model could never read past what fits in its window."""
    function = definition.get("function") or {}
    parameters = function.get("parameters") or {}
    top = Node.parameters_of(function)
    properties = top.own_properties
    if not properties:
        return definition
    required = set(top.own_required)
    if "next_offset" in str(function.get("description") or ""):
        required.add("offset")  # kept as offered, not made required
    kept = {
        name: spec.raw
        for name, spec in properties.items()
        if name in required or not (name in SHAPES or _knob(spec))
    }
    return {
        **definition,
        "function": {
            **function,
            "description": lean_description(
                str(function.get("description") or ""), {*kept, *tools}
            ),
            "parameters": {**parameters, "properties": kept},
        },
    }


def _knob(spec: Node) -> bool:
    """An option of numbers or flags only (`["integer", "null"]` too)."""
    kinds = set(spec.types) - {"null"}
    return bool(kinds) and kinds <= KNOBS


SENTENCE_END = re.compile(r"(?<=[a-z0-9)'\"])\.\s+(?=[A-Z])")


def lean_description(text: str, names: Collection[str]) -> str:
    """A description for a small model: its first sentence (what the tool does) and those
    naming one of its parameters or another tool offered (how to call it, which tool to use
    instead); not those on limits and the result's shape. Cutting those did not change what
    the bundled model did in bench/bench_local_tasks.py, and a new prompt reads each token
    once; cutting every sentence but the first did (write_file without "use patch for
    targeted edits", the 1.5B patched a file that did not exist yet)."""
    sentences = SENTENCE_END.split(text)
    kept = [
        sentence
        for i, sentence in enumerate(sentences)
        if i == 0 or any(re.search(rf"\b{re.escape(n)}\b", sentence) for n in names)
    ]
    if len(kept) == len(sentences):
        return text
    short = ". ".join(kept)  # the split took each period but the last sentence's
    return short if short.endswith(".") else short + "."


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
    return bool(data.get("error")) or "hint" in data  # a search's hint: nothing matched


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
        self._empty: set[str] = set()  # calls whose result found nothing or failed
        self._retried = False
        self.wrote_any = False  # a write succeeded in this turn

    def reset(self) -> None:
        self._seen.clear()
        self._empty.clear()
        self._retried = self.wrote_any = False

    def found(self, name: str, arguments: Any, result: object) -> None:
        """Remember a call whose result found nothing or failed."""
        if isinstance(result, str) and _found_nothing(result):
            self._empty.add(call_key(name, arguments))

    def refusal(self, name: str, arguments: Any) -> str:
        """What a refused repeat says: to answer, or, after nothing was found, to try
        another way (the result is an error, so the lean nudge says to try again)."""
        if call_key(name, arguments) in self._empty:
            return json.dumps({"error": REPEATED_EMPTY.format(name=name), "status": "repeated"})
        return REPEATED.format(name=name)

    def another_try(self, refused: list[tuple[str, Any]]) -> bool:
        """Whether a round of refused repeats only may be followed by one that calls tools:
        once a turn, when one of them repeats a call that found nothing. Made to answer
        then, the model guesses (the 1.5B searched a phrase, repeated it after the hint to
        search one word, and, made to answer, wrote its call out as text); given one more
        round, it mostly searched another word."""
        if self._retried or not any(call_key(n, a) in self._empty for n, a in refused):
            return False
        self._retried = True
        return True

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
            self.wrote_any = True
            self._seen.clear()
            self._empty.clear()
            self._seen.add(call_key(name, arguments))
