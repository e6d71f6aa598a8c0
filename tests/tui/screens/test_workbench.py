"""The workbench screen with a pilot: sources, filter, run form, approvals, help, sources panel."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.mcp import FIXTURE, shadow_sdk
from tests.support.pilot import labels, loaded, open_form, unsized, wait_until
from tests.support.plugins import FIXTURES as PLUGIN_FIXTURES
from tests.support.tools import schema
from workbench.core.agent.context import short
from workbench.core.model.tokens import PER_MESSAGE
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.pick import PickScreen
from workbench.tui.widgets.call_history import CallHistoryList
from workbench.tui.widgets.sources import SourcesPanel
from workbench.tui.widgets.tools_tree import ToolsTree

ALL_TYPES = {
    "description": "echoes its typed arguments",
    "parameters": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "loud": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object"},
        },
        "required": ["text"],
    },
}


@pytest.fixture
def typed_tool(module_registry):
    seen: list[dict] = []

    def echo(args, **kw):
        seen.append(args)
        return json.dumps(args)

    def broken(args, **kw):
        raise RuntimeError("the tool broke")

    # Registered as a built-in module would: every runtime loaded in the test has them.
    module_registry.register("typed_echo", "testing", ALL_TYPES, echo)
    module_registry.register("always_fails", "testing", schema("fails"), broken)
    return seen


async def test_the_tree_shows_all_three_sources(home: Path) -> None:
    shutil.copytree(PLUGIN_FIXTURES / "positional", home / "plugins" / "positional")
    (home / "config.yaml").write_text(
        f"plugins:\n  enabled: [positional]\nmcp_servers:\n  fx:\n    command: {sys.executable}\n"
        f"    args: [{FIXTURE[1]}]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        tree = screen.query_one(ToolsTree)
        # its 8 tools and Hermes's 4 for its resources and prompts
        await wait_until(pilot, lambda: "MCP servers (12)" in labels(tree))
        text = labels(tree)
        assert "Built-in (10)" in text and "Plugins (1)" in text
        assert "☑ mcp-fx (12)" in text and "☑ positional (1)" in text and "✔ pos_echo" in text
        assert "MCP 1/1 ready" in screen.sub_title and "1 plugin(s)" in screen.sub_title
        await pilot.press("f3")
        await pilot.pause()
        panel = screen.query_one(SourcesPanel)
        assert (
            panel.query_one("#servers").row_count == 1
            and panel.query_one("#plugins").row_count >= 1
        )


async def test_filtering_narrows_the_tree(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        tree = screen.query_one(ToolsTree)
        await pilot.press("slash", "r", "e", "a", "d")
        await pilot.pause()
        text = labels(tree)
        assert "✔ read_file" in text and "✔ patch" not in text and "✔ terminal" not in text
        assert "Built-in (1)" in text and "no match" in text
        assert "1 match" in str(screen.query_one("#status-line").content)
        await pilot.press("enter")  # back to the tree, on the first match
        assert tree.has_focus and tree.cursor_node.data["name"] == "read_file"


async def test_the_form_sends_every_schema_type(home: Path, typed_tool: list[dict]) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await loaded(pilot, app)
        form = await open_form(pilot, screen, "typed_echo", "options")
        form.query_one("#arg-text").text = "hello"  # a long-text field: a text area
        form.query_one("#arg-count").value = "3"
        form.query_one("#arg-ratio").value = "0.5"
        form.query_one("#arg-loud").value = True
        form.query_one("#arg-mode").value = 1  # a select's choices by position: "slow"
        form.query_one("#arg-tags").text = '["a", "b"]'
        form.query_one("#arg-options").text = '{"k": 1}'
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: typed_tool)
        assert typed_tool[0] == {
            "text": "hello",
            "count": 3,
            "ratio": 0.5,
            "loud": True,
            "mode": "slow",
            "tags": ["a", "b"],
            "options": {"k": 1},
        }
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("ok")
        )
        form.query_one("#arg-tags").text = "[not json"
        await pilot.press("ctrl+r")
        assert "tags: not valid JSON" in str(form.query_one("#form-status").content)
        assert len(typed_tool) == 1
        (kept,) = screen.query_one(CallHistoryList).calls  # the detail lists the call
        assert kept.status == "ok" and kept.arguments["count"] == 3


async def test_a_failing_tool_shows_its_error(home: Path, typed_tool) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        form = await open_form(pilot, screen, "always_fails")
        await pilot.press("ctrl+r")
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("error")
        )
        assert "RuntimeError: the tool broke" in str(form.query_one("#form-result").content.code)


async def test_the_form_refuses_a_tool_whose_toolset_is_switched_off(
    home: Path, typed_tool: list[dict]
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [testing]\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        form = await open_form(pilot, screen, "typed_echo", "text")
        form.query_one("#arg-text").text = "hello"
        await pilot.press("ctrl+r")
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("invalid")
        )
        said = str(form.query_one("#form-result").content.code)
        assert "switched off with its toolset testing" in said
        assert "hermes-tui toolsets enable testing" in said
        assert typed_tool == []  # never run


async def test_a_destructive_command_asks_and_enter_denies(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "victim.log").write_text("x")  # a log: no checkpoint holds it, so rm asks
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        form = await open_form(pilot, screen, "terminal", "command")
        form.query_one("#arg-command").value = "rm victim.log"
        await pilot.press("ctrl+r")
        # the modal is up once its focus is set (its buttons are mounted): what is asserted
        await wait_until(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.focused is not None
        )
        modal = app.screen
        assert modal.focused.id == "deny" and modal.request.command == "rm victim.log"
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("denied")
        )
        assert (tmp_path / "victim.log").exists()
        await pilot.press("ctrl+r")
        await wait_until(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.focused is not None
        )
        await pilot.press("o")
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("ok")
        )
        assert not (tmp_path / "victim.txt").exists()
        # calls from the run form go on the session's timeline too
        bars = [(bar.name, bar.status) for bar in app.timeline_model.bars]
        assert bars == [("terminal", "denied"), ("terminal", "ok")]


async def test_help_lists_every_binding_with_its_id(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query("Static")[1].content
        ids = set(table.columns[2]._cells)
        assert {
            "app.quit",
            "main.filter",
            "tools.toggle_toolset",
            "form.run",
            "history.rerun",
            "case.save",
            "sources.restart",
            "approval.once",
            "viewer.close",
            "sessions.close",
            "conversation.raw",
            "sources.subscribe",
            "elicit.accept",
            "sampling.approve",
            "session.checkpoints",
            "checkpoints.restore",
            "checkpoints.restore_file",
            "restore.keep",
            "restore.overwrite",
            "trust.yes",
        } <= ids
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_empty_sources_look_intentional(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        await pilot.press("f3")
        await pilot.pause()
        panel = screen.query_one(SourcesPanel)
        assert "No MCP servers configured" in str(panel.query_one("#servers-empty").content)
        assert panel.query_one("#servers-empty").display and not panel.query_one("#servers").display
        assert "none configured" in " ".join(labels(screen.query_one(ToolsTree)))


async def test_offered_tools_on_demand(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        main = await loaded(pilot, app)
        await wait_until(pilot, lambda: main.controller.rows.costs is not None)
        costs = main.controller.rows.costs
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen))
        # what the model receives each request, largest first, with each one's size
        title = app.screen.title_text
        assert title.startswith(f"The model is offered 5 tools, {short(costs.total)} tokens each")
        assert "qwen3 tokenizer" in title  # the bundled model's own table: exact
        sizes = [int(item.split()[0]) for item in app.screen.items]
        assert sizes == sorted(sizes, reverse=True) and sum(sizes) + PER_MESSAGE == costs.total
        assert any(" read_file  (file)" in i for i in app.screen.items)
        assert not any("web_search" in i for i in app.screen.items)
        await pilot.press("enter")  # the first (largest) one, selected in the tree
        await wait_until(pilot, lambda: app.screen is main)
        assert main.query_one(ToolsTree).cursor_node.data["name"] == costs.offered[0].name


async def test_the_memory_providers_tools_show_and_follow_a_switch(home: Path) -> None:
    from workbench.tui.widgets.tools_tree import ToolsTree

    shutil.copytree(PLUGIN_FIXTURES / "notes_memory", home / "plugins" / "notes_memory")
    (home / "config.yaml").write_text("memory:\n  provider: notes_memory\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        tree = app.screen.query_one(ToolsTree)

        def memory_node() -> str:
            (agent,) = (n for n in tree.root.children if str(n.label).startswith("Agent"))
            return next(unsized(str(n.label)) for n in agent.children if "memory" in str(n.label))

        assert memory_node() == "☑ memory: notes (2)"
        app.select_memory("builtin")
        await wait_until(pilot, lambda: memory_node() == "☑ memory: builtin (1)")


async def test_sources_show_each_server_and_plugins_tools_size(home: Path) -> None:
    shutil.copytree(PLUGIN_FIXTURES / "positional", home / "plugins" / "positional")
    (home / "config.yaml").write_text(
        f"plugins:\n  enabled: [positional]\nmcp_servers:\n  fx:\n    command: {sys.executable}\n"
        f"    args: [{FIXTURE[1]}]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        rows = screen.controller
        await wait_until(
            pilot,
            lambda: rows.rows.costs is not None and "mcp__fx__add" in rows.rows.costs.tools,
            20,
        )
        costs = rows.rows.costs
        server = short(costs.toolset("mcp-fx"))  # the server's toolset holds all its tools
        plugin = short(costs.tools["pos_echo"].tokens)
        await pilot.press("f3")
        panel = screen.query_one(SourcesPanel)
        servers, plugins = panel.query_one("#servers"), panel.query_one("#plugins")
        await wait_until(pilot, lambda: f"12 · {server} tokens" in servers.get_row("fx"))
        assert f"1 · {plugin} tokens" in plugins.get_row("positional")


async def test_sources_count_and_size_only_the_tools_switched_on(home: Path) -> None:
    shutil.copytree(PLUGIN_FIXTURES / "positional", home / "plugins" / "positional")
    (home / "config.yaml").write_text(
        f"plugins:\n  enabled: [positional]\ntools:\n  disabled: [pos_echo]\nmcp_servers:\n"
        f"  fx:\n    command: {sys.executable}\n    args: [{FIXTURE[1]}]\n"
        "    tools:\n      exclude: [add]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        rows = screen.controller
        await wait_until(
            pilot,
            lambda: rows.rows.costs is not None and "mcp__fx__add" in rows.rows.costs.tools,
            20,
        )
        costs = rows.rows.costs
        on = short(costs.toolset("mcp-fx") - costs.tools["mcp__fx__add"].tokens)
        await pilot.press("f3")
        panel = screen.query_one(SourcesPanel)
        servers, plugins = panel.query_one("#servers"), panel.query_one("#plugins")
        await wait_until(pilot, lambda: f"11 of 12 · {on} tokens" in servers.get_row("fx"))
        assert "0 of 1" in plugins.get_row("positional")  # switched off: no tokens to count
        assert [str(c.label) for c in servers.columns.values()][2] == "tools on"


async def test_the_viewer_refuses_a_fifo_or_a_device_and_says_why(home: Path, tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it to read would wait for a writer, with the screen stopped
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        app.open_viewer(fifo)
        app.open_viewer("/dev/zero")
        await pilot.pause()
        assert app.screen is screen
        said = [n.message for n in app._notifications]
        assert f"{fifo} is a FIFO (a pipe), not a regular file; the viewer shows files" in said
        assert "/dev/zero is a device, not a regular file; the viewer shows files" in said


async def test_a_tool_whose_schema_cannot_be_used_says_why_and_gets_no_form(home: Path) -> None:
    from textual.widgets import Button, Select

    from tests.support.pilot import move_to
    from workbench.tui.widgets.tool_detail import ToolDetail

    shutil.copytree(PLUGIN_FIXTURES / "shapes", home / "plugins" / "shapes")
    (home / "config.yaml").write_text("plugins:\n  enabled: [shapes]\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await loaded(pilot, app)
        tree = screen.query_one(ToolsTree)
        await wait_until(pilot, lambda: "✖ shapes_ref_cycle" in labels(tree))
        assert "✔ shapes_type_list" in labels(tree)
        move_to(tree, "tool", "shapes_ref_cycle")
        facts = screen.query_one(ToolDetail).query_one("#detail-facts")
        said = "unavailable: its schema cannot be used: $ref '#/$defs/A' at properties.a leads"
        await wait_until(pilot, lambda: said in str(facts.render()))
        form = await open_form(pilot, screen, "shapes_ref_cycle")
        await wait_until(pilot, lambda: "cannot be used" in labels_of(form))
        assert form.query_one("#form-run", Button).disabled
        # a union of an enum and null: a select that may be left blank, sending nothing
        form = await open_form(pilot, screen, "shapes_any_of", "mode")
        mode = form.query_one("#arg-mode", Select)
        assert mode.is_blank() and form.arguments() == {}
        mode.value = 1
        assert form.arguments() == {"mode": "slow"}
        # an enum of mixed types: each value as itself, `true` not 1
        form = await open_form(pilot, screen, "shapes_mixed_enum", "level")
        form.query_one("#arg-level", Select).value = 2
        assert form.arguments() == {"level": True}
        form.fill({"level": 1})
        assert form.arguments() == {"level": 1}


def labels_of(widget) -> str:
    return " ".join(str(s.render()) for s in widget.query("Static"))


async def test_the_header_marks_a_conflicting_plugin_and_a_replaced_sdk(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = home / "plugins" / "pinned"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text('name: pinned\nversion: "1"\npip_dependencies: ["mcp<2"]\n')
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  fx:\n    command: {sys.executable}\n    args: [{FIXTURE[1]}]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await loaded(pilot, app)
        await wait_until(pilot, lambda: "MCP 1/1 ready" in screen.sub_title)
        assert "⚠ plugin conflict" in screen.sub_title and "⚠ MCP SDK" not in screen.sub_title
    shutil.rmtree(folder)
    monkeypatch.syspath_prepend(str(shadow_sdk(tmp_path / "shadow")))  # as pip leaves mcp<2
    app = WorkbenchApp()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await loaded(pilot, app)
        await wait_until(pilot, lambda: "⚠ MCP SDK" in screen.sub_title)
        assert "MCP 0/1 ready" in screen.sub_title and "plugin conflict" not in screen.sub_title
        assert screen.controller.sources().servers[0].state == "failed"


async def test_a_plugins_detail_says_which_of_its_hooks_run(home: Path) -> None:
    from textual.widgets import DataTable, Static

    shutil.copytree(PLUGIN_FIXTURES / "lifecycle", home / "plugins" / "lifecycle")
    (home / "config.yaml").write_text("plugins:\n  enabled: [lifecycle]\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        await pilot.press("f3")
        panel = screen.query_one(SourcesPanel)
        plugins = panel.query_one("#plugins", DataTable)
        await wait_until(pilot, lambda: "lifecycle" in plugins.rows, 20)
        plugins.focus()
        plugins.move_cursor(row=plugins.get_row_index("lifecycle"))
        detail = panel.query_one("#source-detail", Static)
        runs = "hooks: on_session_end, on_session_finalize, on_session_reset, on_session_start"
        await wait_until(pilot, lambda: runs in str(detail.content), 20)
        said = str(detail.content)
        assert "hooks accepted, not run by hermes-tui: kanban_task_claimed" in said
