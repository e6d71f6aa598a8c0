"""Switching a toolset or a single tool: what it would change, shown first, is what it does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from workbench.core.commands import CommandFailed, set_tool, set_toolset
from workbench.core.config import config_path
from workbench.core.costs import offered_costs, preview_tool, preview_toolset
from workbench.core.runtime import load_runtime

CONFIG = """\
# my own notes, kept
model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
tools:
  timeout: 120   # ours too
"""


@pytest.fixture
def runtime(home: Path):
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text(CONFIG)
    runtime.reload_config()
    return runtime


@pytest.mark.parametrize("toolset", ["file", "terminal"])
def test_a_toolsets_preview_is_the_change_its_saving_makes(runtime, toolset: str) -> None:
    before = offered_costs(runtime)
    off = preview_toolset(runtime, before, toolset, False)
    # its tools, and the words naming it in delegate_task's description
    assert off <= -before.toolset(toolset) < 0
    set_toolset(runtime, toolset, False)
    after = offered_costs(runtime)
    assert after.total - before.total == off
    on = preview_toolset(runtime, after, toolset, True)
    set_toolset(runtime, toolset, True)
    assert offered_costs(runtime).total - after.total == on == -off


def test_a_single_tool_switched_off_is_saved_not_offered_and_not_run(runtime, home) -> None:
    before = offered_costs(runtime)
    preview = preview_tool(runtime, before, "read_file", False)
    assert preview == -before.tools["read_file"].tokens
    done = set_tool(runtime, "read_file", False)
    assert "tools.disabled" in done.message
    text = config_path(home).read_text()
    assert "# my own notes, kept" in text and "timeout: 120   # ours too" in text
    assert "disabled:\n  - read_file" in text

    restarted = load_runtime(home, load_plugins=False)  # a new process reads it back
    assert "read_file" not in restarted.effective_tools()
    assert "read_file" in restarted.registry.snapshot()  # still listed, to switch on again
    assert "tools.disabled" in restarted.switched_off()["read_file"]
    after = offered_costs(restarted)
    assert after.total - before.total == preview and not after.tools["read_file"].offered

    executor = restarted.executor(broker=None)  # by hand or from a plugin: refused too
    try:
        (outcome,) = asyncio.run(
            executor.run([{"id": "1", "name": "read_file", "arguments": {"path": "x"}}])
        )
    finally:
        executor.shutdown()
    assert outcome.status == "invalid"
    assert "switched off" in json.loads(outcome.content)["error"]

    set_tool(restarted, "read_file", True)
    assert "read_file" in load_runtime(home, load_plugins=False).effective_tools()
    assert "read_file" not in config_path(home).read_text()


def test_switching_an_unknown_tool_or_server_is_a_usage_error(runtime, home) -> None:
    before = config_path(home).read_text()
    for name in ("no_such_tool", "nosuch:tool"):
        with pytest.raises(CommandFailed) as failed:
            set_tool(runtime, name, False)
        assert failed.value.usage
    assert config_path(home).read_text() == before


def test_a_broken_config_is_never_rewritten(runtime, home) -> None:
    config_path(home).write_text("tools: [unclosed\n")
    runtime.reload_config()
    with pytest.raises(CommandFailed):
        set_tool(runtime, "read_file", False)
    assert config_path(home).read_text() == "tools: [unclosed\n"


def _run_by_hand(runtime, name: str, arguments: dict) -> tuple[str, str]:
    """A call as `hermes-tui call`, the run form and a plugin make it: status, what it said."""
    executor = runtime.executor(broker=None)
    try:
        (outcome,) = asyncio.run(executor.run([{"id": "1", "name": name, "arguments": arguments}]))
    finally:
        executor.shutdown()
    content = outcome.content
    said = json.loads(content).get("error", content) if isinstance(content, str) else content
    return outcome.status, str(said)


def test_a_tool_switched_off_with_its_toolset_is_refused_by_hand_and_says_how_to_switch_it_on(
    runtime, home, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    assert _run_by_hand(runtime, "read_file", {"path": str(tmp_path / "a.txt")})[0] == "ok"
    set_toolset(runtime, "file", False)
    assert "read_file" not in runtime.effective_tools()
    status, said = _run_by_hand(runtime, "read_file", {"path": str(tmp_path / "a.txt")})
    assert status == "invalid"
    assert said == (
        "Tool 'read_file' is switched off with its toolset file (agent.disabled_toolsets in "
        "config.yaml); to switch it on: `hermes-tui toolsets enable file` (in the workbench: "
        "the toolset's checkbox)"
    )
    set_tool(runtime, "read_file", False)  # off by itself too: both switches are named
    said = _run_by_hand(runtime, "read_file", {"path": "a.txt"})[1]
    assert "(tools.disabled in config.yaml) and switched off with its toolset file" in said
    assert "`hermes-tui tools enable read_file`" in said and "toolsets enable file" in said
    set_toolset(runtime, "file", True)
    said = _run_by_hand(runtime, "read_file", {"path": "a.txt"})[1]
    assert said == (
        "Tool 'read_file' is switched off (tools.disabled in config.yaml); to switch it on: "
        "`hermes-tui tools enable read_file` (in the workbench: x on the tool)"
    )


@pytest.mark.parametrize(
    ("choices", "named"),
    [
        # a disabled toolset that includes the tool wins over the tool's own, switched on
        ("agent:\n  disabled_toolsets: [debugging]\n", "toolset debugging (which includes it, "
         "agent.disabled_toolsets in config.yaml); to switch it on: `hermes-tui toolsets "
         "enable debugging`"),
        # a saved list of enabled toolsets that leaves the tool's own out
        ("platform_toolsets:\n  cli: [terminal]\n", "its toolset file (not in "
         "platform_toolsets.cli of config.yaml); to switch it on: `hermes-tui toolsets enable "
         "file`"),
    ],
    ids=["included", "left-out"],
)  # fmt: skip
def test_the_refusal_names_the_toolset_switch_that_leaves_the_tool_off(
    runtime, home, choices: str, named: str
) -> None:
    config_path(home).write_text(CONFIG + choices)
    runtime.reload_config()
    assert "read_file" not in runtime.effective_tools()
    status, said = _run_by_hand(runtime, "read_file", {"path": "a.txt"})
    assert status == "invalid" and said.startswith(f"Tool 'read_file' is switched off with {named}")
