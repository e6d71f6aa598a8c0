"""A tool of any schema shape never takes a command or a turn down: the shapes plugin and the
shapes MCP server (a tool a shape, tests/core/plugins/fixtures/shapes/shapes.json) through
`tools --json`, `doctor` and `chat`. The usable ones are offered and called; the broken ones
are listed with why, named by doctor, and never offered."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.mcp import HERE as MCP_FIXTURES
from tests.support.plugins import FIXTURES

SHAPES = json.loads((FIXTURES / "shapes" / "shapes.json").read_text())
USABLE = sorted(SHAPES["usable"])
# MCP's wire format wants an object at the top: the server does not send `not_object`
SENT_BY_MCP = [n for n in SHAPES["broken"] if SHAPES["broken"][n]["parameters"]["type"] == "object"]
PREFIX = {"plugin": "shapes_", "mcp": "mcp__shapes__"}


def configure(home: Path, source: str, lean: bool = True) -> None:
    """A home with the shapes plugin enabled, or the shapes MCP server configured; `lean`:
    the small model's profile, the bundled model's default (where the crash was)."""
    home.mkdir(parents=True, exist_ok=True)
    config: dict = {"model": {"lean": lean}}
    if source == "plugin":
        shutil.copytree(FIXTURES / "shapes", home / "plugins" / "shapes")
        config["plugins"] = {"enabled": ["shapes"]}
    else:
        server = str(MCP_FIXTURES / "shapes_server.py")
        config["mcp_servers"] = {"shapes": {"command": sys.executable, "args": [server]}}
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def broken(source: str) -> list[str]:
    return sorted(SHAPES["broken"]) if source == "plugin" else sorted(SENT_BY_MCP)


@pytest.fixture
def env(cli_env, fake: FakeOpenAI) -> dict[str, str]:
    return {**cli_env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": fake.api_key}


@pytest.mark.parametrize("source", ["plugin", "mcp"])
def test_tools_json_lists_every_shape_usable_or_with_why(env, home: Path, source: str) -> None:
    configure(home, source)
    out = run(env, "tools", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["name"]: r for r in data["tools"]}
    offered = set(data["offered"]["tools"])
    for name in USABLE:
        row = rows[PREFIX[source] + name]
        assert row["available"] and row["schema_problem"] is None, row
        assert row["name"] in offered
    for name in broken(source):
        row, reason = rows[PREFIX[source] + name], SHAPES["broken"][name]["reason"]
        assert not row["available"] and row["name"] not in offered and not row["offered"]
        assert row["schema_problem"] == reason
        assert row["reason"] == f"its schema cannot be used: {reason}"
        assert any(p.startswith(f"tool {row['name']} (") for p in data["problems"])


@pytest.mark.parametrize("source", ["plugin", "mcp"])
def test_doctor_names_each_tool_whose_schema_cannot_be_used(env, home: Path, source: str) -> None:
    configure(home, source)
    out = run(env, "doctor")
    problems = out.stdout.split("problem(s):", 1)[-1]
    assert out.returncode == 1 and "no problems found" not in out.stdout, out.stdout
    for name in broken(source):
        assert (
            f"  - tool {PREFIX[source]}{name} ({source} 'shapes'): its schema cannot be used"
            in problems
        )
    for name in USABLE:
        assert f"{PREFIX[source]}{name} " not in problems


@pytest.mark.parametrize("source", ["plugin", "mcp"])
def test_a_small_models_turn_is_sent_the_usable_tools_and_a_null_fits_a_type_list(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path, source: str
) -> None:
    configure(home, source)  # lean: its tools in full, without their numeric options
    tool = PREFIX[source] + "type_list"
    fake.add(tools((tool, {"text": None})), text("It took a null."))
    out = run(env, "chat", "call it with no text", "--model", "gpt-test", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It took a null." and f"✔ {tool} ok" in out.stderr
    sent = {t["function"]["name"]: t["function"] for t in fake.requests[0]["tools"]}
    assert {PREFIX[source] + n for n in USABLE} <= set(sent)
    assert not {PREFIX[source] + n for n in broken(source)} & set(sent)
    properties = sent[tool]["parameters"]["properties"]
    assert properties == {"text": {"type": ["string", "null"]}}  # `count`: an optional number
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert arguments_got(result["content"]) == {"text": None}  # the null, as given


def test_a_full_turn_reaches_the_usable_tools_through_tool_search(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    """With the full profile the plugin's tools are deferred (tools.tool_search: auto): the
    listing names the usable ones, never a broken one, and a call through the bridge runs."""
    configure(home, "plugin", lean=False)
    call = {"calls": [{"name": "shapes_type_list", "arguments": {"text": None}}]}
    fake.add(tools(("tool_call", call)), text("It took a null."))
    out = run(env, "chat", "call it with no text", "--model", "gpt-test", cwd=tmp_path)
    assert out.returncode == 0 and "✔ shapes_type_list ok" in out.stderr, out.stderr
    sent = json.dumps(fake.requests[0]["tools"])
    assert not [n for n in broken("plugin") if f"shapes_{n}" in sent]
    assert all(f"shapes_{n}" in sent for n in USABLE)
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert arguments_got(result["content"]) == {"text": None}


def arguments_got(content: str) -> dict:
    """What a shapes tool says it got, from its result (an MCP tool's text is wrapped)."""
    data = json.loads(content)
    inner = data.get("result", data)
    return (json.loads(inner) if isinstance(inner, str) else inner)["got"]
