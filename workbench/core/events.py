"""The core's one vocabulary of events: every event type it emits, and `CoreEvent`, their union.

Each part of the core defines its own events beside it (`agent/events.py`,
`execution/events.py`, `mcp/events.py`, `asking.py`, `plugins/events.py`, `tools/events.py`); this module
gathers them for the front ends, which dispatch on the class (`match event: case
ToolCallStarted(): ...`), so a misspelt type is a name that does not exist (ruff reports it,
F821), never a branch that silently never runs. No part of the core imports this module:
each imports the events of the parts below it directly. Importing it loads those events
modules and the little they need, not the parts themselves (their packages load their
names lazily).
"""

from __future__ import annotations

from typing import TypeAlias

from workbench.core.agent.events import (
    ContextCompressed,
    ContextNotice,
    ContextUsage,
    ModelProgress,
    RoundStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TranscriptFailed,
    TurnFinished,
)
from workbench.core.asking import Asked, Settled
from workbench.core.checkpoints.events import CheckpointEvent, CheckpointSkipped, CheckpointTaken
from workbench.core.execution.events import (
    ApprovalAnswered,
    CallEvent,
    ToolCallFinished,
    ToolCallStarted,
    VenvChanged,
)
from workbench.core.mcp.events import (
    AskSettled,
    CallProgress,
    CatalogChanged,
    ResourceUpdated,
    ServerChanged,
    ServerLog,
    ToolsChanged,
)
from workbench.core.plugins.events import PluginChanged
from workbench.core.tools.events import (
    ChangeKind,
    ModuleImportFailed,
    RegistryChanged,
    ToolsetsChanged,
    ToolSource,
)

AgentEvent: TypeAlias = (
    TextDelta
    | RoundStarted
    | TurnFinished
    | ContextUsage
    | ContextNotice
    | ContextCompressed
    | SubagentStarted
    | SubagentFinished
    | TranscriptFailed
    | ModelProgress
)
"""What a chat session emits while a turn runs (its tool calls too: see `CallEvent`)."""

SourceEvent: TypeAlias = (
    RegistryChanged
    | ToolsetsChanged
    | ModuleImportFailed
    | PluginChanged
    | ServerChanged
    | ToolsChanged
    | CallProgress
    | ServerLog
    | ResourceUpdated
    | CatalogChanged
    | AskSettled
)
"""What the tool sources emit: the registry, the toolsets, plugins and MCP servers."""

AskEvent: TypeAlias = Asked | Settled
"""A person is asked something (an approval, a server's question, `clarify`), and its end."""

CoreEvent: TypeAlias = AgentEvent | CallEvent | CheckpointEvent | SourceEvent | AskEvent
"""Every event the core emits."""

__all__ = [
    "AgentEvent",
    "ApprovalAnswered",
    "AskEvent",
    "AskSettled",
    "Asked",
    "CallEvent",
    "CallProgress",
    "CatalogChanged",
    "ChangeKind",
    "CheckpointEvent",
    "CheckpointSkipped",
    "CheckpointTaken",
    "ContextCompressed",
    "ContextNotice",
    "ContextUsage",
    "CoreEvent",
    "ModelProgress",
    "ModuleImportFailed",
    "PluginChanged",
    "RegistryChanged",
    "ResourceUpdated",
    "RoundStarted",
    "ServerChanged",
    "ServerLog",
    "Settled",
    "SourceEvent",
    "SubagentFinished",
    "SubagentStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolSource",
    "ToolsChanged",
    "ToolsetsChanged",
    "TranscriptFailed",
    "TurnFinished",
    "VenvChanged",
]
