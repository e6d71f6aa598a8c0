"""A server's `tools.include`/`tools.exclude` (Hermes's keys): which of its tools are offered.

Include wins over exclude; neither means every tool. Every tool a server lists is
registered, so the tools panel can show one switched off and switch it on again; the
filter decides, from the config as it is now, which are switched off: those are neither
offered to the model nor run. Switching one writes the server's entry as Hermes's
`hermes tools disable server:tool` does (into `exclude`), and, when the server has an
`include` list, into that list, since include wins.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.core.mcp.config import parse_servers


class FilterError(ValueError):
    """The server is not configured, or its entry is not a mapping to write into."""


def switched_off(section: Any, registered: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Registered MCP tools (name, server, the server's name for it) that their server's
    filter leaves out → why."""
    servers = {s.name: s for s in parse_servers(section) if not s.problems}
    off: dict[str, str] = {}
    for name, server, tool in registered:
        config = servers.get(server)
        if config is None or config.wants(tool):
            continue
        key = "not in tools.include" if config.include is not None else "tools.exclude"
        off[name] = f"switched off (mcp_servers.{server}: {key})"
    return off


def switch(doc: Any, server: str, tool: str, enabled: bool) -> None:
    """Switch `tool` (the server's own name for it) in the round-trip document."""
    servers = doc.get("mcp_servers") if isinstance(doc, dict) else None
    entry = servers.get(server) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        raise FilterError(f"no MCP server '{server}' in mcp_servers of config.yaml")
    filters = entry.get("tools")
    if filters is None:
        filters = entry["tools"] = type(entry)()
    if not isinstance(filters, dict):
        raise FilterError(f"mcp_servers.{server}.tools must be a mapping with include/exclude")
    if filters.get("include") is not None:
        _put(filters, "include", tool, enabled)
    _put(filters, "exclude", tool, not enabled)
    if not filters:
        del entry["tools"]


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value or []]


def _put(filters: Any, key: str, tool: str, present: bool) -> None:
    """`tool` in or out of the list at `key`. A list already so is left as the user wrote
    it; an empty exclude list is left out (an empty include list means no tool at all)."""
    names = _names(filters.get(key))
    if (tool in names) == present:
        return
    names = [n for n in names if n != tool] + ([tool] if present else [])
    if names or key == "include":
        filters[key] = names
    elif key in filters:
        del filters[key]
