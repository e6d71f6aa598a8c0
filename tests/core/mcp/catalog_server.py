"""An MCP server (mcp 2.x MCPServer) with resources, a template, prompts, logging, and tools
that ask the client for roots, input (elicitation) and a completion (sampling).

Usage: catalog_server.py  (stdio). The exact behaviour the tests assert on.
"""

from __future__ import annotations

import base64
import json

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("catalog-server", version="1.2.3", instructions="Try the note resources.")
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
counter = {"value": 0}


@server.resource("note://hello", name="hello", description="A greeting", mime_type="text/plain")
def hello() -> str:
    return "hello from the catalog server"


@server.resource("data://config.json", name="config", mime_type="application/json")
def config() -> str:
    return json.dumps({"b": [1, 2], "a": {"nested": True}})


@server.resource("bin://pixel.png", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@server.resource("note://counter", name="counter", mime_type="text/plain")
def count() -> str:
    return f"counter is {counter['value']}"


@server.resource("note://by-name/{name}", name="named note", mime_type="text/plain")
def named(name: str) -> str:
    return f"a note called {name}"


@server.prompt(description="Greet someone")
def greet(name: str, style: str = "plain") -> str:
    return f"Say hello to {name} in a {style} way."


@server.prompt(description="No arguments")
def simple() -> str:
    return "A simple prompt."


@server.tool()
async def bump(ctx: Context) -> int:
    """Add one to the counter; subscribers of note://counter hear of it; logs the new value."""
    counter["value"] += 1
    await ctx.session.send_resource_updated("note://counter")
    await ctx.info(f"counter now {counter['value']}", logger_name="counter")
    return counter["value"]


@server.tool()
async def add_note(name: str, ctx: Context) -> str:
    """Add a resource at run time and announce the new list."""

    def body() -> str:
        return f"note {name}"

    server.resource(f"note://extra/{name}", name=name, mime_type="text/plain")(body)
    await ctx.session.send_resource_list_changed()
    return name


@server.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, as URIs."""
    result = await ctx.session.list_roots()
    return json.dumps([str(r.uri) for r in result.roots])


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the user for an answer (elicitation); return what came back."""
    result = await ctx.session.elicit(
        question,
        {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "Your answer"},
                "sure": {"type": "boolean", "description": "Are you sure?"},
                "count": {"type": "integer", "minimum": 1, "maximum": 9},
            },
            "required": ["answer"],
        },
    )
    return json.dumps({"action": result.action, "content": result.content})


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Ask the client's model for a completion (sampling); return its text or the error."""
    try:
        result = await ctx.session.create_message(
            [
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=prompt)
                )
            ],
            max_tokens=64,
            system_prompt="You are terse.",
        )
    except Exception as exc:
        return f"refused: {exc}"
    return f"{result.model}: {result.content.text}"


if __name__ == "__main__":
    server.run("stdio")
