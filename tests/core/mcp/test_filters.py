"""A server's tools.include/exclude, switched from the workbench against a real server
(server-everything): written into its entry as Hermes writes it, and applied at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.mcp import REAL_SERVERS as BIN
from workbench.core.commands import set_tool
from workbench.core.config import config_path, load_config
from workbench.core.costs import offered_costs, preview_tool
from workbench.core.mcp import utilities
from workbench.core.mcp.filters import FilterError, switch
from workbench.core.runtime import load_runtime

needs_everything = pytest.mark.skipif(
    not BIN["everything"].exists(), reason="run `make mcp-servers` first"
)
ECHO = "mcp__ev__echo"


def config(include: str = "") -> str:
    return f"""\
# my servers
mcp_servers:
  ev:
    command: {BIN["everything"]}
    timeout: 60          # mine
{include}model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
tools:
  tool_search:
    enabled: off         # the filters alone: every tool's whole size is what a switch saves
"""


def started(home: Path):
    runtime = load_runtime(home, load_plugins=False)
    manager = runtime.start_mcp()
    assert manager is not None and manager.wait_settled(60)
    assert runtime.registry.get_entry(ECHO) is not None
    return runtime


def run(runtime, name: str) -> tuple[str, str]:
    executor = runtime.executor(broker=None)
    try:
        (outcome,) = asyncio.run(
            executor.run([{"id": "1", "name": name, "arguments": {"message": "hi"}}])
        )
    finally:
        executor.shutdown()
    return outcome.status, str(outcome.content)


@needs_everything
@pytest.mark.e2e  # the real `everything` server (npm): end-to-end
def test_an_mcp_tool_switched_off_goes_into_exclude_and_is_neither_offered_nor_run(
    home: Path,
) -> None:
    load_runtime(home, load_plugins=False)  # creates the home
    config_path(home).write_text(config())
    runtime = started(home)
    try:
        before = offered_costs(runtime)
        assert before.tools[ECHO].offered and before.toolset("mcp-ev") > 0
        preview = preview_tool(runtime, before, ECHO, False)
        assert preview == -before.tools[ECHO].tokens
        set_tool(runtime, ECHO, False)
        text = config_path(home).read_text()
        assert "# my servers" in text and "timeout: 60          # mine" in text
        saved = load_config(config_path(home)).get("mcp_servers.ev.tools")
        assert saved == {"exclude": ["echo"]}  # the server's own name, as Hermes writes it
        assert ECHO not in runtime.effective_tools()  # applied at once, no restart
        assert offered_costs(runtime).total - before.total == preview
        status, content = run(runtime, ECHO)
        said = json.loads(content)["error"]
        assert status == "invalid" and "(mcp_servers.ev: tools.exclude)" in said
        assert f"to switch it on: `hermes-tui tools enable {ECHO}`" in said
    finally:
        runtime.stop_mcp()

    again = started(home)  # a restart reads it back; the tool is listed, switched off
    try:
        assert ECHO not in again.effective_tools()
        assert "tools.exclude" in again.switched_off()[ECHO]
        set_tool(again, "ev:echo", True)  # Hermes's notation works too
        assert load_config(config_path(home)).get("mcp_servers.ev.tools") is None
        assert ECHO in again.effective_tools()
        assert run(again, ECHO)[0] == "ok"
    finally:
        again.stop_mcp()


@needs_everything
@pytest.mark.e2e  # the real `everything` server (npm): end-to-end
def test_with_an_include_list_the_switch_edits_that_list(home: Path) -> None:
    load_runtime(home, load_plugins=False)
    config_path(home).write_text(config("    tools:\n      include: [echo]\n"))
    runtime = started(home)
    try:
        offered = [n for n in runtime.effective_tools() if n.startswith("mcp__ev__")]
        # include wins: the rest are listed but switched off; as in Hermes, the server's
        # resources and prompts tools are not among the tools the filter names
        helpers = [f"mcp__ev__{t}" for t in utilities.RESOURCE_TOOLS + utilities.PROMPT_TOOLS]
        assert sorted(offered) == sorted([ECHO, *helpers])
        other = "mcp__ev__get_tiny_image"
        assert "not in tools.include" in runtime.switched_off()[other]
        set_tool(runtime, other, True)
        original = runtime.mcp.original_names[other][1]  # the server's own name for it
        include = load_config(config_path(home)).get("mcp_servers.ev.tools.include")
        assert include == ["echo", original]
        assert other in runtime.effective_tools()
        set_tool(runtime, ECHO, False)
        assert ECHO not in runtime.effective_tools()
    finally:
        runtime.stop_mcp()


@needs_everything
@pytest.mark.e2e  # the real `everything` server (npm): end-to-end
def test_a_resources_or_prompts_tool_switches_alone_under_tools_disabled(home: Path) -> None:
    """Hermes's filter never names them, so switching one writes our own key."""
    load_runtime(home, load_plugins=False)
    config_path(home).write_text(config())
    runtime = started(home)
    read = "mcp__ev__read_resource"
    try:
        assert read in runtime.effective_tools()
        set_tool(runtime, read, False)
        saved = load_config(config_path(home))
        assert saved.get("tools.disabled") == [read] and saved.get("mcp_servers.ev.tools") is None
        assert read not in runtime.effective_tools() and "mcp__ev__list_resources" in (
            runtime.effective_tools()
        )
        set_tool(runtime, read, True)
        assert read in runtime.effective_tools()
    finally:
        runtime.stop_mcp()


def switched(entry: dict, tool: str, enabled: bool) -> dict:
    doc = {"mcp_servers": {"s": entry}}
    switch(doc, "s", tool, enabled)
    return doc["mcp_servers"]["s"]


def test_the_switch_edits_only_what_it_must() -> None:
    assert switched({"command": "x"}, "a", False) == {"command": "x", "tools": {"exclude": ["a"]}}
    assert switched({"command": "x", "tools": {"exclude": ["a"]}}, "a", True) == {"command": "x"}
    # include wins: switching on adds to it, off takes out of it (and excludes, as Hermes)
    on = switched({"tools": {"include": "b"}}, "a", True)
    assert on == {"tools": {"include": ["b", "a"]}}
    off = switched({"tools": {"include": ["a"]}}, "a", False)
    assert off == {"tools": {"include": [], "exclude": ["a"]}}  # [] still means: none
    kept = ["a", "b"]  # a list already so is left as the user wrote it
    entry = {"tools": {"include": kept, "exclude": []}}
    assert switched(entry, "a", True)["tools"]["include"] is kept
    assert entry["tools"]["exclude"] == []


@pytest.mark.parametrize(
    "doc", [{}, {"mcp_servers": {"other": {}}}, {"mcp_servers": {"s": "text"}}]
)
def test_a_server_not_configured_is_refused(doc: dict) -> None:
    with pytest.raises(FilterError, match="no MCP server 's'"):
        switch(doc, "s", "a", False)


def test_tools_that_are_not_a_mapping_are_refused() -> None:
    with pytest.raises(FilterError, match="must be a mapping"):
        switch({"mcp_servers": {"s": {"tools": ["a"]}}}, "s", "a", False)
