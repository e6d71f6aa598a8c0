"""Registry names for MCP tools: `mcp__<server>__<tool>`, sanitised, at most 64 characters.

Hermes's sanitiser maps `my-server`, `my_server` and `my.server` to the same name and lets
them overwrite each other, and its names reach 82 characters (providers accept 64).
Ours keeps the Hermes form where it fits, cuts longer names with a hash of the full name so
they stay unique, and leaves collisions to the registry, which refuses and reports them.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitise(component: str) -> str:
    return _UNSAFE.sub("_", component)


def tool_name(server: str, tool: str) -> str:
    name = f"mcp__{sanitise(server)}__{sanitise(tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def toolset(server: str) -> str:
    return f"mcp-{server}"
