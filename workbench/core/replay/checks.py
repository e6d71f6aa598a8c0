"""A case's checks against one call's outcome: each failed check is one reason, in words."""

from __future__ import annotations

import json
from typing import Any

from workbench.core.replay import jsonpath
from workbench.core.replay.cases import Expect

SHOWN = 80  # characters of a value quoted in a reason


def failures(expect: Expect, status: str, text: str, seconds: float) -> list[str]:
    """Why the outcome does not pass `expect`; empty when it passes."""
    reasons: list[str] = []
    if expect.status is not None and status != expect.status:
        said = f" ({what_it_said(text)})" if status != "ok" and what_it_said(text) else ""
        reasons.append(f"status {status}, expected {expect.status}{said}")
    if expect.json:
        reasons += _json_failures(expect.json, text)
    reasons += [f"result does not contain {_show(s)}" for s in expect.contains if s not in text]
    if expect.max_seconds is not None and seconds > expect.max_seconds:
        reasons.append(f"took {seconds:.2f} s, over max_seconds {expect.max_seconds:g}")
    return reasons


def _json_failures(paths: dict[str, Any], text: str) -> list[str]:
    try:
        document = json.loads(text)
    except ValueError:
        return [f"result is not JSON, so json checks cannot pass: {_show(text)}"]
    reasons = []
    for path, wanted in paths.items():
        found = jsonpath.lookup(document, path)
        if found is jsonpath.MISSING:
            reasons.append(f"json {path}: nothing there")
        elif not same(found, wanted):
            reasons.append(f"json {path}: expected {_show(wanted)}, got {_show(found)}")
    return reasons


def same(found: Any, wanted: Any) -> bool:
    """JSON equality: true is not 1, and 1 is 1.0."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return type(found) is type(wanted) and found == wanted
    if isinstance(found, list) and isinstance(wanted, list):
        return len(found) == len(wanted) and all(map(same, found, wanted))
    if isinstance(found, dict) and isinstance(wanted, dict):
        return found.keys() == wanted.keys() and all(same(found[k], wanted[k]) for k in found)
    equal: bool = found == wanted
    return equal


def what_it_said(text: str) -> str:
    """What a failed call said: its `error` field, or its first line."""
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict) and isinstance(document.get("error"), str):
        text = document["error"]
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= SHOWN else line[: SHOWN - 1] + "…"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
