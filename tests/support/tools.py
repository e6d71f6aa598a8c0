"""Tools for registry tests: a handler that does nothing and a schema to give it."""

from __future__ import annotations


def noop(args: dict, **kw: object) -> str:
    return "ok"


def schema(description: str = "a test tool", **properties: dict) -> dict:
    return {
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": []},
    }
