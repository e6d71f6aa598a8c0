"""MCP configuration, tool names and result conversion."""

from __future__ import annotations

import json

import mcp.types as types
import pytest

from workbench.core.mcp.config import parse_server, parse_servers
from workbench.core.mcp.names import MAX_NAME, sanitise, tool_name
from workbench.core.mcp.results import convert


def test_hermes_keys_and_interpolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "ghp_123")
    server = parse_server(
        "gh",
        {
            "url": "https://example.org/mcp",
            "headers": {"Authorization": "Bearer ${GH_TOKEN}"},
            "timeout": 30,
            "connect_timeout": 5,
            "enabled": "yes",
            "supports_parallel_tool_calls": "true",
            "tools": {"include": "search", "exclude": ["delete"]},
            "env": {"X": "${UNSET_VAR_XYZ}"},
        },
    )
    assert server.problems == [] and server.transport == "http"
    assert server.headers == {"Authorization": "Bearer ghp_123"}
    assert (server.timeout, server.connect_timeout, server.enabled, server.parallel) == (
        30,
        5,
        True,
        True,
    )
    assert server.wants("search") and not server.wants("other")


def test_problems_are_per_server() -> None:
    servers = {
        s.name: s
        for s in parse_servers(
            {
                "ok": {"command": "x"},
                "neither": {},
                "sse": {"url": "http://h/sse", "transport": "sse"},
                "bad_timeout": {"command": "x", "timeout": -1},
                "not_a_map": "text",
            }
        )
    }
    assert servers["ok"].problems == [] and servers["sse"].transport == "sse"
    assert servers["neither"].problems == ["needs a command (stdio) or a url (HTTP)"]
    assert "positive number" in servers["bad_timeout"].problems[0]
    assert servers["not_a_map"].problems == ["settings must be a mapping"]
    assert parse_servers(["not", "a", "map"])[0].problems


def test_child_environment_is_minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-no")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/x")
    env = parse_server("s", {"command": "x", "env": {"ONLY": "this"}}).child_env()
    assert "OPENAI_API_KEY" not in env and env["ONLY"] == "this" and env["XDG_CONFIG_HOME"] == "/x"


def test_names_are_sanitised_and_capped_uniquely() -> None:
    assert tool_name("my-server", "get-tiny.image") == "mcp__my_server__get_tiny_image"
    assert sanitise("a.b c") == "a_b_c"
    long_a = tool_name("a-very-long-server-name", "x" * 60 + "_alpha")
    long_b = tool_name("a-very-long-server-name", "x" * 60 + "_beta")
    assert len(long_a) == len(long_b) == MAX_NAME and long_a != long_b


def result(*content, **kw) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), **kw)


def test_results_in_hermes_shapes() -> None:
    text = types.TextContent(type="text", text="hello")
    assert json.loads(convert(result(text))) == {"result": "hello"}
    assert json.loads(convert(result(text, structured_content={"n": 1}))) == {
        "result": "hello",
        "structuredContent": {"n": 1},
    }
    assert json.loads(convert(result(structured_content={"n": 1}))) == {"result": {"n": 1}}
    assert json.loads(convert(result(text, is_error=True))) == {"error": "hello"}
    image = types.ImageContent(type="image", data="AAAA", mime_type="image/png")
    envelope = convert(result(text, image))
    assert envelope["_multimodal"] is True and envelope["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AAAA"},
    }
    resource = types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri="demo://a", text="body")
    )
    assert json.loads(convert(result(resource))) == {"result": "[resource demo://a]\nbody"}


def test_lazy_is_hermes_key_read_as_a_boolean() -> None:
    lazy = parse_server("docs", {"command": "x", "lazy": True})
    assert lazy.lazy and lazy.warnings == []  # a known key: no "unknown key" warning
    assert parse_server("docs", {"command": "x", "lazy": "yes"}).lazy
    assert not parse_server("docs", {"command": "x"}).lazy
