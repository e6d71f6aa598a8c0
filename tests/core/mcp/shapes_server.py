"""An MCP server (mcp 2.x MCPServer) offering a tool with each shape of schema in the shapes
plugin's shapes.json, sent as written, one tool a shape. Every tool answers with the
arguments it got.

MCP's wire format wants `type: object` at the top of every input schema, and the SDK refuses
a whole tool list holding one that is not: a top with no type is sent with it named, and a
top of another type (`not_object`) is not sent.

Usage: shapes_server.py [stdio | http PORT]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as MCPTool

SHAPES = json.loads(
    (Path(__file__).parents[1] / "plugins" / "fixtures" / "shapes" / "shapes.json").read_text()
)
TOOLS = {
    name: {**shape, "parameters": {"type": "object", **shape["parameters"]}}
    for group in ("usable", "broken")
    for name, shape in SHAPES[group].items()
    if shape["parameters"].get("type", "object") == "object"
}


class ShapesServer(MCPServer):
    """Its tools' input schemas are the raw JSON of shapes.json, not derived from functions."""

    async def list_tools(self) -> list[MCPTool]:
        return [
            MCPTool(name=name, description=shape["description"], input_schema=shape["parameters"])
            for name, shape in TOOLS.items()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult:
        text = json.dumps({"tool": name, "got": arguments})
        return CallToolResult(content=[TextContent(type="text", text=text)])


server = ShapesServer("shapes-server", version="0.1")

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
