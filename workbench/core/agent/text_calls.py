"""A tool call written as text is still a call.

A small local model writes its calls as a ```` ```tool_call ```` block holding
`{"name": ..., "arguments": ...}`; the server turns that into a real call only while tools
may be called. In the forced final round (tool_choice "none") and when the server's parser
misses it, the same block arrives as the reply's text (3 of 10 hard tasks ended with it shown
as the answer). `written_call` finds such a call naming a tool that was offered, and says in
which form it was written (`FORMS`); `held_from` tells the stream where text that may become
one starts, so it is not shown before the reply is complete. Other templates write a call in
brackets: a reply that is a JSON list of calls, or Mistral's `[TOOL_CALLS]` before it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FENCES = ("tool_call", "json", "")  # the info strings of a block that may hold a call
OPENERS = ("```", "<tool_call>")
_FENCE = re.compile(r"```(tool_call|json)?[ \t]*\n(.*?)\n?[ \t]*```", re.S)
_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
_BRACKETS = re.compile(r"\s*(?:\[TOOL_CALLS\]\s*)?\[\s*\{", re.S)  # a reply opening a list
_BRACKET_OPENERS = ("[TOOL_CALLS]", "[{")
# how a call was written: a fenced block, <tool_call> tags, a bare JSON object, in brackets
FORMS = ("fence", "tags", "bare JSON", "brackets")


@dataclass(frozen=True)
class WrittenCall:
    name: str
    arguments: str  # a JSON object's text
    start: int  # where the call's text starts and ends in the reply
    end: int
    form: str = "fence"  # one of FORMS


def written_call(text: str, names: list[str] | set[str]) -> WrittenCall | None:
    """The first call in `text` that names a tool of `names`: a ```tool_call (or ```json,
    or bare) block, a <tool_call> tag, or the whole reply being such a JSON object, or a
    list of them (in brackets, `[TOOL_CALLS]` before it or not: its first call)."""
    candidates = [(m.start(), m.end(), m.group(2), "fence") for m in _FENCE.finditer(text)]
    candidates += [(m.start(), m.end(), m.group(1), "tags") for m in _TAGGED.finditer(text)]
    stripped = text.strip()
    start = len(text) - len(text.lstrip())
    if stripped.startswith("{"):
        candidates.append((start, start + len(stripped), stripped, "bare JSON"))
    elif _BRACKETS.match(text):
        listed = stripped.removeprefix("[TOOL_CALLS]").strip()
        candidates.append((start, start + len(stripped), listed, "brackets"))
    for start, end, body, form in sorted(candidates):
        call = _call(body, names)
        if call is not None:
            return WrittenCall(call[0], call[1], start, end, form)
    return None


def _call(body: str, names: list[str] | set[str]) -> tuple[str, str] | None:
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list) and data:  # in brackets: the list's first call
        data = data[0]
    if not isinstance(data, dict) or data.get("name") not in names:
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # some write the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return str(data["name"]), json.dumps(arguments, ensure_ascii=False)


def held_from(text: str) -> int:
    """Where text that may still turn out to be a written call starts (len(text) if none):
    a reply that opens with `{`, a block whose info string is (so far) tool_call, json or
    none, a <tool_call> tag, or the partial start of one at the end of what came so far;
    a reply that opens a list of calls (`[{`, `[TOOL_CALLS]`), or may still turn out to."""
    lead = len(text) - len(text.lstrip())
    opening = text[lead:]
    if opening.startswith("{") or _BRACKETS.match(opening):
        return lead
    squeezed = "".join(opening.split())
    if squeezed and any(o.startswith(squeezed) for o in _BRACKET_OPENERS):
        return lead  # "[", "[TOOL", "[TOOL_CALLS] " ...: not known yet
    position = 0
    while True:
        found = [(i, o) for o in OPENERS if (i := text.find(o, position)) >= 0]
        if not found:
            break
        index, opener = min(found)
        if opener != "```":
            return index
        line, newline, _ = text[index + 3 :].partition("\n")
        word = line.strip()
        if not newline:  # its info string is still coming
            return index if any(f.startswith(word) for f in FENCES) else len(text)
        if word in FENCES:
            return index
        closing = text.find("```", index + 3 + len(line) + 1)  # an ordinary block: skip it
        if closing < 0:
            return len(text)
        position = closing + 3
    for opener in OPENERS:  # a partial opener at the very end: wait for the next piece
        for size in range(min(len(opener) - 1, len(text)), 0, -1):
            if text.endswith(opener[:size]):
                return len(text) - size
    return len(text)
