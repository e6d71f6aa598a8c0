"""The tool registry: one table of every tool, whatever its source.

Compatible with Hermes's `tools/registry.py` contract: the same `register` signature and
positional order, the same result and error shapes. Where Hermes
is weak it does better:

* a refused registration raises `ToolRegistrationError` and is announced to listeners
  (Hermes logs it and returns None);
* every tool knows its source (builtin, mcp, plugin) and owner; only its owner may replace
  or remove it, and only the MCP manager may touch `mcp-*` toolsets;
* the table is copy-on-write: readers take a snapshot reference and never iterate live state;
* `check_fn` results are cached for a short TTL with no "grace" that keeps advertising a
  failing tool, and the cache is pruned to live callables (Hermes's is keyed by callable,
  and MCP makes new ones on each refresh, so it only grows);
* `dispatch` turns every exception a handler raises, `SystemExit` included, into an error
  result (in Hermes a handler's `SystemExit` escapes `dispatch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from workbench.core.events import ChangeKind, RegistryChanged, ToolSource
from workbench.core.tools import errors

logger = logging.getLogger(__name__)

DEFAULT_RESULT_SIZE_CHARS = 100_000
DEFAULT_CHECK_TTL_SECONDS = 5.0

# Names the agent loop answers itself (Tool Search bridge); a tool registered under one of
# them would be unreachable, so they are refused outright.
RESERVED_NAMES = frozenset({"tool_search", "tool_describe", "tool_call"})

Handler = Callable[..., Any]
CheckFn = Callable[[], Any]
Listener = Callable[[RegistryChanged], None]


class ToolRegistrationError(PermissionError):
    """A registration or removal the registry refused; the message says why."""


class ToolUnavailable(Exception):
    """Raised by a `check_fn` to say the tool is unavailable and why."""


@dataclass(frozen=True, slots=True)
class Availability:
    available: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Scope:
    source: ToolSource
    owner: str
    may_override: bool = False


# Set by the plugin loader and the MCP manager around the code they run, so every
# registration made inside is attributed to them, whatever the code claims.
_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "registry_scope", default=None
)


class ToolEntry:
    """One registered tool. Hermes's 11 fields, plus its source and owner."""

    __slots__ = (
        "annotations",
        "check_fn",
        "description",
        "dynamic_schema_overrides",
        "emoji",
        "function",
        "handler",
        "interactive",
        "is_async",
        "max_result_size_chars",
        "name",
        "owner",
        "parallel_safe",
        "path_args",
        "requires_env",
        "schema",
        "source",
        "toolset",
        "untrusted",
    )

    def __init__(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Handler,
        check_fn: CheckFn | None,
        requires_env: list[str] | None,
        is_async: bool,
        description: str,
        emoji: str,
        max_result_size_chars: float | None,
        dynamic_schema_overrides: Callable[[], dict[str, Any]] | None,
        source: ToolSource,
        owner: str,
        path_args: dict[str, str] | None = None,
        parallel_safe: bool = False,
        interactive: bool = False,
        annotations: dict[str, Any] | None = None,
        untrusted: bool = False,
    ) -> None:
        self.name = name
        self.toolset = toolset
        self.schema = schema
        self.handler = handler
        self.check_fn = check_fn
        self.requires_env = list(requires_env or [])
        self.is_async = is_async
        self.description = description or str(schema.get("description", ""))
        self.emoji = emoji
        self.max_result_size_chars = max_result_size_chars
        self.dynamic_schema_overrides = dynamic_schema_overrides
        self.source = source
        self.owner = owner
        # Scheduling hints: path arguments and whether each is read or written, whether the
        # tool may run beside others, whether it asks the user (never in parallel).
        self.path_args = dict(path_args or {})
        self.parallel_safe = parallel_safe
        self.interactive = interactive
        # What an MCP server says of its tool (readOnlyHint, destructiveHint, idempotentHint,
        # openWorldHint, title), and whether its server is `trust: untrusted`.
        self.annotations = dict(annotations or {})
        self.untrusted = untrusted
        # The OpenAI function object, built once; get_definitions copies it.
        self.function = {**schema, "name": name}

    def __repr__(self) -> str:
        return f"ToolEntry({self.name!r}, toolset={self.toolset!r}, source={self.source.value})"


@dataclass(slots=True)
class _CheckResult:
    ok: bool
    reason: str
    expires: float


class ToolRegistry:
    """Thread-safe registry. Mutations hold the lock; reads use immutable snapshots."""

    def __init__(self, check_ttl: float = DEFAULT_CHECK_TTL_SECONDS) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, ToolEntry] = {}
        self._aliases: dict[str, str] = {}
        self._generation = 0
        self._listeners: list[Listener] = []
        self._check_cache: dict[CheckFn, _CheckResult] = {}
        self.check_ttl = check_ttl

    # -- attribution ---------------------------------------------------------------

    @staticmethod
    @contextlib.contextmanager
    def scope(source: ToolSource, owner: str, *, may_override: bool = False) -> Iterator[None]:
        """Attribute every registration made inside to `source`/`owner`."""
        token = _scope.set(_Scope(ToolSource(source), owner, may_override))
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
    ) -> ToolEntry:
        """Register a tool (Hermes's positional order); `ToolRegistrationError` if refused."""
        scope = _scope.get()
        if scope is not None:
            src, who, may_override = scope.source, scope.owner, scope.may_override
        else:
            src = ToolSource(source) if source else ToolSource.BUILTIN
            who = owner or getattr(handler, "__module__", None) or "unknown"
            may_override = src is ToolSource.BUILTIN
        entry = ToolEntry(
            name,
            toolset,
            dict(schema or {}),
            handler,
            check_fn,
            requires_env,
            is_async,
            description,
            emoji,
            max_result_size_chars,
            dynamic_schema_overrides,
            src,
            who,
            path_args,
            parallel_safe,
            interactive,
        )
        with self._lock:
            existing = self._tools.get(name)
            refusal = self._refusal(entry, existing, override and may_override)
            if refusal is None:
                tools = dict(self._tools)
                tools[name] = entry
                self._commit(tools)
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

    def _refusal(self, new: ToolEntry, old: ToolEntry | None, override: bool) -> str | None:
        """Why `new` may not be registered, or None if it may."""
        if not new.name or not isinstance(new.name, str):
            return "a tool needs a non-empty string name"
        if new.name in RESERVED_NAMES:
            return f"'{new.name}' is reserved for the agent's tool-search bridge"
        if not callable(new.handler):
            return f"tool '{new.name}': handler is not callable"
        if new.toolset.startswith("mcp-") and new.source is not ToolSource.MCP:
            return (
                f"tool '{new.name}': toolset '{new.toolset}' is reserved for MCP servers; "
                f"{new.source.value} '{new.owner}' may not register into it"
            )
        if old is None or (old.source, old.owner) == (new.source, new.owner):
            return None
        if override and old.source is not ToolSource.MCP:
            # An explicit, permitted override (built-in code, or a plugin the user opted in).
            return None
        return (
            f"tool '{new.name}' is already registered by {old.source.value} '{old.owner}' "
            f"(toolset '{old.toolset}'); refused registration from {new.source.value} "
            f"'{new.owner}' (toolset '{new.toolset}')"
        )

    def deregister(self, name: str) -> bool:
        """Remove a tool. Inside a scope, only the tool's own owner may remove it."""
        scope = _scope.get()
        with self._lock:
            entry = self._tools.get(name)
            if entry is None:
                return False
            if scope is not None and (entry.source, entry.owner) != (scope.source, scope.owner):
                reason = (
                    f"{scope.source.value} '{scope.owner}' may not remove tool '{name}' "
                    f"owned by {entry.source.value} '{entry.owner}'"
                )
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
                reason = ""
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
        if reason:
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
        entries = [self._entry(r, src, owner) for r in registrations]
        with self._lock:
            old = {n: e for n, e in self._tools.items() if (e.source, e.owner) == (src, owner)}
            tools = {n: e for n, e in self._tools.items() if n not in old}
            accepted, refused = [], []
            for entry, reg in zip(entries, registrations, strict=True):
                override = bool(reg.get("override")) and may_override
                why = self._refusal(entry, tools.get(entry.name), override)
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

    def _entry(self, reg: dict[str, Any], source: ToolSource, owner: str) -> ToolEntry:
        return ToolEntry(
            reg["name"],
            reg["toolset"],
            dict(reg.get("schema") or {}),
            reg["handler"],
            reg.get("check_fn"),
            reg.get("requires_env"),
            bool(reg.get("is_async")),
            reg.get("description") or "",
            reg.get("emoji") or "",
            reg.get("max_result_size_chars"),
            reg.get("dynamic_schema_overrides"),
            source,
            owner,
            reg.get("path_args"),
            bool(reg.get("parallel_safe")),
            bool(reg.get("interactive")),
            reg.get("annotations"),
            bool(reg.get("untrusted")),
        )

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
        """Publish a new table (caller holds the lock) and prune the check cache to it."""
        self._tools = tools
        self._generation += 1
        live = {e.check_fn for e in tools.values() if e.check_fn is not None}
        cache = dict(self._check_cache)  # copied in one step: readers add to it unlocked
        if any(fn not in live for fn in cache):
            self._check_cache = {fn: r for fn, r in cache.items() if fn in live}

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

    def invalidate_check_fn_cache(self) -> None:
        self._check_cache = {}

    def _run_check(self, fn: CheckFn, now: float) -> _CheckResult:
        cached = self._check_cache.get(fn)
        if cached is not None and cached.expires > now:
            return cached
        try:
            ok, reason = bool(fn()), ""
            if not ok:
                reason = f"{_check_name(fn)} returned False"
        except BaseException as exc:  # a check that raises means unavailable, whatever it raised
            ok = False
            reason = (
                str(exc) if isinstance(exc, ToolUnavailable) else f"{type(exc).__name__}: {exc}"
            )
        result = _CheckResult(ok, reason, now + self.check_ttl)
        self._check_cache[fn] = result
        return result

    def _availability(self, entry: ToolEntry, now: float) -> Availability:
        fn = entry.check_fn
        if fn is None:
            return _AVAILABLE
        result = self._run_check(fn, now)
        if result.ok:
            return _AVAILABLE
        missing = [v for v in entry.requires_env if not os.environ.get(v)]
        if missing and result.reason.endswith(" returned False"):
            return Availability(False, "missing environment variable: " + ", ".join(missing))
        return Availability(False, result.reason)

    def availability(self, name: str) -> Availability:
        entry = self._tools.get(name)
        if entry is None:
            return Availability(False, f"no tool named '{name}' is registered")
        return self._availability(entry, time.monotonic())

    def availability_report(self, names: Iterable[str] | None = None) -> dict[str, Availability]:
        """Tool name → availability (with the reason when unavailable), sorted by name."""
        tools, now = self._tools, time.monotonic()
        wanted = sorted(tools) if names is None else sorted(n for n in names if n in tools)
        return {n: self._availability(tools[n], now) for n in wanted}

    def get_definitions(self, tool_names: Iterable[str], quiet: bool = False) -> list[dict]:
        """OpenAI tool definitions for the available tools among `tool_names`, sorted by name."""
        tools, now, checks = self._tools, time.monotonic(), self._check_cache
        out = []
        for name in sorted(tool_names):
            entry = tools.get(name)
            if entry is None:
                continue
            fn = entry.check_fn
            if fn is not None:
                # Inlined cache hit: this loop runs over every tool on every model request.
                result = checks.get(fn)
                if result is None or result.expires <= now:
                    result = self._run_check(fn, now)
                if not result.ok:
                    continue
            function = entry.function.copy()
            if entry.dynamic_schema_overrides is not None:
                function = self._apply_overrides(entry, function)
            out.append({"type": "function", "function": function})
        return out

    @staticmethod
    def _apply_overrides(entry: ToolEntry, function: dict) -> dict:
        try:
            extra = entry.dynamic_schema_overrides()  # type: ignore[misc]
        except Exception:
            logger.exception(
                "dynamic schema overrides of %s failed; using the static schema", entry.name
            )
            return function
        if isinstance(extra, dict):
            function.update(extra)
            function["name"] = entry.name
        return function

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
            info["available"] = info["available"] or self._availability(entry, now).available
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

    def dispatch(self, name: str, args: dict, **kwargs: Any) -> str | dict:
        """Run a tool and return its result. Never raises: failures become error results."""
        entry = self._tools.get(name)
        if entry is None:
            return errors.unknown_tool(name)
        try:
            if entry.is_async:
                result = run_coroutine_sync(entry.handler(args, **kwargs))
            else:
                result = entry.handler(args, **kwargs)
        except BaseException as exc:
            logger.warning("tool %s raised %s: %s", name, type(exc).__name__, exc)
            return errors.execution_failed(exc)
        return _check_result(name, result)

    async def dispatch_async(
        self, name: str, args: dict, *, thread_pool: Any = None, **kwargs: Any
    ) -> str | dict:
        """`dispatch` for an event loop: async handlers are awaited, sync ones run in a thread
        (of `thread_pool` when given, else the loop's default executor).

        Cancellation of the awaiting task propagates (the caller's interrupt), everything
        else becomes an error result.
        """
        entry = self._tools.get(name)
        if entry is None:
            return errors.unknown_tool(name)
        try:
            if entry.is_async:
                result = await entry.handler(args, **kwargs)
            else:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    thread_pool, _call_guarded, entry.handler, args, kwargs
                )
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            logger.warning("tool %s raised %s: %s", name, type(exc).__name__, exc)
            return errors.execution_failed(exc)
        if isinstance(result, _Raised):
            return errors.execution_failed(result.exc)
        return _check_result(name, result)


_AVAILABLE = Availability(True)


def _check_name(fn: CheckFn) -> str:
    name = getattr(fn, "__name__", "")
    return f"{name}()" if name and name != "<lambda>" else "check_fn"


@dataclass(frozen=True, slots=True)
class OwnerSwap:
    """What `replace_owner` changed, and what it refused (name, reason)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class _Raised:
    exc: BaseException


def _call_guarded(handler: Handler, args: dict, kwargs: dict) -> Any:
    """Run a sync handler in a worker thread, keeping SystemExit from killing the thread."""
    try:
        return handler(args, **kwargs)
    except BaseException as exc:
        return _Raised(exc)


def _check_result(name: str, result: Any) -> str | dict:
    if isinstance(result, str):
        return result
    if (
        isinstance(result, dict)
        and result.get("_multimodal") is True
        and isinstance(result.get("content"), list)
    ):
        return result
    return errors.result_contract(name, result)


_thread_loops = threading.local()


def run_coroutine_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, inside a running loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_thread_loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = _thread_loops.loop = asyncio.new_event_loop()
        return loop.run_until_complete(coro)
    # A loop is running in this thread: it cannot be re-entered, so use a fresh thread.
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=runner, name="tool-async-bridge", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


registry = ToolRegistry()
