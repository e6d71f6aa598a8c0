"""The `checkpoints:` keys of config.yaml, Hermes's names, each checked with a fallback.

Hermes reads `enabled`, `max_snapshots`, `max_total_size_mb`, `max_file_size_mb` (and prunes
by `retention_days`); hermes-tui adds `max_files` (Hermes's fixed 50,000 file cap) and
`required` (a failed snapshot fails the call it precedes). Checkpoints are on by default here
(Hermes turned them off in v2 because its store grows; ours is pruned by the same keys).
A bad value falls back to the default and says so in `problems`, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.core.config import Config

DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "required": False,
    "max_snapshots": 20,
    "max_total_size_mb": 500,
    "max_file_size_mb": 10,
    "max_files": 50_000,
    "retention_days": 7,
}


AT_LEAST_ONE = ("max_snapshots", "max_files")


@dataclass(frozen=True)
class Settings:
    enabled: bool = True
    required: bool = False
    max_snapshots: int = 20  # per project
    max_total_size_mb: int = 500  # the whole store; 0: no cap
    max_file_size_mb: int = 10  # a larger file is left out of snapshots
    max_files: int = 50_000  # a project with more is skipped
    retention_days: int = 7  # older checkpoints are pruned; 0: kept by count alone
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def max_file_bytes(self) -> int:
        return self.max_file_size_mb * 1024 * 1024


def settings_from(config: Config | None) -> Settings:
    section = config.get("checkpoints") if config is not None else None
    problems: list[str] = []
    if isinstance(section, bool):  # `checkpoints: false`, as Hermes's CLI flag reads it
        section = {"enabled": section}
    elif section is not None and not isinstance(section, dict):
        problems.append("checkpoints: is not a mapping; the defaults are used")
        section = {}
    section = section or {}
    values: dict[str, Any] = {}
    for key, default in DEFAULTS.items():
        raw = section.get(key, default)
        value = _checked(raw, default)
        if key in AT_LEAST_ONE and value == 0:
            value = None
        if value is None:
            problems.append(f"checkpoints.{key}: {raw!r} is not valid; using {default!r}")
            value = default
        values[key] = value
    return Settings(**values, problems=tuple(problems))


def _checked(raw: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in (
            "true",
            "yes",
            "on",
            "false",
            "no",
            "off",
        ):
            return raw.strip().lower() in ("true", "yes", "on")
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return None
    try:
        number = int(raw)
    except ValueError:
        return None
    return number if number >= 0 else None
