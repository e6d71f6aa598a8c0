"""The workbench asks before it loads a project's plugins and rules that are not as the
person last trusted them: a modal with each file's diff; `y` loads them, anything else
keeps them out. A trusted plugin changed while the workbench runs is asked about again,
not reloaded unasked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.pilot import wait_until
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.trust import TrustScreen

PLUGIN = (
    "def register(ctx):\n"
    "    ctx.register_tool('helper_tool', 'helper', {{'description': 'x'}}, "
    "lambda a, **k: {result!r})\n"
)


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: [helper]\n")
    root = tmp_path / "project"
    plugin = root / ".hermes" / "plugins" / "helper"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(PLUGIN.format(result="v1"))
    monkeypatch.chdir(root)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    yield root
    for name in [m for m in sys.modules if m.startswith("hermes_plugins.")]:
        del sys.modules[name]


async def trust_modal(pilot, app) -> TrustScreen:
    """The modal once open, its buttons composed and the focus given."""
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, TrustScreen)
            and app.screen.query("#keep-out")
            and app.screen.focused is not None
        ),
        30,
    )
    return app.screen


def helper(app) -> str:
    state = app.runtime.plugins.states["helper"]
    return state.status


async def test_yes_trusts_what_the_modal_shows_and_loads_it(project: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        modal = await trust_modal(pilot, app)
        assert helper(app) == "not loaded" and modal.focused.id == "keep-out"
        title = str(modal.query_one("#trust-title").render())
        assert title == f"⚠ {project}/.hermes: never trusted here"
        shown = str(modal.query_one("#trust-diffs").query_one("Static").render())
        assert "new: .hermes/plugins/helper/__init__.py" in shown and "+def register(ctx):" in shown
        await pilot.press("y")
        await wait_until(pilot, lambda: helper(app) == "loaded", 30)
        assert app.runtime.registry.dispatch("helper_tool", {}) == "v1"


async def test_anything_else_keeps_them_out(project: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await trust_modal(pilot, app)
        await pilot.press("q")  # not an answer: keeps them out
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert helper(app) == "not loaded"
        assert app.runtime.registry.get_entry("helper_tool") is None


async def test_a_trusted_plugin_changed_while_it_runs_is_asked_about_again(
    project: Path, home: Path
) -> None:
    from workbench.core.trust import ProjectTrust

    ProjectTrust(home, project).trust()
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None and helper(app) == "loaded", 30)
        await wait_until(pilot, lambda: app.controller.reloader.ready.is_set(), 30)
        init = project / ".hermes" / "plugins" / "helper" / "__init__.py"
        init.write_text(PLUGIN.format(result="v2"))
        modal = await trust_modal(pilot, app)
        assert app.runtime.registry.dispatch("helper_tool", {}) == "v1"  # not reloaded
        shown = str(modal.query_one("#trust-diffs").query_one("Static").render())
        assert (
            "changed: .hermes/plugins/helper/__init__.py" in shown
            and "+    ctx.register_tool" in shown
        )
        await pilot.press("y")
        await wait_until(
            pilot, lambda: app.runtime.registry.dispatch("helper_tool", {}) == "v2", 30
        )
