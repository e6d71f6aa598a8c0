"""An MCP server for tests (mcp 2.x MCPServer): the cases real servers do not produce on demand.

Usage: fixture_server.py [stdio | http PORT | garbage] ; env FIXTURE_MARKERS=<dir> for markers.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer

server = MCPServer("fixture-server", version="0.1")
MARKERS = Path(os.environ.get("FIXTURE_MARKERS", "/tmp"))
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress every 0.1 s; leaves a marker when cancelled."""
    steps = max(1, int(seconds / 0.1))
    try:
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            await anyio.sleep(0.1)
    except anyio.get_cancelled_exc_class():
        (MARKERS / "cancelled").write_text("yes")
        raise
    return "done"


@server.tool()
def boom() -> str:
    """Always fails (an is_error result, not a transport failure)."""
    raise ValueError("boom went the tool")


@server.tool()
def big(n: int) -> str:
    """Return n characters."""
    return "x" * n


@server.tool()
def pixel() -> Image:
    """A 1x1 PNG."""
    return Image(data=PIXEL, format="png")


@server.tool()
def die() -> str:
    """Crash the server mid-call."""
    os._exit(3)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool at run time and announce it."""

    def dynamic() -> str:
        return f"{name} here"

    server.add_tool(dynamic, name=name, description=f"dynamic tool {name}")
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return name


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove a tool at run time and announce it."""
    server.remove_tool(name)
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return name


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    (MARKERS / f"pid-{os.getpid()}").write_text(mode)
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        if mode == "garbage":
            print("Welcome to fixture-server v0.1! (a banner that is not JSON)", flush=True)
        server.run("stdio")
