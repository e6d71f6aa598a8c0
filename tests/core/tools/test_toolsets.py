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


HERMES_WROTE = Path(__file__).parents[1] / "fixtures" / "hermes-tools-disable-todo.yaml"
NOT_HERE = [  # Hermes's toolsets in that file whose tools hermes-tui does not have
    "browser", "code_execution", "computer_use", "cronjob", "image_gen", "kanban",
    "tts", "vision",
]  # fmt: skip


def test_every_hermes_stock_toolset_is_known_and_those_without_tools_here_said_once(
    toolsets: Toolsets,
) -> None:
    choices = ToolsetChoices.from_config(load_config(HERMES_WROTE))
    assert choices.problems(toolsets) == []  # none of Hermes's own names is "unknown"
    assert choices.not_here(toolsets) == NOT_HERE
    for name in ("hermes-cli", "hermes-gateway", "coding", "safe", "debugging", "x_search"):
        assert toolsets.is_known(name)
    assert toolsets.here("safe") and toolsets.here("hermes-cli")  # composites of ours
    assert not toolsets.here("browser")  # its web_search is not what makes it browser
    # what `hermes tools disable todo` wrote switches todo off here too, the rest on
    on = choices.effective_tools(toolsets)
    assert "todo" not in on and {"clarify", "memory", "delegate_task", "read_file"} <= set(on)
    assert not choices.is_enabled("todo", toolsets) and choices.is_enabled("memory", toolsets)


def test_the_agents_own_toolsets_switch_and_persist(toolsets: Toolsets, home: Path) -> None:
    home.mkdir()
    assert set(toolsets.switchable()) >= {"todo", "memory", "clarify", "delegation", "file"}
    assert toolsets.switchable()["todo"] == "agent"
    set_toolset_enabled("todo", False, toolsets, load_config(home / "config.yaml"))
    config = load_config(home / "config.yaml")
    assert config.get("agent.disabled_toolsets") == ["todo"]
    assert config.get("platform_toolsets.cli") is None  # unset stays unset
    choices = ToolsetChoices.from_config(config)
    assert "todo" not in choices.effective_tools(toolsets)
    assert {"clarify", "memory", "session_search", "delegate_task"} <= set(
        choices.effective_tools(toolsets)
    )
    (switch,) = choices.off_by_toolset(toolsets, choices.effective_tools(toolsets)).values()
    assert (switch.toolset, switch.key, switch.own) == ("todo", "agent.disabled_toolsets", True)


def test_a_composite_switches_on_the_toolsets_it_holds(toolsets: Toolsets, home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [hermes-cli]\n")
    choices = ToolsetChoices.from_config(load_config(home / "config.yaml"))
    for name in ("file", "terminal", "web", "todo", "memory", "clarify", "delegation"):
        assert choices.is_enabled(name, toolsets), name
        assert choices.via(name, toolsets) == ["hermes-cli"]
    # a plugin toolset Hermes's bundle does not hold: new, so on by itself, not through it
    assert choices.is_enabled("notes", toolsets) and choices.via("notes", toolsets) == []
    # switching one off and on again: the list stays the composite, nothing is repeated
    set_toolset_enabled("file", False, toolsets, load_config(home / "config.yaml"))
    config = load_config(home / "config.yaml")
    assert not ToolsetChoices.from_config(config).is_enabled("file", toolsets)
    set_toolset_enabled("file", True, toolsets, config)
    config = load_config(home / "config.yaml")
    # (notes, on as new, is written out now it is known, as before)
    assert config.get("platform_toolsets.cli") == ["hermes-cli", "notes"]
    assert config.get("agent.disabled_toolsets") == []


def test_a_disabled_platform_bundle_takes_away_only_its_tools_beyond_the_core(
    toolsets: Toolsets,
) -> None:
    # as Hermes: disabling hermes-cli (all core tools) or hermes-discord never empties the list
    for bundle in ("hermes-cli", "hermes-discord", "coding"):
        assert toolsets.effective_tools(["file", "todo"], [bundle]) == [
            "patch", "read_file", "search_files", "todo", "write_file"
        ]  # fmt: skip
