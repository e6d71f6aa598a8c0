"""What the MCP manager tells its owner: a server's state and log, its tools, resources and
catalog, a call's progress, how a server's question ended.

Kept apart from the manager so that the servers it runs can report without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerChanged:
    server: str
    state: str
    tools: int
    error: str = ""


@dataclass(frozen=True)
class ToolsChanged:
    server: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class ServerLog:
    """A log message the server sent (notifications/message), as one line."""

    server: str
    level: str
    line: str


@dataclass(frozen=True)
class ResourceUpdated:
    """A subscribed resource changed on the server (notifications/resources/updated)."""

    server: str
    uri: str


@dataclass(frozen=True)
class CatalogChanged:
    """The server's resources, templates or prompts were listed again."""

    server: str


@dataclass(frozen=True)
class CallProgress:
    server: str
    tool: str
    call_id: str
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class AskSettled:
    """An event: how a server's question ended (shown to the user, logged by the CLI)."""

    server: str
    kind: str  # elicitation, sampling
    outcome: str  # accepted, declined, cancelled, approved, refused, failed
    why: str = ""
