"""A suggestion's change to config.yaml: previewed (the key as it would be written and the
request's cost then), then saved by the writer every switch uses (atomic, locked, comments
kept). Switching a tool off is `hermes-tui tools disable`'s change; deferring one adds it to
Hermes's `tools.tool_search.defer`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.commands import NOTHING_CHANGED, CommandFailed, Done, tool_change
from workbench.core.config import Config, ConfigError, preview_config, update_config
from workbench.core.costs import offered_costs
from workbench.core.tools import deferral

if TYPE_CHECKING:
    from workbench.core.agent.offered import Costs
    from workbench.core.runtime import Runtime

OFF = "off"  # switch the tool off
DEFER = "defer"  # send it behind tool search


@dataclass(frozen=True)
class Plan:
    mutate: Callable[[Any], None]
    key: str  # the config.yaml key it writes


@dataclass(frozen=True)
class Preview:
    """What saving would do: the key's value now and then, the request's tokens now and then."""

    tool: str
    action: str
    key: str
    before: Any
    after: Any
    tokens_before: int
    tokens_after: int

    @property
    def saving(self) -> int:
        return self.tokens_before - self.tokens_after

    def lines(self) -> list[str]:
        from workbench.core.agent.context import short

        return [
            f"{self.key}: {_said(self.before)}",
            f"  would become: {_said(self.after)}",
            f"tokens each request: {short(self.tokens_before)} now, "
            f"{short(self.tokens_after)} then ({short(self.saving)} fewer)",
        ]


def plan(runtime: Runtime, tool: str, action: str) -> Plan:
    """The change for one suggestion; CommandFailed when it cannot be made."""
    if action == OFF:
        mutate, key = tool_change(runtime, tool, False)
        return Plan(mutate, key)
    if action != DEFER:
        raise CommandFailed(f"unknown change '{action}'", usage=True)
    if runtime.config.error:
        raise CommandFailed(f"{runtime.config.error}\n{NOTHING_CHANGED}")
    entry = runtime.registry.get_entry(tool)
    settings = deferral.ToolSearchSettings.from_config(runtime.config)
    try:
        mutate = deferral.defer_change(tool, True, getattr(entry, "toolset", None), settings)
    except deferral.DeferError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    return Plan(mutate, deferral.DEFER_KEY)


def after(runtime: Runtime, change: Plan) -> Config:
    """The config as saving the change would leave it, in memory."""
    return preview_config(runtime.config, change.mutate)


def preview(runtime: Runtime, costs: Costs, tool: str, action: str, **model_flags: Any) -> Preview:
    change = plan(runtime, tool, action)
    then = after(runtime, change)
    measured = offered_costs(runtime, then, **model_flags)
    return Preview(
        tool,
        action,
        change.key,
        runtime.config.get(change.key),
        then.get(change.key),
        costs.total,
        measured.total,
    )


def apply(runtime: Runtime, tool: str, action: str) -> Done:
    """Save the change to config.yaml and read it again."""
    change = plan(runtime, tool, action)
    try:
        update_config(change.mutate, runtime.config.path)
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    runtime.reload_config()
    done = "switched off" if action == OFF else "deferred (found through tool search)"
    return Done(f"tool {tool} {done} (saved to {runtime.config.path}: {change.key})")


def _said(value: Any) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):  # an MCP server's `tools` filter
        return json.dumps(value, default=str)
    return str(value)
