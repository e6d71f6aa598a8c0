"""Who may register or remove which tool: the rules every registration passes.

Every tool has a source (builtin, mcp, plugin) and an owner. Only its owner may replace or
remove it, unless the newcomer is allowed to override (built-in code, or a plugin the user
opted in) and the tool is not an MCP server's; only MCP servers may use `mcp-*` toolsets;
the tool-search bridge's names are never registered.
"""

from __future__ import annotations

from workbench.core.tools.entry import ToolEntry
from workbench.core.tools.events import ToolSource

# Names the agent loop answers itself (its tool-search bridge); a tool registered under
# one of them would be unreachable, so they are refused outright.
RESERVED_NAMES = frozenset({"tool_search", "tool_describe", "tool_call"})


def registration_refusal(new: ToolEntry, old: ToolEntry | None, override: bool) -> str | None:
    """Why `new` may not be registered where `old` is, or None if it may."""
    if not new.name or not isinstance(new.name, str):
        return "a tool needs a non-empty string name"
    if not isinstance(new.toolset, str):
        return f"tool '{new.name}': its toolset must be a name, not {type(new.toolset).__name__}"
    if not isinstance(new.schema, dict):
        return (
            f"tool '{new.name}': its schema must be a JSON object, not {type(new.schema).__name__}"
        )
    if new.name in RESERVED_NAMES:
        return f"'{new.name}' is reserved for the agent's tool-search bridge"
    if not callable(new.handler):
        return f"tool '{new.name}': handler is not callable"
    if new.toolset.startswith("mcp-") and new.source is not ToolSource.MCP:
        return (
            f"tool '{new.name}': toolset '{new.toolset}' is reserved for MCP servers; "
            f"{new.source.value} '{new.owner}' may not register into it"
        )
    if old is None or (old.source, old.owner) == (new.source, new.owner):
        return None
    if override and old.source is not ToolSource.MCP:
        # An explicit, permitted override (built-in code, or a plugin the user opted in).
        return None
    return (
        f"tool '{new.name}' is already registered by {old.source.value} '{old.owner}' "
        f"(toolset '{old.toolset}'); refused registration from {new.source.value} "
        f"'{new.owner}' (toolset '{new.toolset}')"
    )


def removal_refusal(entry: ToolEntry, source: ToolSource, owner: str) -> str | None:
    """Why `source`/`owner` may not remove `entry`, or None if it may (its own tool)."""
    if (entry.source, entry.owner) == (source, owner):
        return None
    return (
        f"{source.value} '{owner}' may not remove tool '{entry.name}' "
        f"owned by {entry.source.value} '{entry.owner}'"
    )
