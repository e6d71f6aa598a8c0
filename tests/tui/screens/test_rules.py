"""The approval rules panel: the simulator as you type, and adding, editing and deleting rules
(saved to config.yaml, in force at once)."""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import App
from textual.widgets import DataTable, Input, Static

from tests.support.waiting import PATIENCE
from workbench.core.config import load_config
from workbench.core.policy import RuleBook
from workbench.core.policy.simulate import Simulator
from workbench.core.runtime import load_runtime, write_roots
from workbench.tui.screens.rules import RulesScreen


class Host(App[None]):
    def __init__(self, home: Path, cwd: Path) -> None:
        super().__init__()
        self.runtime = load_runtime(home, load_plugins=False)
        self.book = RuleBook(self.runtime.config, project=cwd, trusted=False)
        self.cwd = cwd

    def on_mount(self) -> None:
        simulator = Simulator(self.runtime.registry, write_roots(self.runtime.config))
        self.push_screen(RulesScreen(simulator, self.book, str(self.cwd)))


async def wait_for(pilot, condition, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await pilot.pause(0.05)


def verdict(app: Host) -> str:
    return str(app.screen.query_one("#rules-verdict", Static).render())


async def type_into(pilot, app: Host, selector: str, text: str) -> None:
    """The field's text set at once, as a paste would: the screen hears Input.Changed as it
    does for a key (one key at a time cost a second a line; one test still types)."""
    field = app.screen.query_one(selector, Input)
    field.focus()
    field.value = text
    await pilot.pause()


async def type_keys(pilot, app: Host, selector: str, text: str) -> None:
    field = app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.press(*text)


def refusals(app: Host) -> int:
    return sum("Not saved" in n.message for n in app._notifications)


def make_home(home: Path, config: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)


async def test_the_simulator_answers_as_you_type_and_runs_nothing(
    home: Path, tmp_path: Path
) -> None:
    make_home(home, "approvals:\n  rules:\n    - {action: deny, command_prefix: git push}\n")
    (tmp_path / "build").mkdir()
    app = Host(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await type_into(pilot, app, "#rules-test", "rm -rf build")
        await wait_for(pilot, lambda: verdict(app).startswith("asks: rm -rf build"))
        assert "dangerous rm -rf build — recursively deletes build" in verdict(app)
        await type_into(pilot, app, "#rules-test", "sudo git push -f")
        await wait_for(pilot, lambda: verdict(app).startswith("denied"))
        assert "deny commands starting with `git push` (config.yaml approvals.rules[0])" in (
            verdict(app)
        )
        await type_into(pilot, app, "#rules-test", 'write_file {"path": "/etc/hosts"}')
        await wait_for(pilot, lambda: verdict(app).startswith("asks: write_file /etc/hosts"))
        await type_keys(pilot, app, "#rules-test", "ls -la")  # key by key
        await wait_for(pilot, lambda: verdict(app).startswith("allowed: ls -la"))
    assert (tmp_path / "build").is_dir()


async def test_add_edit_and_delete_a_rule(home: Path, tmp_path: Path) -> None:
    make_home(home, "# mine\nmemory: {provider: builtin}\n")
    app = Host(home, tmp_path)
    config = home / "config.yaml"
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one("#rules-table", DataTable)
        table.focus()
        await pilot.press("n")
        await type_into(pilot, app, "#rules-editor", "{action: deny, command_prefix: git push}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: table.row_count == 1)
        assert load_config(config).get("approvals.rules") == [
            {"action": "deny", "command_prefix": "git push"}
        ]
        # in force at once: the simulator says so
        await type_into(pilot, app, "#rules-test", "git push origin")
        await wait_for(pilot, lambda: verdict(app).startswith("denied"))
        table.focus()
        await pilot.press("e")
        editor = app.screen.query_one("#rules-editor", Input)
        assert editor.value == "{action: deny, command_prefix: git push}"
        await type_into(pilot, app, "#rules-editor", "{action: ask, command_prefix: git push}")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                load_config(config).get("approvals.rules")
                == [{"action": "ask", "command_prefix": "git push"}]
            ),
        )
        table.focus()
        await pilot.press("delete")
        await wait_for(pilot, lambda: table.row_count == 0)
    assert load_config(config).get("approvals.rules") == []
    assert config.read_text().startswith("# mine")


async def test_a_bad_rule_in_the_editor_is_refused_and_kept_to_fix(
    home: Path, tmp_path: Path
) -> None:
    make_home(home)
    app = Host(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.query_one("#rules-table", DataTable).focus()
        await pilot.press("n")
        for count, bad in enumerate(
            ("{action: deny, command_prefx: git push}", "{action: deny", "- a list"), 1
        ):
            await type_into(pilot, app, "#rules-editor", bad)
            await pilot.press("enter")
            await wait_for(pilot, lambda: refusals(app) == count)  # noqa: B023 (awaited in the loop)
            editor = app.screen.query_one("#rules-editor", Input)
            assert editor.value == bad and not editor.has_class("hidden")
        await pilot.press("escape")
        assert app.screen.query_one("#rules-editor", Input).has_class("hidden")
    assert (home / "config.yaml").read_text() == ""


async def test_bad_rules_in_the_config_are_shown(home: Path, tmp_path: Path) -> None:
    make_home(home, "approvals:\n  rules:\n    - {action: deny, tol: x}\n")
    app = Host(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        problems = str(app.screen.query_one("#rules-problems", Static).render())
        assert "approvals.rules[0]: unknown key tol" in problems and "every call asks" in problems
        await type_into(pilot, app, "#rules-test", "ls")
        await wait_for(pilot, lambda: verdict(app).startswith("asks: ls"))
