"""A plugin's key is Hermes's: a flat plugin is its manifest's name, whatever its folder."""

from __future__ import annotations

import sys

import pytest
import yaml

from tests.support.plugins import make_home, make_manager
from workbench.core.plugins import HookRegistry

FOLDER = "hermes-plugin-x"


@pytest.fixture(autouse=True)
def _forget_plugin_modules():
    yield
    for name in [m for m in sys.modules if m.startswith("hermes_plugins.")]:
        del sys.modules[name]


def _plugins(home) -> dict:
    return yaml.safe_load((home / "config.yaml").read_text())["plugins"]


@pytest.mark.parametrize("named", ["x", FOLDER])
def test_a_flat_plugin_is_keyed_by_its_manifests_name(tmp_path, reg, named) -> None:
    """`plugins.enabled` names it as Hermes does (x), or by its folder (ours)."""
    home = make_home(tmp_path, [FOLDER], enabled=[named])
    manager = make_manager(home, reg, HookRegistry())
    assert list(manager.states) == ["x"]
    state = manager.states["x"]
    assert state.status == "loaded" and state.tools == ["x_tool"]
    assert reg.get_entry("x_tool").owner == "x"
    assert "hermes_plugins.x" in sys.modules  # Hermes's module name: the key's slug


@pytest.mark.parametrize("named", ["x", FOLDER])
def test_disabling_writes_the_key_hermes_reads(tmp_path, reg, named) -> None:
    home = make_home(tmp_path, [FOLDER], enabled=["x", FOLDER, "other"])
    manager = make_manager(home, reg, HookRegistry())
    state = manager.set_enabled(named, False)
    assert state.key == "x" and state.status == "disabled" and reg.get_entry("x_tool") is None
    # Hermes 0.19.0 loads a flat plugin when plugins.enabled has its manifest's name, and
    # skips it when plugins.disabled has it: each of its names left the one list
    assert _plugins(home) == {"enabled": ["other"], "disabled": ["x"]}
    again = make_manager(home, reg, HookRegistry()).states["x"]
    assert (again.enabled, again.status) == (False, "disabled")


def test_enabling_takes_every_name_of_it_off_the_disabled_list(tmp_path, reg) -> None:
    home = make_home(tmp_path, [FOLDER], plugins={"enabled": [], "disabled": [FOLDER, "x"]})
    manager = make_manager(home, reg, HookRegistry())
    assert manager.states["x"].status == "disabled"  # the folder's name disables it too
    assert manager.set_enabled(FOLDER, True).status == "loaded"
    assert _plugins(home) == {"enabled": ["x"], "disabled": []}


def test_a_name_two_plugins_share_is_refused_not_guessed(tmp_path, reg) -> None:
    home = make_home(tmp_path, [FOLDER], enabled=[])
    for category in ("tools", "more"):  # two category plugins: tools/y and more/y, both z
        plugin = home / "plugins" / category / "y"
        plugin.mkdir(parents=True)
        (plugin / "plugin.yaml").write_text("name: z\n")
        (plugin / "__init__.py").write_text("def register(ctx):\n    pass\n")
    manager = make_manager(home, reg, HookRegistry())
    assert set(manager.states) == {"x", "tools/y", "more/y"}
    assert manager.find("tools/y").key == "tools/y"
    for name in ("z", "y"):  # the manifests' name, the folders' name
        with pytest.raises(KeyError, match="could be any of the plugins more/y, tools/y"):
            manager.find(name)
    with pytest.raises(KeyError, match="no plugin 'ghost'"):
        manager.find("ghost")


def test_plugins_entries_may_name_the_folder(tmp_path, reg) -> None:
    home = make_home(
        tmp_path,
        [FOLDER],
        plugins={"enabled": ["x"], "entries": {FOLDER: {"allow_tool_override": True}}},
    )
    manager = make_manager(home, reg, HookRegistry())
    assert manager._may_override(manager.states["x"].manifest)
