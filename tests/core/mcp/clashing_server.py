"""An MCP server (mcp 2.x MCPServer) with a tool of its own named `get_prompt`, the name of
one of Hermes's prompts tools, and one prompt."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("clashing-server", version="0.1")


@server.tool()
def get_prompt(name: str) -> str:
    """The server's own tool of that name."""
    return f"own tool: {name}"


@server.prompt()
def greet(who: str) -> str:
    """Greets someone."""
    return f"Hello {who}"


if __name__ == "__main__":
    server.run("stdio")
