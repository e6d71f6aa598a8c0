"""A Hermes 0.21 config with tools.tool_search, in the workbench: each tool's state in the
tree and in the `o` view, and `d` defers a tool (previewed first), saved in Hermes's key."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_deferral_costs import HERMES_021
from tests.support.pilot import labels, move_to, wait_until
from workbench.core.agent.context import short
from workbench.core.config import load_config
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.pick import PickScreen
from workbench.tui.widgets.tool_detail import ToolDetail
from workbench.tui.widgets.tools_tree import ToolsTree

CONFIG = HERMES_021.replace("      - todo\n", "      - todo\n      - search_files\n")


async def sized(pilot, app) -> tuple[MainScreen, ToolsTree]:
    await wait_until(
        pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
    )
    screen = app.screen
    await wait_until(pilot, lambda: screen.controller.rows.costs is not None, 20)
    return screen, screen.query_one(ToolsTree)


async def test_the_tree_and_the_o_view_show_each_tools_state_and_the_real_cost(home) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(CONFIG)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        costs = screen.controller.rows.costs
        assert {c.name for c in costs.deferred} == {"search_files", "session_search", "todo"}
        shown = labels(tree, sizes=True)
        size = short(costs.tools["search_files"].tokens)
        assert f"✔ search_files · {size} deferred" in shown
        assert f"✔ read_file · {short(costs.tools['read_file'].tokens)}" in shown
        # the total is the request's with the bridge, not every tool in full
        assert tree.border_title == f"13 offered · {short(costs.total)} tokens"
        assert costs.total != costs.undeferred
        move_to(tree, "tool", "search_files")
        facts = screen.query_one(ToolDetail).query_one("#detail-facts")
        said = "offered     yes, deferred behind tool_search, named in its listing"
        await wait_until(pilot, lambda: said in str(facts.render()))
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen))
        pick = app.screen
        assert "3 deferred behind tool_search (3 listed)" in pick.title_text
        assert "(10 sent in full)" in pick.title_text
        assert any(i.endswith("search_files  (file)  deferred, listed") for i in pick.items)
        bridge = [i for i in pick.items if "tool_search, tool_describe, tool_call" in i]
        assert bridge and short(costs.bridge) in bridge[0] and "listing: full" in bridge[0]
        await pilot.press("escape")


async def test_the_o_view_says_why_auto_sends_a_few_small_tools_in_full(home) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(CONFIG.replace("enabled: on  ", "enabled: auto"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        costs = screen.controller.rows.costs
        assert costs.deferred == () and costs.held == ("search_files", "session_search", "todo")
        assert tree.border_title == f"13 offered · {short(costs.undeferred)} tokens"
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen))
        said = (
            "auto: deferring search_files, session_search, todo would add "
            f"{costs.held_extra:,} tokens a request; sent in full"
        )
        assert said in app.screen.title_text and costs.held_extra > 0
        assert not [i for i in app.screen.items if "tool_search, tool_describe" in i]
        await pilot.press("escape")


async def test_d_defers_a_tool_previewed_then_saved_in_hermes_keys(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(CONFIG)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree = await sized(pilot, app)
        before = screen.controller.rows.costs
        move_to(tree, "tool", "read_file")
        await wait_until(pilot, lambda: "d: defer" in str(tree.border_subtitle), 20)
        preview = str(tree.border_subtitle).split("d: defer, ")[1]
        await pilot.press("d")
        await wait_until(pilot, lambda: screen.controller.rows.costs is not before, 20)
        await wait_until(
            pilot,
            lambda: screen.controller.rows.costs.tools["read_file"].state.value != "eager",
            20,
        )
        after = screen.controller.rows.costs
        change = after.total - before.total
        assert preview == ("+" if change > 0 else "-") + short(abs(change))
        saved = load_config(home / "config.yaml").get("tools.tool_search.defer")
        assert saved == ["read_file", "search_files", "session_search", "todo"]
        assert "# written by Hermes 0.21, then by hand" in (home / "config.yaml").read_text()
        await wait_until(pilot, lambda: "d: send in full" in str(tree.border_subtitle), 20)
        await pilot.press("d")  # and back
        await wait_until(
            pilot,
            lambda: screen.controller.rows.costs.tools["read_file"].state.value == "eager",
            20,
        )
        assert screen.controller.rows.costs.total == before.total


async def test_a_value_hermes_cannot_use_is_said_in_the_workbench(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(CONFIG.replace("threshold_pct: 5", "threshold_pct: lots"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, _ = await sized(pilot, app)
        said = "tools.tool_search.threshold_pct is 'lots', not a number: 5 is used"
        await wait_until(pilot, lambda: any(said in n.message for n in app._notifications))
        assert screen.controller.rows.costs.tools["search_files"].state.value == "listed"
