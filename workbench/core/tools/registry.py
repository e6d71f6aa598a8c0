"""The tool registry: one table of every tool, whatever its source.

Compatible with Hermes's `tools/registry.py` contract: the same `register` signature and
positional order, the same getters, result and error shapes. Where Hermes is weak it does
better:

* a refused registration raises `ToolRegistrationError` and is announced to listeners
  (Hermes logs it and returns None);
* every tool knows its source (builtin, mcp, plugin) and owner; only its owner may replace
  or remove it, and only the MCP manager may touch `mcp-*` toolsets;
* the table is copy-on-write: readers take a snapshot reference and never iterate live state.

This module is the registry's face: the table, aliases, listeners, attribution scopes and
Hermes's getters. Beside it, each with one job: what a tool is (`entry`), who may
register or remove what (`ownership`), whether a tool is available (`availability`), the
definitions the model is offered (`definitions`) and running a handler (`dispatch`).

The module-level `registry` is where Hermes-style code registers: the built-in tool
modules when imported, and a plugin's direct calls while it loads. Each runtime runs on a
registry of its own, started from a copy of it (`fresh_registry`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from workbench.core.tools import dispatch as dispatching
from workbench.core.tools.availability import (
    DEFAULT_CHECK_TTL_SECONDS,
    Availability,
    CheckCache,
    CheckFn,
    ToolUnavailable,
)
from workbench.core.tools.definitions import DefinitionsCache
from workbench.core.tools.entry import Handler, ToolEntry
from workbench.core.tools.events import ChangeKind, RegistryChanged, ToolSource
from workbench.core.tools.ownership import RESERVED_NAMES, registration_refusal, removal_refusal

__all__ = [
    "DEFAULT_RESULT_SIZE_CHARS",
    "RESERVED_NAMES",
    "Availability",
    "OwnerSwap",
    "ToolEntry",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolUnavailable",
    "fresh_registry",
    "registry",
]

logger = logging.getLogger(__name__)

DEFAULT_RESULT_SIZE_CHARS = 100_000

Listener = Callable[[RegistryChanged], None]
Recorder = Callable[[dict[str, Any]], None]


class ToolRegistrationError(PermissionError):
    """A registration or removal the registry refused; the message says why."""


@dataclass(frozen=True, slots=True)
class _Scope:
    source: ToolSource
    owner: str
    may_override: bool = False
    registry: ToolRegistry | None = None  # the registry that opened it
    record: Recorder | None = None  # registrations go here, committed later by the opener


# Set by the plugin loader and the MCP manager around the code they run, so every
# registration made inside is attributed to them, whatever the code claims.
_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "registry_scope", default=None
)


@dataclass(frozen=True, slots=True)
class OwnerSwap:
    """What `replace_owner` changed, and what it refused (name, reason)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()


class ToolTable(Protocol):
    """What running a call needs of a table of tools: a tool's entry and its handler. The
    registry is one; a session's view of it (core.agent.own_tools.ToolRouter) another."""

    def get_entry(self, name: str) -> ToolEntry | None: ...

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str | dict[str, Any]: ...

    async def dispatch_async(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]: ...


class ToolRegistry:
    """Thread-safe registry. Mutations hold the lock; reads use immutable snapshots."""

    def __init__(self, check_ttl: float = DEFAULT_CHECK_TTL_SECONDS) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, ToolEntry] = {}
        self._aliases: dict[str, str] = {}
        self._generation = 0
        self._listeners: list[Listener] = []
        self._checks = CheckCache(check_ttl)
        self._definitions = DefinitionsCache()

    def copy(self) -> ToolRegistry:
        """A new registry holding this one's tools and aliases (entries are immutable)."""
        with self._lock:
            fresh = ToolRegistry(self.check_ttl)
            fresh._tools, fresh._aliases = dict(self._tools), dict(self._aliases)
        return fresh

    # -- attribution ---------------------------------------------------------------

    @contextlib.contextmanager
    def scope(
        self,
        source: ToolSource | str,
        owner: str,
        *,
        may_override: bool = False,
        record: Recorder | None = None,
    ) -> Iterator[None]:
        """Attribute every registration made inside to `source`/`owner`.

        Calls made inside on the module-level `registry` act on this registry. With
        `record`, `register` hands each registration's arguments to it instead of
        registering (the plugin loader commits them with the plugin's other tools).
        """
        token = _scope.set(_Scope(ToolSource(source), owner, may_override, self, record))
        try:
            yield
        finally:
            _scope.reset(token)

    # -- listeners -----------------------------------------------------------------

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` after every change; returns a function that removes it."""
        with self._lock:
            self._listeners = [*self._listeners, listener]

        def remove() -> None:
            with self._lock:
                self._listeners = [x for x in self._listeners if x is not listener]

        return remove

    def _emit(self, event: RegistryChanged) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("registry listener failed on %s", event)

    # -- registration --------------------------------------------------------------

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Handler,
        check_fn: CheckFn | None = None,
        requires_env: list[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: float | None = None,
        dynamic_schema_overrides: Callable[[], dict[str, Any]] | None = None,
        override: bool = False,
        *,
        source: ToolSource | str | None = None,
        owner: str | None = None,
        path_args: dict[str, str] | None = None,
        parallel_safe: bool = False,
        interactive: bool = False,
    ) -> ToolEntry | None:
        """Register a tool (Hermes's positional order); `ToolRegistrationError` if refused.

        Returns the new entry, or None inside a recording scope (the registration is
        committed, or refused, later with the rest of its owner's tools).
        """
        registration = {
            "name": name,
            "toolset": toolset,
            "schema": schema,
            "handler": handler,
            "check_fn": check_fn,
            "requires_env": requires_env,
            "is_async": is_async,
            "description": description,
            "emoji": emoji,
            "max_result_size_chars": max_result_size_chars,
            "dynamic_schema_overrides": dynamic_schema_overrides,
            "override": override,
            "path_args": path_args,
            "parallel_safe": parallel_safe,
            "interactive": interactive,
        }
        scope = _scope.get()
        if scope is not None and scope.record is not None:
            scope.record(registration)
            return None
        if scope is not None:
            src, who, may_override = scope.source, scope.owner, scope.may_override
        else:
            src = ToolSource(source) if source else ToolSource.BUILTIN
            who = owner or getattr(handler, "__module__", None) or "unknown"
            may_override = src is ToolSource.BUILTIN
        entry = ToolEntry.from_registration(registration, src, who)
        with self._lock:
            existing = self._tools.get(name)
            refusal = registration_refusal(entry, existing, override and may_override)
            if refusal is None:
                self._commit({**self._tools, name: entry})
                kind = ChangeKind.REGISTERED if existing is None else ChangeKind.REPLACED
                event = RegistryChanged(kind, name, toolset, src, who, self._generation)
            else:
                event = RegistryChanged(
                    ChangeKind.REJECTED, name, toolset, src, who, self._generation, refusal
                )
        self._emit(event)
        if refusal is not None:
            logger.warning("tool registration refused: %s", refusal)
            raise ToolRegistrationError(refusal)
        return entry

    def deregister(self, name: str) -> bool:
        """Remove a tool. Inside a scope, only the tool's own owner may remove it."""
        scope = _scope.get()
        with self._lock:
            entry = self._tools.get(name)
            if entry is None:
                return False
            reason = None
            if scope is not None:
                reason = removal_refusal(entry, scope.source, scope.owner)
            if scope is not None and reason is not None:
                event = RegistryChanged(
                    ChangeKind.REJECTED,
                    name,
                    entry.toolset,
                    scope.source,
                    scope.owner,
                    self._generation,
                    reason,
                )
            else:
                tools = dict(self._tools)
                del tools[name]
                self._drop_orphan_aliases(tools, entry.toolset)
                self._commit(tools)
                event = RegistryChanged(
                    ChangeKind.DEREGISTERED,
                    name,
                    entry.toolset,
                    entry.source,
                    entry.owner,
                    self._generation,
                )
        self._emit(event)
        if reason is not None:
            raise ToolRegistrationError(reason)
        return True

    def deregister_owner(self, source: ToolSource | str, owner: str) -> list[str]:
        """Remove every tool of one owner at once (a plugin unloading, a server going away)."""
        src = ToolSource(source)
        with self._lock:
            gone = [e for e in self._tools.values() if (e.source, e.owner) == (src, owner)]
            if not gone:
                return []
            tools = {n: e for n, e in self._tools.items() if (e.source, e.owner) != (src, owner)}
            for entry in gone:
                self._drop_orphan_aliases(tools, entry.toolset)
            self._commit(tools)
            generation = self._generation
        for entry in gone:
            self._emit(
                RegistryChanged(
                    ChangeKind.DEREGISTERED, entry.name, entry.toolset, src, owner, generation
                )
            )
        return sorted(e.name for e in gone)

    def replace_owner(
        self,
        source: ToolSource | str,
        owner: str,
        registrations: list[dict[str, Any]],
        *,
        may_override: bool = False,
    ) -> OwnerSwap:
        """Swap every tool of one owner for a new set in one step (plugin load and reload).

        Each registration holds `register`'s arguments. Tools of the owner missing from the
        new set go, changed ones are replaced, new ones added; a registration the rules
        refuse is reported and skipped. Readers see the old set or the new, never a mix.
        """
        src = ToolSource(source)
        entries = [ToolEntry.from_registration(r, src, owner) for r in registrations]
        with self._lock:
            old = {n: e for n, e in self._tools.items() if (e.source, e.owner) == (src, owner)}
            tools = {n: e for n, e in self._tools.items() if n not in old}
            accepted: list[ToolEntry] = []
            refused: list[tuple[str, str]] = []
            for entry, reg in zip(entries, registrations, strict=True):
                override = bool(reg.get("override")) and may_override
                why = registration_refusal(entry, tools.get(entry.name), override)
                if why is None and entry.name in {a.name for a in accepted}:
                    why = f"tool '{entry.name}' is registered twice by {src.value} '{owner}'"
                if why is None:
                    accepted.append(entry)
                else:
                    refused.append((entry.name, why))
            for entry in accepted:
                tools[entry.name] = entry
            for name in old:
                if name not in tools:
                    self._drop_orphan_aliases(tools, old[name].toolset)
            self._commit(tools)
            generation = self._generation
        names = {e.name for e in accepted}
        swap = OwnerSwap(
            added=tuple(sorted(names - set(old))),
            removed=tuple(sorted(set(old) - names)),
            replaced=tuple(sorted(names & set(old))),
            refused=tuple(refused),
        )
        self._announce(swap, {**old, **{e.name: e for e in accepted}}, src, owner, generation)
        return swap

    def _announce(
        self,
        swap: OwnerSwap,
        entries: dict[str, ToolEntry],
        src: ToolSource,
        owner: str,
        generation: int,
    ) -> None:
        kinds = [
            (swap.added, ChangeKind.REGISTERED),
            (swap.replaced, ChangeKind.REPLACED),
            (swap.removed, ChangeKind.DEREGISTERED),
        ]
        for names, kind in kinds:
            for name in names:
                entry = entries[name]
                self._emit(RegistryChanged(kind, name, entry.toolset, src, owner, generation))
        for name, reason in swap.refused:
            self._emit(
                RegistryChanged(ChangeKind.REJECTED, name, "", src, owner, generation, reason)
            )

    def _drop_orphan_aliases(self, tools: dict[str, ToolEntry], toolset: str) -> None:
        if any(e.toolset == toolset for e in tools.values()):
            return
        self._aliases = {a: t for a, t in self._aliases.items() if t != toolset}

    def _commit(self, tools: dict[str, ToolEntry]) -> None:
        """Publish a new table (caller holds the lock) and prune the check cache to it.

        The table is published before the generation moves: a reader that reads the
        generation first never files a newer table's output under an older generation.
        """
        self._tools = tools
        self._generation += 1
        self._checks.prune({e.check_fn for e in tools.values() if e.check_fn is not None})

    # -- aliases -------------------------------------------------------------------

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        with self._lock:
            previous = self._aliases.get(alias)
            if previous is not None and previous != toolset:
                logger.warning("toolset alias %r moved from %r to %r", alias, previous, toolset)
            self._aliases = {**self._aliases, alias: toolset}
            self._generation += 1
            generation = self._generation
        self._emit(
            RegistryChanged(ChangeKind.ALIAS, alias, toolset, ToolSource.BUILTIN, "", generation)
        )

    def get_registered_toolset_aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def get_toolset_alias_target(self, alias: str) -> str | None:
        return self._aliases.get(alias)

    # -- reads ---------------------------------------------------------------------

    @property
    def generation(self) -> int:
        return self._generation

    def snapshot(self) -> dict[str, ToolEntry]:
        """The current table. It is never mutated after publication, so no copy is needed."""
        return self._tools

    def get_entry(self, name: str) -> ToolEntry | None:
        return self._tools.get(name)

    def get_all_tool_names(self) -> list[str]:
        return sorted(self._tools)

    def get_schema(self, name: str) -> dict[str, Any] | None:
        entry = self._tools.get(name)
        return entry.schema if entry else None

    def get_toolset_for_tool(self, name: str) -> str | None:
        entry = self._tools.get(name)
        return entry.toolset if entry else None

    def get_emoji(self, name: str, default: str = "⚡") -> str:
        entry = self._tools.get(name)
        return (entry.emoji if entry else "") or default

    def get_max_result_size(self, name: str, default: float | None = None) -> float:
        entry = self._tools.get(name)
        if entry is not None and entry.max_result_size_chars is not None:
            return entry.max_result_size_chars
        return default if default is not None else DEFAULT_RESULT_SIZE_CHARS

    def get_tool_to_toolset_map(self) -> dict[str, str]:
        return {name: e.toolset for name, e in self._tools.items()}

    def get_registered_toolset_names(self) -> list[str]:
        return sorted({e.toolset for e in self._tools.values()})

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        toolset = self._aliases.get(toolset, toolset)
        return sorted(n for n, e in self._tools.items() if e.toolset == toolset)

    # -- availability --------------------------------------------------------------

    @property
    def check_ttl(self) -> float:
        """Seconds a `check_fn` result is kept."""
        return self._checks.ttl

    @check_ttl.setter
    def check_ttl(self, seconds: float) -> None:
        self._checks.ttl = seconds

    def invalidate_check_fn_cache(self) -> None:
        """Run every check again on the next read (a source's state changed)."""
        self._checks.invalidate()

    def availability(self, name: str) -> Availability:
        entry = self._tools.get(name)
        if entry is None:
            return Availability(False, f"no tool named '{name}' is registered")
        return _available(entry, self._checks, time.monotonic())

    def availability_report(self, names: Iterable[str] | None = None) -> dict[str, Availability]:
        """Tool name → availability (with the reason when unavailable), sorted by name."""
        tools, now, checks = self._tools, time.monotonic(), self._checks
        wanted = sorted(tools) if names is None else sorted(n for n in names if n in tools)
        return {n: _available(tools[n], checks, now) for n in wanted}

    def get_definitions(
        self, tool_names: Iterable[str], quiet: bool = False
    ) -> list[dict[str, Any]]:
        """OpenAI tool definitions for the available tools among `tool_names`, sorted by name.

        The definitions are shared between calls and read-only (see `definitions`).
        """
        generation = self._generation  # before the table: see _commit
        return self._definitions.get(
            tool_names, self._tools, generation, self._checks, time.monotonic()
        )

    def is_toolset_available(self, toolset: str) -> bool:
        names = self.get_tool_names_for_toolset(toolset)
        report = self.availability_report(names)
        return any(a.available for a in report.values())

    def check_toolset_requirements(self) -> dict[str, bool]:
        return {ts: self.is_toolset_available(ts) for ts in self.get_registered_toolset_names()}

    def get_available_toolsets(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        tools, now = self._tools, time.monotonic()
        for name, entry in tools.items():
            info = out.setdefault(
                entry.toolset,
                {"available": False, "tools": [], "description": "", "requirements": []},
            )
            info["tools"].append(name)
            available = _available(entry, self._checks, now)
            info["available"] = info["available"] or available.available
            for var in entry.requires_env:
                if var not in info["requirements"]:
                    info["requirements"].append(var)
        for info in out.values():
            info["tools"].sort()
        return out

    def check_tool_availability(self) -> tuple[list[str], list[dict[str, Any]]]:
        toolsets = self.get_available_toolsets()
        available = sorted(ts for ts, info in toolsets.items() if info["available"])
        unavailable = [
            {"name": ts, "env_vars": info["requirements"], "tools": info["tools"]}
            for ts, info in sorted(toolsets.items())
            if not info["available"]
        ]
        return available, unavailable

    # -- dispatch ------------------------------------------------------------------

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str | dict[str, Any]:
        """Run a tool and return its result. Never raises: failures become error results."""
        return dispatching.dispatch(self._tools.get(name), name, args, **kwargs)

    async def dispatch_async(
        self, name: str, args: dict[str, Any], *, thread_pool: Any = None, **kwargs: Any
    ) -> str | dict[str, Any]:
        """`dispatch` for an event loop (see `dispatch.dispatch_async`)."""
        return await dispatching.dispatch_async(
            self._tools.get(name), name, args, thread_pool=thread_pool, **kwargs
        )


def _available(entry: ToolEntry, checks: CheckCache, now: float) -> Availability:
    """A tool's availability: never with parameters that cannot be used (its check is not
    run), else as its check says."""
    if entry.schema_problem:
        return Availability(False, f"its schema cannot be used: {entry.schema_problem}")
    return checks.availability(entry.check_fn, entry.requires_env, now)


class _ModuleRegistry(ToolRegistry):
    """The module-level `registry` that Hermes-style code imports.

    The built-in tool modules register into it when imported. Inside a scope another
    registry opened (a plugin loading into a runtime's registry), every call on it acts
    on that registry instead, so a plugin's direct `registry.register(...)` reaches the
    runtime that loads it, as that plugin's.
    """

    def _target(self) -> ToolRegistry | None:
        scope = _scope.get()
        target = scope.registry if scope is not None else None
        return target if target is not None and target is not self else None


def _forwarded(name: str) -> Callable[..., Any]:
    method = getattr(ToolRegistry, name)

    @functools.wraps(method)
    def forward(self: _ModuleRegistry, *args: Any, **kwargs: Any) -> Any:
        target = self._target()
        return method(self if target is None else target, *args, **kwargs)

    return forward


for _name, _member in vars(ToolRegistry).items():
    if callable(_member) and not _name.startswith("_") and _name not in ("scope", "copy"):
        setattr(_ModuleRegistry, _name, _forwarded(_name))


registry: ToolRegistry = _ModuleRegistry()


def fresh_registry() -> ToolRegistry:
    """A registry of its own for a runtime: the module-level registry's tools as they are
    now (the built-in tools, once discovered)."""
    return registry.copy()
