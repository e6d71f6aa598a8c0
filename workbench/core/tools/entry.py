"""One registered tool, as every registry and the scheduler see it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from workbench.core import schema as schemas
from workbench.core.tools.availability import CheckFn
from workbench.core.tools.definitions import tool_definition
from workbench.core.tools.events import ToolSource

Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEntry:
    """One registered tool: Hermes's 11 fields, its source and owner, and scheduling hints.

    Immutable, so registries may share one (a runtime's registry starts from the built-in
    tools' entries). `register` takes Hermes's positional order; here every field is named.
    """

    name: str
    toolset: str
    schema: dict[str, Any]
    handler: Handler
    check_fn: CheckFn | None = None
    requires_env: list[str] = field(default_factory=list)
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    max_result_size_chars: float | None = None
    dynamic_schema_overrides: Callable[[], dict[str, Any]] | None = None
    source: ToolSource = ToolSource.BUILTIN
    owner: str = ""
    # Scheduling hints: path arguments and whether each is read or written, whether the
    # tool may run beside others, whether it asks the user (never in parallel).
    path_args: dict[str, str] = field(default_factory=dict)
    parallel_safe: bool = False
    interactive: bool = False
    # What an MCP server says of its tool (readOnlyHint, destructiveHint, idempotentHint,
    # openWorldHint, title), and whether its server is `trust: untrusted`.
    annotations: dict[str, Any] = field(default_factory=dict)
    untrusted: bool = False
    # The OpenAI definition ({"type": "function", "function": ...}), built once and
    # read-only: every request that offers the tool shares it.
    definition: dict[str, Any] = field(init=False, repr=False, compare=False)
    # Why its parameters cannot be used ("" when they can: core.schema.problem). Such a
    # tool stays registered, to be listed with the reason, but is never available.
    schema_problem: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fill = functools.partial(object.__setattr__, self)  # frozen: set once, here
        schema = self.schema if self.schema is not None else {}
        fill("schema_problem", "")
        if isinstance(schema, Mapping):  # anything else is refused at registration
            fill("schema", dict(schema))
            fill("description", self.description or str(schema.get("description", "")))
            fill("schema_problem", schemas.problem(schema.get("parameters")))
        fill("requires_env", list(self.requires_env or []))
        fill("path_args", dict(self.path_args or {}))
        fill("annotations", dict(self.annotations or {}))
        fill("definition", tool_definition(self.name, self.schema))

    @classmethod
    def from_registration(
        cls, registration: Mapping[str, Any], source: ToolSource, owner: str
    ) -> ToolEntry:
        """An entry from `register`'s arguments by name (a plugin's recorded registration)."""
        given: dict[str, Any] = {
            f: registration.get(f)
            for f in _REGISTRATION_FIELDS
            if f in _REQUIRED_FIELDS or registration.get(f) is not None
        }
        for flag in ("is_async", "parallel_safe", "interactive", "untrusted"):
            given[flag] = bool(given.get(flag))
        return cls(**given, source=source, owner=owner)

    def __repr__(self) -> str:
        return f"ToolEntry({self.name!r}, toolset={self.toolset!r}, source={self.source.value})"


_REQUIRED_FIELDS = ("name", "toolset", "schema", "handler")
_REGISTRATION_FIELDS = tuple(
    f.name for f in fields(ToolEntry) if f.init and f.name not in ("source", "owner")
)
