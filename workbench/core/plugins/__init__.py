"""Plugins: discovery from three sources, Hermes-compatible loading, hooks and hot reload."""

from workbench.core.plugins.hooks import HookRegistry, hooks
from workbench.core.plugins.manager import PluginChanged, PluginManager, PluginState
from workbench.core.plugins.sources import PluginManifest

__all__ = [
    "HookRegistry",
    "PluginChanged",
    "PluginManager",
    "PluginManifest",
    "PluginState",
    "hooks",
]
