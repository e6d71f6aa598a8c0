"""The one path every tool call takes, from the model, the CLI or the UI's run-tool form.

Arguments are parsed, coerced and validated against the tool's schema before the tool runs;
a bad call gets an error result that says what to fix, and the tool is not run.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from workbench.core.tools import errors
from workbench.core.tools.arguments import ArgumentError, prepare_arguments
from workbench.core.tools.registry import ToolRegistry


def call_tool(
    registry: ToolRegistry, name: str, raw_args: Any, **context: Any
) -> str | dict[str, Any]:
    """Run `name` with the model's raw arguments; never raises."""
    entry = registry.get_entry(name)
    if entry is None:
        return errors.unknown_tool(name)
    try:
        args = prepare_arguments(raw_args, entry.schema)
    except ArgumentError as exc:
        return errors.invalid_arguments(str(exc))
    return registry.dispatch(name, args, **context)


def suggest_tools(registry: ToolRegistry, name: str, limit: int = 3) -> list[str]:
    """Names close to `name`, to suggest (never to run in its place, as Hermes's fuzzy
    repair does: `remove_file` became `read_file`)."""
    return difflib.get_close_matches(name, registry.get_all_tool_names(), n=limit, cutoff=0.6)


def is_error_result(result: str | dict[str, Any]) -> bool:
    """True when a tool result is an error payload (`{"error": ...}`)."""
    if not isinstance(result, str) or not result.startswith("{"):
        return False
    try:
        payload = json.loads(result)
    except ValueError:
        return False
    return isinstance(payload, dict) and bool(payload.get("error"))
