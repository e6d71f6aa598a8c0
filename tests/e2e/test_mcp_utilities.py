"""Hermes's resources and prompts tools of an MCP server, against the real servers `make
mcp-servers` installs: server-everything (resources and prompts), mcp-server-filesystem
(tools only), mcp-server-time (advertises both, lists none)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.mcp import REAL_SERVERS as BIN
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import Executor
from workbench.core.mcp import MCPManager
from workbench.core.tools.registry import ToolRegistry

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not all(p.exists() for p in BIN.values()), reason="run `make mcp-servers` first"
    ),
]

FOUR = ("list_resources", "read_resource", "list_prompts", "get_prompt")


@pytest.fixture
def start(tmp_path: Path, reg: ToolRegistry):
    managers: list[MCPManager] = []

    def start(servers: dict) -> MCPManager:
        manager = MCPManager.from_config(reg, servers, log_dir=tmp_path / "home" / "logs")
        managers.append(manager)
        manager.start()
        assert manager.wait_settled(30)
        return manager

    yield start
    for manager in managers:
        manager.stop()


def ev(**extra) -> dict:
    return {"ev": {"command": str(BIN["everything"]), **extra}}


async def execute(reg: ToolRegistry, tool: str, **args) -> str:
    executor = Executor(reg, broker=ApprovalBroker())  # no one to ask: they must not need to
    try:
        (outcome,) = await executor.run([{"id": "c1", "name": tool, "arguments": json.dumps(args)}])
    finally:
        executor.shutdown()
    assert outcome.status in ("ok", "error"), outcome
    assert isinstance(outcome.content, str)
    return outcome.content


def test_the_four_are_registered_as_the_servers_tools(start, reg: ToolRegistry) -> None:
    start(ev())
    for tool in FOUR:
        entry = reg.get_entry(f"mcp__ev__{tool}")
        assert entry is not None, tool
        assert (entry.toolset, entry.source.value, entry.owner) == ("mcp-ev", "mcp", "ev")
    read = reg.get_entry("mcp__ev__read_resource")
    assert read is not None and read.schema["parameters"]["required"] == ["uri"]
    assert read.schema["description"] == "Read a resource by URI from MCP server 'ev'"
    get = reg.get_entry("mcp__ev__get_prompt")
    assert get is not None and set(get.schema["parameters"]["properties"]) == {"name", "arguments"}


async def test_list_and_read_resources_end_to_end(start, reg: ToolRegistry, tmp_path: Path) -> None:
    start(ev())
    listed = json.loads(await execute(reg, "mcp__ev__list_resources"))["resources"]
    features = next(r for r in listed if r["uri"].endswith("features.md"))
    assert features["mimeType"] == "text/markdown" and features["name"] == "features.md"
    text = json.loads(await execute(reg, "mcp__ev__read_resource", uri=features["uri"]))
    assert isinstance(text["result"], str) and text["result"].strip()
    dynamic = await execute(reg, "mcp__ev__read_resource", uri="demo://resource/dynamic/text/3")
    assert json.loads(dynamic)["result"].startswith("Resource 3: This is a plaintext resource")


async def test_a_binary_resource_is_saved_privately_and_pointed_at(
    start, reg: ToolRegistry, tmp_path: Path
) -> None:
    start(ev())
    reply = await execute(reg, "mcp__ev__read_resource", uri="demo://resource/dynamic/blob/3")
    marker = json.loads(reply)["result"]
    assert marker.startswith("[MCP resource saved to ") and "read it with read_file" in marker
    path = Path(marker.removeprefix("[MCP resource saved to ").split(" (")[0])
    assert path.parent == tmp_path / "home" / "cache" / "documents"
    assert path.name.startswith("doc_") and path.name.endswith("_3")
    assert f"{path.stat().st_size} bytes" in marker and path.stat().st_size > 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


async def test_list_and_get_prompts_end_to_end(start, reg: ToolRegistry) -> None:
    start(ev())
    prompts = json.loads(await execute(reg, "mcp__ev__list_prompts"))["prompts"]
    args_prompt = next(p for p in prompts if p["name"] == "args-prompt")
    assert {"name": "city", "description": "Name of the city", "required": True} in args_prompt[
        "arguments"
    ]
    got = json.loads(
        await execute(reg, "mcp__ev__get_prompt", name="args-prompt", arguments={"city": "Oslo"})
    )
    assert got["messages"] == [{"role": "user", "content": "What's weather in Oslo?"}]


async def test_the_servers_errors_are_the_tools_error_results(start, reg: ToolRegistry) -> None:
    start(ev())
    missing = json.loads(await execute(reg, "mcp__ev__read_resource", uri="nope://x"))
    assert missing["error"].startswith("MCP call failed: ") and "nope://x" in missing["error"]
    unknown = json.loads(await execute(reg, "mcp__ev__get_prompt", name="no-such-prompt"))
    assert "no-such-prompt" in unknown["error"]
    short = json.loads(await execute(reg, "mcp__ev__get_prompt", name="args-prompt"))
    assert short["error"].startswith("MCP call failed: ")  # city is required: the server says


async def test_an_untrusted_servers_reading_is_marked_as_data(start, reg: ToolRegistry) -> None:
    start(ev(trust="untrusted"))
    entry = reg.get_entry("mcp__ev__read_resource")
    assert entry is not None and entry.annotations == {"readOnlyHint": True}  # never asks
    text = await execute(reg, "mcp__ev__read_resource", uri="demo://resource/dynamic/text/3")
    assert text.startswith('<untrusted_tool_result source="mcp__ev__read_resource">')
    assert "Resource 3: This is a plaintext resource" in text


@pytest.mark.parametrize(
    ("tools", "gone"),
    [
        ({"resources": False}, ("list_resources", "read_resource")),
        ({"prompts": "off"}, ("list_prompts", "get_prompt")),
        ({"resources": "no", "prompts": False}, FOUR),
    ],
)
def test_hermes_config_keys_switch_them_off(start, reg: ToolRegistry, tools, gone) -> None:
    start(ev(tools=tools))
    assert reg.get_entry("mcp__ev__echo") is not None  # the server's own tools stay
    for tool in FOUR:
        assert (reg.get_entry(f"mcp__ev__{tool}") is None) == (tool in gone), tool


def test_a_server_that_advertises_neither_gets_none(start, reg: ToolRegistry, tmp_path) -> None:
    start({"fs": {"command": str(BIN["filesystem"]), "args": [str(tmp_path)]}})
    assert reg.get_entry("mcp__fs__read_text_file") is not None
    assert not [t for t in FOUR if reg.get_entry(f"mcp__fs__{t}") is not None]


async def test_the_time_server_advertises_both_and_lists_none(start, reg: ToolRegistry) -> None:
    """As in Hermes, the capability decides, not whether anything is listed."""
    start({"time": {"command": str(BIN["time"])}})
    assert json.loads(await execute(reg, "mcp__time__list_resources")) == {"resources": []}
    assert json.loads(await execute(reg, "mcp__time__list_prompts")) == {"prompts": []}


def test_cli_tools_lists_them_and_call_runs_them(cli_env, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  ev:\n    command: {BIN['everything']}\n    tools:\n"
        "      include: [echo]\n"  # Hermes's filter is for the server's own tools only
    )
    tools = {t["name"]: t for t in json.loads(run(cli_env, "tools", "--json").stdout)["tools"]}
    for tool in FOUR:
        row = tools[f"mcp__ev__{tool}"]
        assert (row["toolset"], row["switched_off"]) == ("mcp-ev", None), row
    assert tools["mcp__ev__get_sum"]["switched_off"]  # not in the include list
    call = run(
        cli_env,
        "call",
        "mcp__ev__get_prompt",
        "--args",
        '{"name": "args-prompt", "arguments": {"city": "Bergen"}}',
    )
    assert json.loads(call.stdout)["messages"][0]["content"] == "What's weather in Bergen?"
