"""Error payloads the model receives, in the exact shapes of Hermes's registry `dispatch`."""

from __future__ import annotations

import json
import re

TOOL_ERROR_PREFIX = "[TOOL_ERROR] "
MAX_ERROR_CHARS = 2000

_ROLE_TAGS = "tool_call|function_call|result|response|output|input|system|assistant|user"
_ROLE_TAG_RE = re.compile(rf"</?\s*(?:{_ROLE_TAGS})\b[^>]*>", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[A-Za-z0-9_+-]*")
_CDATA_RE = re.compile(r"<!\[CDATA\[|\]\]>")


def sanitize_tool_error(message: str) -> str:
    """Strip text that could be read as conversation structure, cap it, and prefix it.

    An error message may carry attacker-controlled text (a web page, a file); tags that
    look like conversation roles or code fences could confuse the model, so they go.
    """
    text = _ROLE_TAG_RE.sub("", message)
    text = _FENCE_RE.sub("", text)
    text = _CDATA_RE.sub("", text)
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 3] + "..."
    return TOOL_ERROR_PREFIX + text


def tool_error(message: object, **extra: object) -> str:
    """A plain error result, as Hermes's `tool_error` helper (ensure_ascii=False)."""
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)


def tool_result(data: object = None, **fields: object) -> str:
    """A success result, as Hermes's `tool_result` helper."""
    payload = data if data is not None else fields
    return json.dumps(payload, ensure_ascii=False)


def unknown_tool(name: str) -> str:
    return json.dumps({"error": f"Unknown tool: {name}"})


def execution_failed(exc: BaseException) -> str:
    message = f"Tool execution failed: {type(exc).__name__}: {exc}"
    return json.dumps({"error": sanitize_tool_error(message)})


def result_contract(name: str, result: object) -> str:
    type_name = type(result).__name__
    return json.dumps(
        {
            "error": f"Tool handler returned unsupported result type: {type_name}",
            "error_type": "tool_result_contract",
            "tool": name,
            "result_type": type_name,
        }
    )


def invalid_arguments(message: str) -> str:
    return json.dumps(
        {"error": "Invalid tool arguments", "message": message},
        ensure_ascii=False,
    )


def not_run(why: str) -> str:
    """The result of a call that never got one (its turn ended, or the session, first)."""
    return json.dumps({"error": f"Not run: {why}", "status": "skipped"}, ensure_ascii=False)
