"""MCP servers as a tool source (through the `mcp` 2.x SDK's client).

The names below load when first used: importing one of its modules (the events, say)
does not load the client, the manager and what they import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.mcp.asks import (
        ElicitAnswer,
        Elicitation,
        SamplingRequest,
        ServerAsks,
    )
    from workbench.core.mcp.events import (
        AskSettled,
        CallProgress,
        CatalogChanged,
        ResourceUpdated,
        ServerChanged,
        ServerLog,
        ToolsChanged,
    )
    from workbench.core.mcp.manager import (
        MCPManager,
        UnknownServer,
    )
    from workbench.core.mcp.server import (
        NotReady,
        ServerStatus,
    )

__all__ = [
    "AskSettled",
    "CallProgress",
    "CatalogChanged",
    "ElicitAnswer",
    "Elicitation",
    "MCPManager",
    "NotReady",
    "ResourceUpdated",
    "SamplingRequest",
    "ServerAsks",
    "ServerChanged",
    "ServerLog",
    "ServerStatus",
    "ToolsChanged",
    "UnknownServer",
]

_HOMES = {
    "ElicitAnswer": "asks",
    "Elicitation": "asks",
    "SamplingRequest": "asks",
    "ServerAsks": "asks",
    "AskSettled": "events",
    "CallProgress": "events",
    "CatalogChanged": "events",
    "ResourceUpdated": "events",
    "ServerChanged": "events",
    "ServerLog": "events",
    "ToolsChanged": "events",
    "MCPManager": "manager",
    "UnknownServer": "manager",
    "NotReady": "server",
    "ServerStatus": "server",
}


def __getattr__(name: str) -> Any:
    """Each name is imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
