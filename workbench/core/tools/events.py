"""What the tool table emits: a tool registered, replaced, removed or refused, the toolset
choices changed, a built-in module failed to import; and where a tool came from.
`workbench.core.events` gathers them with every other core event."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


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
