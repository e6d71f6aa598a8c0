"""Typed events the core emits. The UI and the CLI consume them; the core never imports either."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from workbench.core.agent.compress import ContextCompressed
    from workbench.core.agent.delegation import SubagentFinished, SubagentStarted
    from workbench.core.agent.loop import (
        ContextNotice,
        ContextUsage,
        RoundStarted,
        TextDelta,
        TurnFinished,
    )
    from workbench.core.agent.transcript import TranscriptFailed
    from workbench.core.execution.approval import ApprovalAnswered, ApprovalRequested
    from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
    from workbench.core.mcp.asks import AskSettled
    from workbench.core.mcp.events import (
        CallProgress,
        CatalogChanged,
        ResourceUpdated,
        ServerChanged,
        ServerLog,
        ToolsChanged,
    )
    from workbench.core.plugins.manager import PluginChanged


class ToolSource(StrEnum):
    """Where a tool came from."""

    BUILTIN = "builtin"
    MCP = "mcp"
    PLUGIN = "plugin"


class ChangeKind(StrEnum):
    REGISTERED = "registered"
    REPLACED = "replaced"
    DEREGISTERED = "deregistered"
    REJECTED = "rejected"
    ALIAS = "alias"


@dataclass(frozen=True, slots=True)
class RegistryChanged:
    """One change to the registry; `generation` is the registry's counter after it."""

    kind: ChangeKind
    name: str
    toolset: str
    source: ToolSource
    owner: str
    generation: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolsetsChanged:
    """The user's toolset choices changed (and were persisted, unless `error` says otherwise)."""

    enabled: tuple[str, ...]
    disabled: tuple[str, ...]
    error: str = ""


@dataclass(frozen=True, slots=True)
class ModuleImportFailed:
    """A built-in tool module could not be imported; the others loaded."""

    module: str
    error: str
    traceback: str = field(default="", repr=False)


CoreEvent: TypeAlias = (
    "RegistryChanged | ToolsetsChanged | ModuleImportFailed | ToolCallStarted | ToolCallFinished"
    " | TextDelta | RoundStarted | TurnFinished | ContextUsage | ContextNotice | ContextCompressed"
    " | SubagentStarted | SubagentFinished | TranscriptFailed | ApprovalRequested | ApprovalAnswered"
    " | PluginChanged | ServerChanged | ToolsChanged | CallProgress"
    " | ServerLog | ResourceUpdated | CatalogChanged | AskSettled"
)
