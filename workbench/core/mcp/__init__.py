"""MCP servers as a tool source (the `mcp` 2.x SDK; see shared/docs/mcp-sdk.md)."""

from workbench.core.mcp.manager import CallProgress, MCPManager, ServerChanged, ToolsChanged
from workbench.core.mcp.server import ServerStatus

__all__ = ["CallProgress", "MCPManager", "ServerChanged", "ServerStatus", "ToolsChanged"]
