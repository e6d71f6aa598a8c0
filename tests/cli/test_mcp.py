"""`hermes-tui mcp ...` as a user runs it: the installed command against real server processes
(the SDK's catalog server, a server that never answers), plus garbage from the user."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import run

MCP = Path(__file__).resolve().parents[1] / "core" / "mcp"


SERVERS = {
    "cat": f"    command: {sys.executable}\n    args: [{MCP / 'catalog_server.py'}]\n",
    "silent": f"    command: {sys.executable}\n    args: [{MCP / 'silent_server.py'}]\n",
    "idle": "    command: nothing\n    enabled: false\n",
}


def configure(home: Path, *names: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    entries = "".join(f"  {name}:\n{SERVERS[name]}" for name in names)
    (home / "config.yaml").write_text(f"mcp_servers:\n{entries}")


@pytest.fixture
def configured(home: Path, cli_env) -> dict[str, str]:
    configure(home, "cat", "silent", "idle")
    return cli_env


def mcp(env: dict[str, str], *args: str):
    return run(env, "mcp", *args)


def test_resources_and_templates(configured) -> None:
    out = mcp(configured, "resources", "cat")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("RESOURCES (4)\n  note://hello  hello  text/plain\n")
    assert "TEMPLATES (1)\n  note://by-name/{name}  named note  text/plain" in out.stdout


def test_resources_json(configured) -> None:
    data = json.loads(mcp(configured, "resources", "cat", "--json").stdout)
    assert {r["uri"] for r in data["resources"]} >= {"note://hello", "bin://pixel.png"}
    assert data["templates"][0]["uri_template"] == "note://by-name/{name}"


def test_read_json_pretty(configured) -> None:
    pretty = mcp(configured, "read", "cat", "data://config.json").stdout
    assert pretty == json.dumps({"b": [1, 2], "a": {"nested": True}}, indent=2) + "\n"


def test_read_binary_json(configured) -> None:
    data = json.loads(mcp(configured, "read", "cat", "bin://pixel.png", "--json").stdout)
    assert data["contents"] == [{"uri": "bin://pixel.png", "mime_type": "image/png", "size": 70}]


def test_prompts(configured) -> None:
    listing = mcp(configured, "prompts", "cat").stdout
    assert "greet  — Greet someone\n    name (required)\n    style (optional)" in listing


def test_a_prompt(configured) -> None:
    out = mcp(configured, "prompt", "cat", "greet", "--args", '{"name": "Ada"}')
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Greet someone\n[user]\nSay hello to Ada in a plain way.\n"


def test_a_prompt_json(configured) -> None:
    data = json.loads(
        mcp(configured, "prompt", "cat", "greet", "--args", '{"name":"Bo"}', "--json").stdout
    )
    assert data["messages"] == [{"role": "user", "content": "Say hello to Bo in a plain way."}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("read", "nope", "x://y"), "no MCP server named 'nope' (servers: cat, silent, idle)"),
        (("read", "cat", "note://nowhere"), "MCP server cat refused to read note://nowhere"),
        (("prompt", "cat", "greet", "--args", "{name"), "--args is not valid JSON"),
        (("prompt", "cat", "greet", "--args", "[1]"), "must be a JSON object"),
        (("prompt", "cat", "greet", "--args", "{}"), "prompt greet needs name"),
        (("prompt", "cat", "nope"), "cat has no prompt 'nope' (its prompts: greet, simple)"),
        (("resources", "cat", "--timeout", "0"), "--timeout must be a positive number"),
    ],
)
def test_usage_errors_exit_2_and_say_what(configured, args, message) -> None:
    out = mcp(configured, *args)
    assert (out.returncode, out.stdout) == (2, "")
    assert message in out.stderr


def test_a_server_that_never_answers_times_out(configured) -> None:
    out = mcp(configured, "prompts", "silent", "--timeout", "1")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(
        "hermes-tui: MCP server silent did not answer within 1 s (--timeout): "
        "no answer to initialize"
    )


def test_a_disabled_server_says_so(configured) -> None:
    out = mcp(configured, "read", "idle", "x://y", "--timeout", "5")
    assert out.returncode == 1
    assert "MCP server idle is disabled" in out.stderr


def test_list(home: Path, cli_env) -> None:
    # without the server that never answers (below), `list` returns once the others settled
    configure(home, "cat", "idle")
    out = mcp(cli_env, "list", "--json", "--timeout", "20")
    servers = {s["name"]: s for s in json.loads(out.stdout)}
    assert out.returncode == 0, out.stderr
    cat = servers["cat"]
    assert (cat["state"], cat["server"], cat["resources"], cat["prompts"]) == (
        "ready",
        {"name": "catalog-server", "version": "1.2.3"},
        4,
        2,
    )
    assert "resources" in cat["capabilities"] and cat["protocol"]
    assert servers["idle"]["state"] == "disabled"


def test_list_names_a_server_that_is_not_ready(configured) -> None:
    out = mcp(configured, "list", "--json", "--timeout", "1")
    servers = {s["name"]: s for s in json.loads(out.stdout)}
    assert out.returncode == 1  # one server is not ready
    assert servers["silent"]["state"] == "starting"


def test_no_servers_configured(cli_env) -> None:
    out = mcp(cli_env, "list")
    assert out.returncode == 0 and out.stdout.startswith("No MCP servers configured")


def test_headless_questions_are_declined_and_said(configured) -> None:
    out = run(configured, "call", "mcp__cat__ask", "--args", '{"question": "Name?"}')
    assert json.loads(json.loads(out.stdout)["result"]) == {"action": "decline", "content": None}
    assert (
        "hermes-tui: MCP server cat asked for input: declined (no one can be asked (no UI))"
        in out.stderr
    )
    out = run(configured, "call", "mcp__cat__sample", "--args", '{"prompt": "hi"}')
    assert "sampling refused: no one can be asked (no UI)" in out.stdout
    assert "MCP server cat asked for a completion: refused" in out.stderr
