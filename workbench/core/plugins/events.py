"""What the plugin manager emits: a plugin loaded, reloaded, failed, was disabled or removed.
`workbench.core.events` gathers it with every other core event."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PluginChanged:
    key: str
    status: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    error: str = ""
