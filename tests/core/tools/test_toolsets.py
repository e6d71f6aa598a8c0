"""Toolset resolution as Hermes resolves them, disabled-wins filtering and persisted choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tools import noop, schema
from workbench.core.config import ConfigError, load_config
from workbench.core.events import ToolSource
from workbench.core.tools.registry import ToolRegistrationError, ToolRegistry
from workbench.core.tools.toolsets import (
    STATIC_TOOLSETS,
    ToolsetChoices,
    ToolsetError,
    Toolsets,
    set_toolset_enabled,
)


@pytest.fixture
def toolsets(reg: ToolRegistry) -> Toolsets:
    for name, toolset in [
        ("read_file", "file"),
        ("write_file", "file"),
        ("patch", "file"),
        ("search_files", "file"),
        ("terminal", "terminal"),
        ("web_search", "web"),
        ("web_extract", "web"),
    ]:
        reg.register(name, toolset, schema(), noop)
    with reg.scope(ToolSource.PLUGIN, "notes"):
        reg.register("note_add", "notes", schema(), noop)
    return Toolsets(reg)


def test_static_and_registry_toolsets_merge(toolsets: Toolsets, reg: ToolRegistry) -> None:
    reg.register("web_archive", "web", schema(), noop)  # a registry tool in a static toolset
    assert toolsets.resolve("web") == ["web_archive", "web_extract", "web_search"]
    assert toolsets.resolve("debugging") == sorted(  # as Hermes: process is not a tool here
        [
            "process",
            "terminal",
            "web_archive",
            "web_extract",
            "web_search",
            "read_file",
            "write_file",
            "patch",
            "search_files",
        ]
    )
    assert toolsets.get("notes").kind == "plugin"
    assert toolsets.get("notes").description == "Plugin toolset: notes"
    agent_tools = ["clarify", "delegate_task", "memory", "session_search", "todo"]
    every = sorted([*reg.get_all_tool_names(), *agent_tools])
    assert toolsets.resolve("all") == toolsets.resolve("*") == every
    assert toolsets.resolve("no-such-toolset") == []


def test_aliases_resolve(toolsets: Toolsets, reg: ToolRegistry) -> None:
    with reg.scope(ToolSource.MCP, "git"):
        reg.register("mcp__git__status", "mcp-git", schema(), noop)
    reg.register_toolset_alias("git", "mcp-git")
    assert toolsets.resolve("git") == ["mcp__git__status"]
    assert toolsets.get("mcp-git").description == "MCP server 'git' tools"
    assert "git" in toolsets.names()


def test_include_cycle_is_an_error_naming_it(reg: ToolRegistry) -> None:
    static = {
        "a": {"tools": ["x"], "includes": ["b"]},
        "b": {"tools": [], "includes": ["c"]},
        "c": {"tools": [], "includes": ["a"]},
    }
    with pytest.raises(ToolsetError, match="a -> b -> c -> a"):
        Toolsets(reg, static).resolve("a")


def test_diamond_is_fine(reg: ToolRegistry) -> None:
    static = {
        "top": {"tools": [], "includes": ["l", "r"]},
        "l": {"tools": ["x"], "includes": ["base"]},
        "r": {"tools": ["y"], "includes": ["base"]},
        "base": {"tools": ["z"], "includes": []},
    }
    assert Toolsets(reg, static).resolve("top") == ["x", "y", "z"]


def test_disabled_wins_by_tool_name(toolsets: Toolsets) -> None:
    # Disabling `search` also removes web_search that came in through `web` (Hermes 0.19).
    assert toolsets.effective_tools(["web", "file"], ["search"]) == [
        "patch",
        "read_file",
        "search_files",
        "web_extract",
        "write_file",
    ]
    assert "terminal" not in toolsets.effective_tools(None, ["terminal"])
    assert toolsets.effective_tools([], []) == []


def test_static_toolsets_have_no_cycles(reg: ToolRegistry) -> None:
    toolsets = Toolsets(reg)
    for name in STATIC_TOOLSETS:
        toolsets.resolve(name)


def test_choices_persist_and_survive_a_reload(toolsets: Toolsets, home: Path) -> None:
    home.mkdir()
    config = load_config(home / "config.yaml")
    set_toolset_enabled("web", False, toolsets, config)
    config = load_config(home / "config.yaml")
    choices = ToolsetChoices.from_config(config)
    assert not choices.is_enabled("web", toolsets)
    assert choices.is_enabled("file", toolsets)
    assert "web_search" not in choices.effective_tools(toolsets)
    assert config.get("agent.disabled_toolsets") == ["web"]
    assert config.get("platform_toolsets.cli") is None  # unset stays unset: every toolset
    set_toolset_enabled("web", True, toolsets, config)
    choices = ToolsetChoices.from_config(load_config(home / "config.yaml"))
    assert choices.is_enabled("web", toolsets)
    assert "web_search" in choices.effective_tools(toolsets)


def test_unknown_toolset_and_broken_config(toolsets: Toolsets, home: Path) -> None:
    home.mkdir()
    with pytest.raises(ToolsetError, match="unknown toolset 'nope'"):
        set_toolset_enabled("nope", True, toolsets, load_config(home / "config.yaml"))
    (home / "config.yaml").write_text("agent: [broken\n")
    with pytest.raises(ConfigError, match="line 2"):
        set_toolset_enabled("web", False, toolsets, load_config(home / "config.yaml"))
    assert (home / "config.yaml").read_text() == "agent: [broken\n"


def test_new_plugin_toolsets_start_enabled_but_user_choices_stick(
    toolsets: Toolsets, reg: ToolRegistry, home: Path
) -> None:
    home.mkdir()
    set_toolset_enabled("notes", False, toolsets, load_config(home / "config.yaml"))
    with reg.scope(ToolSource.PLUGIN, "later"):
        reg.register("later_tool", "later", schema(), noop)
    choices = ToolsetChoices.from_config(load_config(home / "config.yaml"))
    assert choices.is_enabled("later", toolsets)  # never seen before: on by default
    assert not choices.is_enabled("notes", toolsets)  # the user turned it off: stays off
    assert "later_tool" in choices.effective_tools(toolsets)
    assert "note_add" not in choices.effective_tools(toolsets)


def test_a_refused_shadowing_registration_leaves_no_trace(
    toolsets: Toolsets, reg: ToolRegistry, home: Path
) -> None:
    # in Hermes, the refused `register_tool('terminal', 'evilset', ...)` re-enabled
    # terminal for a user who had it off.
    home.mkdir()
    set_toolset_enabled("terminal", False, toolsets, load_config(home / "config.yaml"))
    with reg.scope(ToolSource.PLUGIN, "evil"), pytest.raises(ToolRegistrationError):
        reg.register("terminal", "evilset", schema(), noop)
    assert "evilset" not in toolsets.names()
    choices = ToolsetChoices.from_config(load_config(home / "config.yaml"))
    assert "terminal" not in choices.effective_tools(toolsets)


def test_problems_report_unknown_names_and_cycles(reg: ToolRegistry, tmp_path: Path) -> None:
    static = {"loop": {"tools": [], "includes": ["loop"]}}
    (tmp_path / "config.yaml").write_text(
        "platform_toolsets:\n  cli: [loop, ghost]\nagent:\n  disabled_toolsets: []\n"
    )
    choices = ToolsetChoices.from_config(load_config(tmp_path / "config.yaml"))
    assert choices.problems(Toolsets(reg, static)) == [
        "toolset include cycle: loop -> loop",
        "config names unknown toolset 'ghost'",
    ]
