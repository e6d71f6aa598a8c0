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
