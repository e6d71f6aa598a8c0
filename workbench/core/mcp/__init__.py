"""MCP servers as a tool source (through the `mcp` 2.x SDK's client)."""

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
from workbench.core.mcp.manager import MCPManager, UnknownServer
from workbench.core.mcp.server import NotReady, ServerStatus

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
