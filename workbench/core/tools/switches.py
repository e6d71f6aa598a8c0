"""Single tools switched off, besides whole toolsets.

Hermes switches whole toolsets, and single MCP tools through their server's
`tools.include`/`tools.exclude` (core.mcp.filters reads and writes those). A built-in or a
plugin tool is switched off here under our own key, `tools.disabled` (a list of tool names,
beside our `tools.timeout`): Hermes has none for them. A tool switched off is not offered to
the model and the executor refuses to run it.
"""

from __future__ import annotations

from typing import Any

from workbench.core.config import Config, set_path

DISABLED_KEY = "tools.disabled"
REASON = f"switched off ({DISABLED_KEY} in config.yaml)"


def disabled_tools(config: Config) -> list[str]:
    """The names under `tools.disabled` (a single name is read as a list of one)."""
    value = config.get(DISABLED_KEY)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []


def switch(doc: Any, name: str, enabled: bool) -> None:
    """Switch `name` in `tools.disabled` of the (round-trip) document, as it is now."""
    tools = doc.get("tools") if isinstance(doc, dict) else None
    current = tools.get("disabled") if isinstance(tools, dict) else None
    names = [current] if isinstance(current, str) else [str(n) for n in current or []]
    names = [n for n in names if n != name] + ([] if enabled else [name])
    set_path(doc, DISABLED_KEY, sorted(names))
