"""Plugins: discovery from three sources, Hermes-compatible loading, hooks and hot reload.

The manager is imported on first use: a plugin probe (a child process that only imports
and registers plugins) must not pay for it and everything it needs.
"""

from __future__ import annotations

import importlib
from typing import Any

from workbench.core.plugins.hooks import HookRegistry, hooks

_LAZY = {
    "PluginChanged": "manager",
    "PluginManager": "manager",
    "PluginState": "manager",
    "PluginManifest": "sources",
}

__all__ = ["HookRegistry", "hooks", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
