"""The main screen, driven with Textual's pilot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.mcp import REAL_SERVERS
from tests.support.pilot import labels, move_to, wait_until
from tests.support.tools import noop, schema
from workbench.core.agent.context import short
from workbench.core.config import load_config
from workbench.core.events import ToolSource
from workbench.core.tools.registry import ToolRegistrationError
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.widgets.tool_detail import ToolDetail
from workbench.tui.widgets.tools_tree import ToolsTree


async def test_tree_shows_tools_by_source_and_toolset(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.screen.query_one(ToolsTree)
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        text = labels(tree)
        assert text[0] == "Built-in (10)"
        assert "☑ file (4)" in text and "✔ read_file" in text and "✖ web_search" in text
        assert "MCP servers (0)" in text and "Plugins (0)" in text
        move_to(tree, "tool", "web_search")
        await pilot.pause()
        facts = app.screen.query_one(ToolDetail).query_one("#detail-facts").content.plain
        assert "unavailable: missing environment variable: FIRECRAWL_API_KEY" in facts
        assert "offered     no (unavailable)" in facts
        assert "source      builtin (workbench.builtins.web.web_tools)" in facts


async def test_space_toggles_a_toolset_and_persists(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        tree = app.screen.query_one(ToolsTree)
        move_to(tree, "tool", "terminal")
        await pilot.press("space")
        await wait_until(pilot, lambda: "☐ terminal (1)" in labels(tree))
        assert load_config(home / "config.yaml").get("agent.disabled_toolsets") == ["terminal"]
        # the cursor stays on the same tool after the tree is rebuilt
        assert tree.cursor_node.data["name"] == "terminal"
        # the status line is redrawn after the tree: waited for, not read at once
        status = app.screen.query_one("#status-line")
        await wait_until(pilot, lambda: "4 offered" in str(status.content))


async def test_space_switches_the_agents_own_toolset_like_any_other(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)  # a model of an endpoint: not the lean profile
    (home / "config.yaml").write_text(
        "model:\n  default: gpt-4o\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        tree = app.screen.query_one(ToolsTree)

        def todo_offered() -> bool | None:
            costs = app.screen.controller.rows.costs
            return None if costs is None else costs.tools["todo"].offered

        assert "☑ todo (1)" in labels(tree) and "✔ todo" in labels(tree)
        await wait_until(pilot, lambda: todo_offered() is True)
        move_to(tree, "agent", "todo")  # on its tool: space switches the toolset
        await pilot.press("space")
        await wait_until(pilot, lambda: "☐ todo (1)" in labels(tree))
        assert load_config(home / "config.yaml").get("agent.disabled_toolsets") == ["todo"]
        await wait_until(pilot, lambda: todo_offered() is False)  # the model no longer gets it
        move_to(tree, "toolset", "todo")
        await pilot.press("space")
        await wait_until(pilot, lambda: "☑ todo (1)" in labels(tree) and todo_offered())
        assert load_config(home / "config.yaml").get("agent.disabled_toolsets") == []
        move_to(tree, "agent", "todo")
        await pilot.press("x")  # no switch of its own: the workbench says which one it has
        said = "todo is one of the agent's own tools: it switches with its toolset"
        await wait_until(pilot, lambda: any(said in n.message for n in app._notifications))


async def test_a_composite_in_platform_toolsets_shows_the_toolsets_it_holds_on(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)  # the example config of Hermes, memory switched off
    (home / "config.yaml").write_text(
        "platform_toolsets:\n  cli: [hermes-cli]\nagent:\n  disabled_toolsets: [memory]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        text = labels(app.screen.query_one(ToolsTree))
        for on in ("☑ file (4)", "☑ terminal (1)", "☑ web (2)", "☑ todo (1)", "☑ clarify (1)"):
            assert on in text
        assert "☐ memory: builtin (1)" in text


async def test_a_toolset_switched_under_a_filter_shows_with_the_filter_kept(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        await pilot.press("slash", *"term")
        await wait_until(pilot, lambda: "☑ terminal (1)" in labels(tree))
        assert "☑ file (4)" not in labels(tree)
        await pilot.press("escape")
        move_to(tree, "toolset", "terminal")
        await pilot.press("space")
        await wait_until(pilot, lambda: "☐ terminal (1)" in labels(tree))
        assert "☑ file (4)" not in labels(tree)  # still filtered
        status = screen.query_one("#status-line")
        # once measured again: the status line and the border title say it together
        await wait_until(pilot, lambda: "10 tools · 1 match · 4 offered" in str(status.content))
        assert str(tree.border_title).startswith("4 offered · ")


async def test_registry_changes_show_live(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        tree = app.screen.query_one(ToolsTree)
        move_to(tree, "tool", "patch")
        registry = app.controller.runtime.registry
        with registry.scope(ToolSource.PLUGIN, "notes"):
            registry.register("note_add", "notes", schema("add a note"), noop)
            registry.register("note_list", "notes", schema("list notes"), noop)
        await wait_until(pilot, lambda: "Plugins (2)" in labels(tree))
        assert "✔ note_add" in labels(tree)
        assert tree.cursor_node.data["name"] == "patch"
        registry.deregister_owner(ToolSource.PLUGIN, "notes")
        await wait_until(pilot, lambda: "Plugins (0)" in labels(tree))


async def test_a_refused_registration_is_shown(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        registry = app.controller.runtime.registry
        with registry.scope(ToolSource.PLUGIN, "evil"), pytest.raises(ToolRegistrationError):
            registry.register("read_file", "evil", schema(), noop)
        await wait_until(pilot, lambda: any("read_file" in n.message for n in app._notifications))
        note = next(n for n in app._notifications if "read_file" in n.message)
        assert "refused registration from plugin 'evil'" in note.message
        assert registry.get_entry("read_file").source is ToolSource.BUILTIN


async def test_plugin_tools_show_and_hot_reload_updates_the_tree(home: Path) -> None:
    plugin = home / "plugins" / "notes"
    plugin.mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes]\n")
    (plugin / "__init__.py").write_text(
        "def register(ctx):\n    ctx.register_tool('note_add', 'notes', {'description': 'add'}, lambda a, **k: 'ok')\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        tree = app.screen.query_one(ToolsTree)
        await wait_until(pilot, lambda: "Plugins (1)" in labels(tree))
        await wait_until(
            pilot,
            lambda: app.controller.reloader is not None and app.controller.reloader.ready.is_set(),
        )
        (plugin / "__init__.py").write_text(
            "def register(ctx):\n"
            "    ctx.register_tool('note_add', 'notes', {'description': 'add'}, lambda a, **k: 'ok')\n"
            "    ctx.register_tool('note_list', 'notes', {'description': 'list'}, lambda a, **k: 'ok')\n"
        )
        await wait_until(pilot, lambda: "Plugins (2)" in labels(tree))
        assert any("reloaded: added note_list" in n.message for n in app._notifications)
        assert "✔ note_list" in labels(tree)


async def sized(pilot, app) -> tuple[MainScreen, ToolsTree]:
    """The main screen once the sizes in tokens are measured (on a worker, after the tree)."""
    await wait_until(
        pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
    )
    screen = app.screen
    await wait_until(pilot, lambda: screen.controller.rows.costs is not None)
    return screen, screen.query_one(ToolsTree)


async def test_sizes_in_tokens_and_the_offered_total_are_shown(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        costs = screen.controller.rows.costs
        shown = labels(tree, sizes=True)
        assert f"☑ file (4) · {short(costs.toolset('file'))}" in shown
        assert f"✔ read_file · {short(costs.tools['read_file'].tokens)}" in shown
        assert f"Built-in (10) · {short(costs.source('builtin'))}" in shown
        assert tree.border_title == f"5 offered · {short(costs.total)} tokens"


async def test_a_toolsets_preview_is_shown_first_and_is_the_change_it_makes(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        before = screen.controller.rows.costs
        move_to(tree, "toolset", "file")
        await wait_until(pilot, lambda: "space: off" in str(tree.border_subtitle))
        preview = str(tree.border_subtitle)
        assert preview.startswith("space: off, -")
        await pilot.press("space")
        await wait_until(pilot, lambda: screen.controller.rows.costs is not before)
        await wait_until(pilot, lambda: screen.controller.rows.costs.total < before.total)
        after = screen.controller.rows.costs
        assert preview == f"space: off, -{short(before.total - after.total)} tokens"
        await wait_until(pilot, lambda: "space: on, +" in str(tree.border_subtitle))


async def test_x_switches_one_tool_off_and_on_and_it_is_saved(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        before = screen.controller.rows.costs
        size = before.tools["read_file"].tokens
        move_to(tree, "tool", "read_file")
        await wait_until(pilot, lambda: "x: off" in str(tree.border_subtitle))
        assert str(tree.border_subtitle).startswith(f"x: off, -{short(size)} tokens · d: defer, ")
        await pilot.press("x")
        await wait_until(pilot, lambda: "✔ read_file off" in labels(tree))
        assert load_config(home / "config.yaml").get("tools.disabled") == ["read_file"]
        await wait_until(pilot, lambda: screen.controller.rows.costs.total == before.total - size)
        assert tree.border_title == f"4 offered · {short(before.total - size)} tokens"
        assert tree.cursor_node.data["name"] == "read_file"  # the cursor stays on it
        await pilot.press("x")
        await wait_until(pilot, lambda: "✔ read_file" in labels(tree))
        assert load_config(home / "config.yaml").get("tools.disabled") == []
        await wait_until(pilot, lambda: screen.controller.rows.costs.total == before.total)


@pytest.mark.skipif(not REAL_SERVERS["everything"].exists(), reason="run `make mcp-servers` first")
@pytest.mark.e2e  # the real `everything` server (npm): end-to-end
async def test_x_on_an_mcp_tool_writes_its_servers_exclude_list(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  ev:\n    command: {REAL_SERVERS['everything']}\n    timeout: 60  # mine\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        await wait_until(pilot, lambda: "✔ mcp__ev__echo" in labels(tree))
        # Hermes's resources and prompts tools, under their server with its own tools
        text = labels(tree)
        server = next(i for i, t in enumerate(text) if t.startswith("☑ mcp-ev"))
        assert {"✔ mcp__ev__read_resource", "✔ mcp__ev__get_prompt"} <= set(text[server:])
        # measured again once the server's tools came
        rows = screen.controller
        await wait_until(pilot, lambda: "mcp__ev__echo" in rows.rows.costs.tools)
        before = rows.rows.costs
        move_to(tree, "tool", "mcp__ev__echo")
        await wait_until(pilot, lambda: "x: off" in str(tree.border_subtitle))
        await pilot.press("x")
        await wait_until(pilot, lambda: "✔ mcp__ev__echo off" in labels(tree))
        assert load_config(home / "config.yaml").get("mcp_servers.ev.tools") == {
            "exclude": ["echo"]
        }
        assert "timeout: 60  # mine" in (home / "config.yaml").read_text()
        size = before.tools["mcp__ev__echo"].tokens
        await wait_until(pilot, lambda: screen.controller.rows.costs.total == before.total - size)
        await pilot.press("x")
        await wait_until(pilot, lambda: "✔ mcp__ev__echo" in labels(tree))
        assert load_config(home / "config.yaml").get("mcp_servers.ev.tools") is None


async def test_hovering_a_toolset_previews_its_switch(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        move_to(tree, "tool", "terminal")
        await wait_until(pilot, lambda: str(tree.border_subtitle).startswith("x: off, -"))
        line = next(i for i, text in enumerate(labels(tree)) if text.startswith("☑ file"))
        await pilot.hover(ToolsTree, offset=(8, line + 1 - int(tree.scroll_y)))  # + the border
        await wait_until(pilot, lambda: str(tree.border_subtitle).startswith("file: off, -"))
        preview = int(str(tree.border_subtitle).split("-")[1].split()[0])
        assert preview >= screen.controller.rows.costs.toolset("file")  # as a cursor's would be
        await pilot.hover("#status-line")  # the mouse leaves the tree: the cursor's again
        await wait_until(pilot, lambda: str(tree.border_subtitle).startswith("x: off, -"))


async def test_keys_typed_at_once_follow_the_focus_they_move(home: Path) -> None:
    """`/`, a word, Enter and Space read in one go (typed while the app was busy): the word
    reaches the filter, Enter the first match, Space switches that match's toolset."""
    from textual import events

    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
        )
        tree = app.screen.query_one(ToolsTree)
        await wait_until(pilot, lambda: app.focused is tree)
        burst = [("slash", "/"), *((c, c) for c in "terminal"), ("enter", "\r"), ("space", " ")]
        for key, character in burst:  # all read before the first is handled, as a terminal's are
            event = events.Key(key, character)
            event.set_sender(app)
            app._driver.send_message(event)
        await wait_until(pilot, lambda: "☐ terminal (1)" in labels(tree))
        assert app.screen.query_one("#filter").value == "terminal"
        assert load_config(home / "config.yaml").get("agent.disabled_toolsets") == ["terminal"]
