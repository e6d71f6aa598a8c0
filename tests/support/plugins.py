"""The fixture plugins, a HERMES_HOME to hold them and a plugin manager over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from workbench.core.config import load_config
from workbench.core.plugins import HookRegistry, PluginManager
from workbench.core.tools.registry import ToolRegistry

FIXTURES = Path(__file__).resolve().parents[1] / "core" / "plugins" / "fixtures"


def make_home(
    tmp_path: Path, names: list[str], enabled: list[str] | None = None, plugins: dict | None = None
) -> Path:
    """A HERMES_HOME with copies of the named fixture plugins and a `plugins:` section."""
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(FIXTURES / name, home / "plugins" / name)
    section = plugins if plugins is not None else {"enabled": names if enabled is None else enabled}
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": section}))
    return home


def make_manager(
    home: Path, reg: ToolRegistry, hooks: HookRegistry, entry_points=lambda: [], **kw
) -> PluginManager:
    manager = PluginManager(
        reg, hooks, load_config(home / "config.yaml"), home=home, entry_points=entry_points, **kw
    )
    manager.discover()
    manager.load_enabled()
    return manager
