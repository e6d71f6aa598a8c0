"""The tools tree rebuilds only when what it shows changes, and then shows the change."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from tests.support.pilot import labels
from workbench.core.tools.memory import ProviderTool
from workbench.tui.widgets.tools_tree import ToolsTree


class TreeHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolsTree()


def row(name: str, toolset: str, **facts: Any) -> dict[str, Any]:
    """A tool's row as the controller reads it from the registry (core.report.tool_rows)."""
    return {
        "name": name,
        "toolset": toolset,
        "source": "plugin",
        "owner": "kit",
        "available": True,
        "switched_off": None,
        **facts,
    }


ROWS = [row("note_add", "notes"), row("note_list", "notes"), row("todo_add", "todo")]
TOOLSETS = [{"name": "notes", "enabled": True}, {"name": "todo", "enabled": True}]


def nodes(tree: ToolsTree) -> list[Any]:
    return [tree.get_node_at_line(line) for line in range(tree.last_line + 1)]


async def test_a_keystroke_that_keeps_the_matches_keeps_the_nodes() -> None:
    app = TreeHost()
    async with app.run_test() as pilot:
        tree = app.query_one(ToolsTree)
        assert tree.show_rows(ROWS, TOOLSETS, "no") == 2
        before = nodes(tree)
        assert tree.show_rows(ROWS, TOOLSETS, "not") == 2  # the same two tools
        assert all(a is b for a, b in zip(nodes(tree), before, strict=True))
        assert tree.show_rows(ROWS, TOOLSETS, "note_a") == 1  # one fewer: rebuilt
        await pilot.pause()
        assert "✔ note_add" in labels(tree) and "✔ note_list" not in labels(tree)
        assert "☑ notes (1)" in labels(tree)


async def test_filtering_all_in_still_says_no_match_where_a_source_is_empty() -> None:
    app = TreeHost()
    async with app.run_test():
        tree = app.query_one(ToolsTree)
        tree.show_rows(ROWS, TOOLSETS, "")
        assert "none configured (mcp_servers in config.yaml)" in labels(tree)
        assert tree.show_rows(ROWS, TOOLSETS, "o") == 3  # every tool still matches
        assert "none configured (mcp_servers in config.yaml)" not in labels(tree)
        assert labels(tree).count("no match") == 2  # built-in and MCP


async def test_new_rows_under_the_same_query_are_shown_with_their_new_labels() -> None:
    app = TreeHost()
    async with app.run_test():
        tree = app.query_one(ToolsTree)
        sizes = {("tool", "note_add"): "120", ("toolset", "notes"): "240"}
        tree.show_rows(ROWS, TOOLSETS, "note", sizes=sizes)
        assert "✔ note_add · 120" in labels(tree, sizes=True)
        # a toolset switched off, a tool switched off, a size measured again: new objects
        off = [row("note_add", "notes", switched_off="tools.disabled"), *ROWS[1:]]
        toolsets = [{"name": "notes", "enabled": False}, TOOLSETS[1]]
        tree.show_rows(off, toolsets, "note", sizes=sizes)
        shown = labels(tree, sizes=True)
        assert "☐ notes (2) · 240" in shown and "✔ note_add off · 120" in shown
        tree.show_rows(off, toolsets, "note", sizes={**sizes, ("tool", "note_add"): "1.2k"})
        assert "✔ note_add off · 1.2k" in labels(tree, sizes=True)


async def test_a_toolset_filled_when_expanded_gets_the_labels_of_now() -> None:
    many = [row(f"bulk_{i:03d}", "bulk") for i in range(100)]  # past the leaves built up front
    toolsets = [{"name": "bulk", "enabled": True}]
    app = TreeHost()
    async with app.run_test() as pilot:
        tree = app.query_one(ToolsTree)
        tree.show_rows(many, toolsets, "bulk")
        assert "✔ bulk_000" not in labels(tree)
        rows = [row(f"bulk_{i:03d}", "bulk", available=i != 0) for i in range(100)]
        tree.show_rows(rows, toolsets, "bulk", sizes={("tool", "bulk_000"): "7"})
        toolset = next(n for n in nodes(tree) if n.data["kind"] == "toolset")
        toolset.expand()
        await pilot.pause()
        assert "✖ bulk_000 · 7" in labels(tree, sizes=True)


async def test_the_memory_providers_tools_follow_the_query_and_the_provider() -> None:
    memory = ("builtin", [ProviderTool("memory", "save a fact", True)])
    app = TreeHost()
    async with app.run_test():
        tree = app.query_one(ToolsTree)
        tree.show_rows(ROWS, TOOLSETS, "", memory)
        assert "Agent (1)" in labels(tree) and "☑ memory: builtin (1)" in labels(tree)
        assert "✔ memory" in labels(tree)
        tree.show_rows(ROWS, TOOLSETS, "note", memory)  # the same rows, the memory tool goes
        assert "☑ memory: builtin (0)" in labels(tree) and "✔ memory" not in labels(tree)
        other = ("honcho", [ProviderTool("honcho_note", "a note", False, "no key")])
        tree.show_rows(ROWS, TOOLSETS, "note", other)
        assert "☑ memory: honcho (1)" in labels(tree)
        assert "✖ honcho_note  no key" in labels(tree)
        assert tree.show_rows(ROWS, TOOLSETS, "note_", other) == 2  # the same two rows match
        assert "☑ memory: honcho (0)" in labels(tree)  # and the memory tool no longer


class ToggleHost(TreeHost):
    def __init__(self) -> None:
        super().__init__()
        self.toggled: list[tuple[str, bool]] = []

    def on_tools_tree_toolset_toggled(self, message: ToolsTree.ToolsetToggled) -> None:
        self.toggled.append((message.toolset, message.enabled))


AGENT_SETS = [
    {"name": "todo", "source": "agent", "enabled": True, "tools": ["todo"]},
    {"name": "delegation", "source": "agent", "enabled": False, "tools": ["delegate_task"]},
    {"name": "memory", "source": "agent", "enabled": False, "tools": ["memory"]},
]


async def test_the_agents_own_toolsets_have_a_checkbox_like_any_other() -> None:
    memory = ("builtin", [ProviderTool("memory", "save a fact", True)])
    app = ToggleHost()
    async with app.run_test() as pilot:
        tree = app.query_one(ToolsTree)
        tree.show_rows(ROWS, [*TOOLSETS, *AGENT_SETS], "", memory)
        shown = labels(tree)
        assert "Agent (3)" in shown and "☑ todo (1)" in shown and "☐ delegation (1)" in shown
        assert "☐ memory: builtin (1)" in shown and "✔ delegate_task" in shown
        line = shown.index("✔ todo")  # the tool: space switches its toolset
        tree.move_cursor(tree.get_node_at_line(line))
        await pilot.press("space")
        tree.move_cursor(tree.get_node_at_line(shown.index("☐ memory: builtin (1)")))
        await pilot.press("space")
        await pilot.pause()
        assert app.toggled == [("todo", False), ("memory", True)]
