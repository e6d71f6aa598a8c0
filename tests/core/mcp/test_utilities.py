"""Which of Hermes's resources and prompts tools a server gets, and what a binary resource
becomes (the real servers' end to end is in tests/e2e/test_mcp_utilities.py)."""

from __future__ import annotations

import base64
import json
import stat
import sys
from pathlib import Path

import mcp.types as types
import pytest

from workbench.core.mcp import catalog as cat
from workbench.core.mcp import utilities
from workbench.core.mcp.config import parse_server
from workbench.core.tools.registry import ToolRegistry

BOTH = cat.ServerInfo(capabilities={"resources": {}, "prompts": {"listChanged": False}})


@pytest.mark.parametrize(
    ("capabilities", "tools", "offered"),
    [
        ({"resources": {}, "prompts": {}}, None, [*utilities.RESOURCE_TOOLS, *utilities.PROMPT_TOOLS]),
        ({"tools": {}}, None, []),
        ({"prompts": {}}, None, list(utilities.PROMPT_TOOLS)),
        ({"resources": {}, "prompts": {}}, {"resources": False}, list(utilities.PROMPT_TOOLS)),
        ({"resources": {}, "prompts": {}}, {"prompts": "off"}, list(utilities.RESOURCE_TOOLS)),
        ({"resources": {}}, {"include": ["x"], "exclude": ["list_resources"]}, ["list_resources", "read_resource"]),
    ],
)  # fmt: skip
def test_offered_follows_the_capabilities_and_the_config(capabilities, tools, offered) -> None:
    entry = {"command": "x", **({"tools": tools} if tools is not None else {})}
    config = parse_server("s", entry)
    assert not config.problems
    assert utilities.offered(cat.ServerInfo(capabilities=capabilities), config) == offered


def test_a_value_that_is_not_boolish_keeps_them() -> None:
    config = parse_server("s", {"command": "x", "tools": {"resources": "maybe"}})
    assert config.resources and utilities.offered(BOTH, config)[:1] == ["list_resources"]


def read(documents: Path, *contents: object) -> str:
    result = types.ReadResourceResult(contents=list(contents))  # type: ignore[arg-type]
    return json.loads(utilities.read_result(result, documents))["result"]


def test_text_parts_are_joined_and_a_blob_is_saved(tmp_path: Path) -> None:
    documents = tmp_path / "cache" / "documents"
    text = types.TextResourceContents(uri="a://t", text="hello", mime_type="text/plain")
    blob = types.BlobResourceContents(
        uri="a://dir/../pic.png",
        blob=base64.b64encode(b"\x89PNG-data").decode(),
        mime_type="image/png",
    )
    first, second = read(documents, text, blob).split("\n")
    assert first == "hello"
    assert second.endswith("(image/png, 9 bytes) — read it with read_file or terminal tools]")
    (saved,) = documents.iterdir()
    assert saved.read_bytes() == b"\x89PNG-data" and saved.name.endswith("_pic.png")
    assert str(saved) in second and stat.S_IMODE(saved.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("uri", "mime", "name"),
    [
        ("file:///etc/passwd", "", "passwd"),
        ("demo://x/%2e%2e%2fsecret", "", "secret"),  # a separator hidden in an escape
        ("demo://x/a%0Ab", "", "ab"),
        ("demo://host", "image/png", "resource.png"),
        ("demo://host/..", "", "resource.bin"),
        ("demo://x/" + "n" * 200 + ".txt", "", "n" * 146 + ".txt"),
    ],
)
def test_the_saved_name_cannot_leave_the_folder(uri: str, mime: str, name: str) -> None:
    assert utilities.file_name(uri, mime) == name


def test_a_blob_that_does_not_decode_or_is_too_large_is_said(tmp_path: Path, monkeypatch) -> None:
    bad_padding = utilities.save_blob(tmp_path, "abc", "a://b", "")
    assert bad_padding == "[MCP embedded resource could not be decoded: a://b]"
    monkeypatch.setattr(utilities, "_MAX_B64", 8)
    too_big = utilities.save_blob(tmp_path, base64.b64encode(b"0123456789").decode(), "a://b", "")
    assert too_big.startswith("[MCP embedded resource too large to cache: ~")
    assert not list(tmp_path.iterdir())


CLASHING = [sys.executable, str(Path(__file__).with_name("clashing_server.py"))]


def test_a_servers_own_tool_keeps_a_utilitys_name(start, reg: ToolRegistry) -> None:
    manager, _ = start({"c": {"command": CLASHING[0], "args": CLASHING[1:]}})
    assert (
        json.loads(str(reg.dispatch("mcp__c__get_prompt", {"name": "x"})))["result"]
        == "own tool: x"
    )
    assert "mcp__c__get_prompt" not in manager.utilities
    prompts = json.loads(str(reg.dispatch("mcp__c__list_prompts", {})))["prompts"]
    assert [p["name"] for p in prompts] == ["greet"]
    assert manager.statuses()[0].tools == 4  # its own, list_prompts and the two for resources
