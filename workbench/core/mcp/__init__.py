"""MCP servers as a tool source (through the `mcp` 2.x SDK's client).

The names below load when first used: importing one of its modules (the events, say)
does not load the client, the manager and what they import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.lazy import lazy_names

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


__getattr__ = lazy_names(__name__, _HOMES, globals())
