"""Project plugins run only as the person last trusted the project: a new or changed one is
never imported, probed or reloaded until they agree (HERMES_ENABLE_PROJECT_PLUGINS=1)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.plugins import make_home, make_manager
from workbench.core.plugins import HookRegistry, PluginChanged, loader
from workbench.core.plugins.manager import HELD, UNTRUSTED
from workbench.core.plugins.probe import Prober
from workbench.core.plugins.watcher import HotReloader
from workbench.core.tools.registry import ToolRegistry
from workbench.core.trust import PLUGINS, ProjectTrust

PLUGIN = """\
import pathlib
pathlib.Path({marker!r}).write_text("imported")  # what a planted plugin does on import

def register(ctx):
    ctx.register_tool("helper_tool", "helper", {{"description": "x"}}, lambda a, **k: {result!r})
"""


@pytest.fixture(autouse=True)
def _trusting(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    yield
    for name in [m for m in sys.modules if m.startswith("hermes_plugins.")]:
        del sys.modules[name]


@pytest.fixture
def world(tmp_path: Path):
    home = make_home(tmp_path, [], plugins={"enabled": ["helper"]})
    project = tmp_path / "project"
    plugin = project / PLUGINS / "helper"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: helper\n")
    marker = tmp_path / "imported.txt"
    write(plugin, marker, "v1")
    return home, project, plugin, marker


def write(plugin: Path, marker: Path, result: str) -> None:
    (plugin / "__init__.py").write_text(PLUGIN.format(marker=str(marker), result=result))


def manager_for(home: Path, project: Path, reg: ToolRegistry, **kw):
    trust = ProjectTrust(home, project)
    return make_manager(
        home, reg, HookRegistry(), project=project / PLUGINS, trust=trust, **kw
    ), trust


def test_a_plugin_never_trusted_is_neither_imported_nor_probed(world, reg, home_probe) -> None:
    home, project, _, marker = world
    prober = home_probe(home)
    manager, trust = manager_for(home, project, reg, prober=prober)
    state = manager.states["helper"]
    assert (state.status, state.error) == ("not loaded", UNTRUSTED)
    assert not marker.exists() and prober.probed == 0  # not even in a child process
    assert reg.get_entry("helper_tool") is None
    trust.trust()
    manager.load_enabled()
    assert prober.probed == 1 and state.status == "loaded"
    assert reg.dispatch("helper_tool", {}) == "v1"


def test_a_trusted_plugin_changed_is_not_reloaded_until_trusted_again(world, reg) -> None:
    home, project, plugin, marker = world
    ProjectTrust(home, project).trust()
    events: list[PluginChanged] = []
    manager, trust = manager_for(home, project, reg, on_event=events.append)
    assert reg.dispatch("helper_tool", {}) == "v1"
    marker.unlink()
    write(plugin, marker, "v2 (the agent's)")
    HotReloader(manager).handle({plugin / "__init__.py"})  # what the watcher sees
    assert not marker.exists() and reg.dispatch("helper_tool", {}) == "v1"  # the trusted one
    assert events[-1] == PluginChanged("helper", HELD, error=UNTRUSTED)
    assert manager.states["helper"].last_change.startswith("not reloaded: its files are new")
    trust.trust()
    manager.load_held()
    assert reg.dispatch("helper_tool", {}) == "v2 (the agent's)"


def test_a_source_swapped_after_the_check_is_refused_by_the_loader(world, reg) -> None:
    """Between the check and the import the file changes: the loader compiles only the
    source whose hash was trusted."""
    home, project, plugin, marker = world
    ProjectTrust(home, project).trust()
    manager, _ = manager_for(home, project, reg)
    manifest = manager.states["helper"].manifest
    assert manager.may_run(manifest)  # the check, which guards the folder
    write(plugin, marker, "swapped")
    marker.unlink()
    loader.take_modules(manifest)
    with pytest.raises(ImportError, match="is not as you trusted it"):
        loader.load_register(manifest)
    assert not marker.exists()


def test_without_the_setting_project_plugins_are_not_even_found(world, reg, monkeypatch) -> None:
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS")
    home, project, _, marker = world
    manager = make_manager(home, reg, HookRegistry(), project=project / PLUGINS)
    assert "helper" not in manager.states and not marker.exists()


@pytest.fixture
def home_probe():
    return lambda home: Prober(home / "state" / "plugin-probes.json", 10.0)
