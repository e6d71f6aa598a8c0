"""A small path into a JSON value: `lines[0].text`, `$.items[-1]`, `["a.b"].c`.

Names are separated by dots; `[N]` indexes a list (negative from the end); `["key"]` names a
key with dots or brackets in it. That is all a test case needs to point at one value.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(r"""\.?([^.\[\]"]+)|\[(-?\d+)\]|\[("(?:[^"\\]|\\.)*")\]""")
MISSING = object()


class PathError(ValueError):
    """The path itself is not written right; the message says where."""


def parse(path: str) -> list[str | int]:
    """The steps of `path`: keys (str) and list indexes (int)."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise PathError(f"bad JSON path {path!r} at character {pos + 1}")
        name, index, quoted = match.groups()
        if name is not None:
            steps.append(name.strip())
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(json.loads(quoted))
        pos = match.end()
    if not steps:
        raise PathError("empty JSON path")
    return steps


def lookup(value: Any, path: str) -> Any:
    """The value at `path`, or `MISSING` when the document has nothing there."""
    for step in parse(path):
        if isinstance(step, str) and isinstance(value, list) and step.lstrip("-").isdigit():
            step = int(step)  # `items.0` reads as `items[0]`
        if isinstance(step, int) and isinstance(value, list):
            if not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return MISSING
    return value
