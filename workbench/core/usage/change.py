"""A suggestion's change to config.yaml: previewed (the key as it would be written and the
request's cost then), then saved by the command that makes it everywhere else (atomic,
locked, comments kept): switching a tool off is `hermes-tui tools disable`'s change,
deferring one `hermes-tui tools defer`'s (Hermes's `tools.tool_search.defer`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.commands import (
    CommandFailed,
    Done,
    defer_tool_change,
    set_deferred,
    set_tool,
    tool_change,
)
from workbench.core.config import preview_config
from workbench.core.costs import offered_costs

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
    """The change for one suggestion, as its command would save it; CommandFailed when it
    cannot be made."""
    if action == OFF:
        mutate, key = tool_change(runtime, tool, False)
    elif action == DEFER:
        mutate, key = defer_tool_change(runtime, tool, True)
    else:
        raise CommandFailed(f"unknown change '{action}'", usage=True)
    return Plan(mutate, key)


def preview(runtime: Runtime, costs: Costs, tool: str, action: str, **model_flags: Any) -> Preview:
    change = plan(runtime, tool, action)
    then = preview_config(runtime.config, change.mutate)
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
    """Save the change to config.yaml through its command, and read the config again."""
    if action == OFF:
        return set_tool(runtime, tool, False)
    if action == DEFER:
        return set_deferred(runtime, tool, True)
    raise CommandFailed(f"unknown change '{action}'", usage=True)


def _said(value: Any) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):  # an MCP server's `tools` filter
        return json.dumps(value, default=str)
    return str(value)
