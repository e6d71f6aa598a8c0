"""The plugin manager: every discovered plugin, its state, and loading, reloading, enabling.

Only enabled plugins run code (`plugins.enabled` / `plugins.disabled` in config.yaml, as in
Hermes; disabled wins). A project plugin runs code only as the person last trusted the
project (`trust`): one that is new or changed since is held, never imported or probed, and
a trusted plugin whose files changed is not reloaded (its old version stays) until a person
agrees. A plugin's registrations are committed in one step after its
`register` returns, so a plugin that raises leaves nothing behind, and a reload swaps its
old tools, hooks and middleware for the new ones atomically (Hermes's reload leaves the old
tools registered). A plugin can never replace another owner's tool, whatever its source (in
Hermes a pip plugin may); a refused registration is shown in its state.
"""

from __future__ import annotations

import builtins  # the class below has a method named list
import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.core import own_output
from workbench.core.config import Config, set_path, update_config
from workbench.core.plugins import children, loader
from workbench.core.plugins.context import PluginContext
from workbench.core.plugins.events import PluginChanged
from workbench.core.plugins.hooks import HookRegistry, hooks_line
from workbench.core.plugins.probe import ProbeFailed, Prober
from workbench.core.plugins.sources import (
    EntryPoints,
    PluginManifest,
    default_entry_points,
    discover,
)
from workbench.core.tools.events import ToolSource
from workbench.core.tools.memory import BUILTIN, MemoryProviders
from workbench.core.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)


class Trust(Protocol):
    """The project's trust (`workbench.core.trust.ProjectTrust`), as the manager asks it."""

    def rel(self, path: Path) -> str | None: ...
    def holds(self, rel: str) -> bool: ...
    def digests(self, rel: str) -> dict[str, str]: ...


HELD = "held"  # PluginChanged.status of a project plugin not (re)loaded: not as trusted
UNTRUSTED = (
    "new or changed since you last trusted this project: not loaded until you agree "
    "(`hermes-tui trust` shows the diff)"
)


@dataclass
class PluginState:
    manifest: PluginManifest
    status: str = "disabled"  # disabled, loaded, failed, shadowed, not loaded
    enabled: bool = False
    error: str = ""
    traceback: str = ""
    tools: list[str] = field(default_factory=list)
    memory_tools: list[str] = field(default_factory=list)  # a memory provider's, routed to it
    refused: list[tuple[str, str]] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    middleware: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    cli_commands: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    loads: int = 0
    last_change: str = ""
    committed: list[dict[str, Any]] = field(default_factory=list, repr=False)
    processes: list[children.Child] = field(default_factory=list)  # started as it loaded

    @property
    def key(self) -> str:
        return self.manifest.key

    @property
    def hooks_said(self) -> str:
        """Its hooks in a few words, those that run here and those that do not (hooks_line:
        what `plugins` prints)."""
        return hooks_line(self.hooks)

    @property
    def output(self) -> list[str]:
        """The last lines its code printed (stdout, fd 1): never hermes-tui's output."""
        return own_output.lines(self.key)


class PluginManager:
    def __init__(
        self,
        registry: ToolRegistry,
        hooks: HookRegistry,
        config: Config,
        *,
        home: Path,
        project: Path | None = None,
        entry_points: EntryPoints = default_entry_points,
        dispatcher: Callable[..., str] | None = None,
        on_event: Callable[[object], None] | None = None,
        memory: MemoryProviders | None = None,
        prober: Prober | None = None,
        not_loading: str = "",
        trust: Trust | None = None,
    ) -> None:
        self.registry = registry
        self.trust = trust  # the project's plugins load only as the person trusted them
        self.held: set[str] = set()  # project plugins not (re)loaded: not as trusted
        self.prober = prober  # when set, a plugin runs here only once a child survived it
        self.not_loading = not_loading  # why this manager loads nothing (safe mode...)
        self.hooks = hooks
        self.config = config
        self.home = home
        self.project = project
        self.entry_points = entry_points
        self.dispatcher = dispatcher
        self.on_event = on_event
        self.memory = memory or MemoryProviders(home)
        self.states: dict[str, PluginState] = {}
        self.shadowed: list[PluginState] = []
        self._lock = threading.RLock()  # one load or reload at a time

    # -- discovery and enablement ----------------------------------------------------

    def discover(self) -> list[PluginState]:
        winners, losers = discover(self.home, self.project, self.entry_points)
        with self._lock:
            previous = self.states
            self.states = {}
            for key, manifest in winners.items():
                state = previous.get(key)
                if state is None:  # new to this manager: what another one kept is not its
                    own_output.forget(key)
                    state = PluginState(manifest)
                state.manifest = manifest
                state.enabled = self.is_enabled(manifest)
                if state.status not in ("loaded", "failed"):
                    state.status = "disabled" if not state.enabled else "not loaded"
                    if state.enabled and self.not_loading:
                        state.error = self.not_loading
                    if manifest.kind == "exclusive" and not state.enabled:
                        state.status, state.error = "not loaded", self._not_selected()
                self.states[key] = state
            self.shadowed = [PluginState(m, status="shadowed") for m in losers]
        return self.list()

    def list(self) -> list[PluginState]:
        return sorted(
            [*self.states.values(), *self.shadowed], key=lambda s: (s.key, s.status == "shadowed")
        )

    def is_enabled(self, manifest: PluginManifest) -> bool:
        """Listed in plugins.enabled (by any of its names); a memory provider instead when
        memory.provider names it. Listed in plugins.disabled wins, as in Hermes."""
        names = manifest.aliases
        if names & set(_strings(self.config.get("plugins.disabled"))):
            return False
        if manifest.kind == "exclusive":
            return str(self.config.get("memory.provider") or BUILTIN) in names
        return bool(names & set(_strings(self.config.get("plugins.enabled"))))

    def memory_provider_plugins(self) -> builtins.list[PluginState]:
        return [s for s in self.states.values() if s.manifest.kind == "exclusive"]

    def select_memory_provider(self, name: str) -> PluginState | None:
        """Make `name` (a provider plugin's key or name, or "builtin") the one memory provider:
        persisted atomically as memory.provider; the previous provider's plugin is unloaded."""
        target = None
        if name != BUILTIN:
            target = next(
                (s for s in self.memory_provider_plugins() if name in (s.key, s.manifest.name)),
                None,
            )
            if target is None:
                known = ", ".join(s.key for s in self.memory_provider_plugins()) or "none"
                raise ValueError(f"no memory provider plugin '{name}' (found: {known})")
        update_config(lambda doc: set_path(doc, "memory.provider", name), self.config.path)
        from workbench.core.config import load_config

        self.config = load_config(self.config.path)
        self.memory.selected = name
        for state in self.memory_provider_plugins():
            state.enabled = state is target
            if state is not target and state.status == "loaded":
                self.unload(state.key, status="not loaded")
            if state is not target:
                state.status, state.error = "not loaded", self._not_selected()
        return self.load(target.key) if target is not None else None

    def load_enabled(self) -> builtins.list[PluginState]:
        wanted = [k for k, s in self.states.items() if s.enabled and s.status != "loaded"]
        if self.prober is not None and not self.not_loading:  # one child probes them all
            runs = [k for k in wanted if self._runs_code(self.states[k].manifest)]
            self._probe([k for k in runs if self.may_run(self.states[k].manifest)])
        for key in wanted:
            self.load(key)
        return self.list()

    def _runs_code(self, manifest: PluginManifest) -> bool:
        return manifest.kind != "exclusive" or self.is_enabled(manifest)

    def _probe(self, keys: builtins.list[str]) -> dict[str, Any]:
        assert self.prober is not None
        manifests = [self.states[k].manifest for k in keys]
        settings = {m.key: self._plugin_config(m) for m in manifests}
        return self.prober.check(manifests, settings)

    def find(self, name: str) -> PluginState:
        """The plugin `name` means: its key, else the one plugin whose manifest's name or
        folder it is, else the one category plugin whose last part it is (Hermes resolves
        `hermes plugins enable NAME` the same way, without the folder)."""
        state = self.states.get(name)
        if state is not None:
            return state
        for matches in (
            [s for s in self.states.values() if name in s.manifest.aliases],
            [s for s in self.states.values() if s.key.rpartition("/")[2] == name],
        ):
            if len(matches) == 1:
                return matches[0]
            if matches:
                keys = ", ".join(sorted(s.key for s in matches))
                raise KeyError(f"'{name}' could be any of the plugins {keys}: give its key")
        raise KeyError(f"no plugin '{name}' (see `hermes-tui plugins list`)")

    def set_enabled(self, name: str, enabled: bool) -> PluginState:
        """Enable or disable a plugin, persisted atomically; loads or unloads it now.

        What is written is what Hermes reads: the plugin's key goes in plugins.enabled or
        plugins.disabled, and every name of it leaves the other list (Hermes's disable
        leaves a folder's name in plugins.enabled, which it ignores and we would not)."""
        state = self.find(name)
        key = state.key
        others = {a for s in self.states.values() if s is not state for a in s.manifest.aliases}
        aliases = {key} | (state.manifest.aliases - others)  # never another plugin's name

        def mutate(doc: Any) -> None:
            plugins = doc.get("plugins") if isinstance(doc.get("plugins"), dict) else {}
            on = [k for k in _strings(plugins.get("enabled")) if k not in aliases]
            off = [k for k in _strings(plugins.get("disabled")) if k not in aliases]
            (on if enabled else off).append(key)
            set_path(doc, "plugins.enabled", on)
            set_path(doc, "plugins.disabled", off)

        update_config(mutate, self.config.path)
        from workbench.core.config import load_config

        self.config = load_config(self.config.path)
        state.enabled = enabled
        if enabled and state.manifest.kind != "exclusive" and not self.is_enabled(state.manifest):
            state.enabled = False  # plugins.disabled still names it, by a name it shares
            shared = state.manifest.aliases & set(_strings(self.config.get("plugins.disabled")))
            state.error = f"still disabled: plugins.disabled lists {', '.join(sorted(shared))}"
            return state
        if enabled:
            if self.prober is not None:
                self.prober.forget(key)  # enabling again is asking to try again
            return self.load(key)
        self.unload(key)
        return state

    # -- loading -----------------------------------------------------------------------

    def load(self, key: str) -> PluginState:
        """Import and register a plugin; on any failure the plugin's previous tools stay."""
        with self._lock:
            state = self.states[key]
            manifest = state.manifest
            if manifest.kind == "exclusive" and not self.is_enabled(manifest):
                state.status, state.error = "not loaded", self._not_selected()
                return state
            if self.not_loading:
                state.status, state.error = "not loaded", self.not_loading
                return state
            if not self.may_run(manifest):  # before the probe too: it runs the plugin's code
                return self._held(state)
            if self.prober is not None:
                verdict = self._probe([key])[key]
                if not verdict.ok:
                    return self._failed(state, ProbeFailed(verdict.error))
            old_modules = loader.take_modules(manifest) if manifest.source != "entrypoint" else {}
            ctx = PluginContext(
                manifest, config=self._plugin_config(manifest), dispatcher=self.dispatcher
            )
            own_output.claim(key, _code_of(manifest))
            born: list[children.Child] = []
            try:
                # The plugin's own code runs inside: what it registers on the module-level
                # registry, on import too, is its own and is committed with ctx's tools;
                # what it prints is its output; the processes it starts are its own.
                with (
                    own_output.speaking(key),
                    children.watching() as born,
                    self.registry.scope(
                        ToolSource.PLUGIN,
                        key,
                        may_override=self._may_override(manifest),
                        record=ctx.recording.tools.append,
                    ),
                ):
                    loader.load_register(manifest)(ctx)
            except BaseException as exc:  # SystemExit from a plugin must not end the app
                if manifest.source != "entrypoint":
                    loader.take_modules(manifest)  # drop what the failed import left
                loader.restore_modules(old_modules)
                _stop(key, born)  # a failed load leaves nothing behind
                return self._failed(state, exc)
            previous, state.processes = state.processes, born
            _stop(key, previous)  # the version it replaces: its processes go with it
            return self._commit(state, ctx)

    def reload(self, name: str) -> PluginState:
        return self.load(self.find(name).key)

    def may_run(self, manifest: PluginManifest) -> bool:
        """Not a project plugin, or one whose files are as the person last trusted them,
        which is then guarded: the loader compiles only the sources trusted. With no trust
        to ask, a project plugin never runs."""
        if manifest.source != "project":
            return True
        if self.trust is None or manifest.path is None:
            return False
        rel = self.trust.rel(manifest.path)
        if rel is None or not self.trust.holds(rel):
            return False
        manifest.trusted = self.trust.digests(rel)
        loader.guard(manifest.path, manifest.trusted)
        return True

    def load_held(self) -> builtins.list[PluginState]:
        """The person trusted the project: each plugin held since loads, or reloads."""
        for key in sorted(self.held):
            state = self.states.get(key)
            if state is not None and state.enabled:
                self.load(key)
        return self.list()

    def _held(self, state: PluginState) -> PluginState:
        """Not as trusted: never loaded; a loaded one keeps the version that was trusted."""
        self.held.add(state.key)
        if state.status == "loaded":
            state.last_change = f"not reloaded: its files are {UNTRUSTED}"
        else:
            state.status, state.error = "not loaded", UNTRUSTED
        self._emit(PluginChanged(state.key, HELD, error=UNTRUSTED))
        logger.info("plugin %s held: %s", state.key, UNTRUSTED)
        return state

    def unload(self, key: str, status: str = "disabled") -> PluginState:
        with self._lock:
            state = self.states.get(key) or next(s for s in self.shadowed if s.key == key)
            swap = self.registry.replace_owner(ToolSource.PLUGIN, key, [])
            self.hooks.remove_owner(key)
            self.memory.remove(key)
            state.memory_tools = []
            loader.take_modules(state.manifest)
            _stop(key, state.processes)
            state.processes = []
            state.status, state.tools, state.hooks, state.middleware, state.committed = (
                status,
                [],
                [],
                [],
                [],
            )
            state.last_change = f"{status}: removed {', '.join(swap.removed) or 'nothing'}"
        self._emit(PluginChanged(key, status, removed=swap.removed))
        return state

    def stop(self) -> None:
        """hermes-tui stops: every process a plugin started as it loaded is stopped."""
        with self._lock:
            for state in [*self.states.values(), *self.shadowed]:
                _stop(state.key, state.processes)
                state.processes = []

    def remove(self, key: str) -> None:
        """The plugin's directory is gone: its tools go, and so does the entry."""
        if key in self.states:
            self.unload(key, status="removed")
            with self._lock:
                self.states.pop(key, None)

    def _commit(self, state: PluginState, ctx: PluginContext) -> PluginState:
        recording, key = ctx.recording, state.key
        if state.manifest.kind == "exclusive":
            problem = self._install_provider(key, recording.memory_providers)
            if problem:
                return self._failed(state, RuntimeError(problem))
        swap = self.registry.replace_owner(
            ToolSource.PLUGIN, key, recording.tools, may_override=self._may_override(state.manifest)
        )
        self.hooks.replace_owner(key, recording.hooks, recording.middleware)
        verb = "reloaded" if state.loads else "loaded"
        self.held.discard(key)
        state.loads += 1
        state.status, state.error, state.traceback = "loaded", "", ""
        state.tools = sorted(set(swap.added) | set(swap.replaced))
        state.refused = list(swap.refused)
        state.hooks = sorted({name for name, _ in recording.hooks})
        state.middleware = sorted({kind for kind, _ in recording.middleware})
        state.commands, state.cli_commands = recording.commands, recording.cli_commands
        state.skills, state.other, state.warnings = (
            recording.skills,
            sorted(set(recording.other)),
            recording.warnings,
        )
        if state.manifest.kind == "exclusive":  # its tools, and any whose names it may not take
            state.memory_tools = self.memory.registry().get_all_tool_names()
            state.warnings = [*state.warnings, *self.memory.problems]
        state.committed = recording.tools
        state.last_change = _describe(verb, swap)
        self._emit(PluginChanged(key, verb, swap.added, swap.removed, swap.replaced, swap.refused))
        logger.info("plugin %s %s", key, state.last_change)
        return state

    def _not_selected(self) -> str:
        selected = str(self.config.get("memory.provider") or BUILTIN)
        return (
            f"a memory provider: only the one memory.provider names is active (now: {selected}); "
            "select this one with `hermes-tui plugins memory NAME` or the command palette"
        )

    def _install_provider(self, key: str, providers: builtins.list[Any]) -> str:
        if len(providers) != 1:
            return f"a memory provider plugin must register one provider (it registered {len(providers)})"
        problems = self.memory.install(key, providers[0])
        return "; ".join(problems)

    def _failed(self, state: PluginState, exc: BaseException) -> PluginState:
        state.status = "failed"
        state.error = str(exc) if isinstance(exc, ProbeFailed) else f"{type(exc).__name__}: {exc}"
        state.traceback = "".join(traceback.format_exception(exc))
        if not state.loads:  # nothing committed before: direct registry calls are rolled back
            self.registry.replace_owner(ToolSource.PLUGIN, state.key, [])
        else:  # keep the last good tools (direct registry calls may have touched them)
            self.registry.replace_owner(
                ToolSource.PLUGIN,
                state.key,
                state.committed,
                may_override=self._may_override(state.manifest),
            )
        state.last_change = f"failed at {time.strftime('%H:%M:%S')}: {state.error}"
        self._emit(PluginChanged(state.key, "failed", error=state.error))
        logger.warning("plugin %s failed: %s", state.key, state.error)
        return state

    # -- helpers -----------------------------------------------------------------------

    def _plugin_config(self, manifest: PluginManifest) -> dict[str, Any]:
        entries = self.config.get("plugins.entries") or {}
        if not isinstance(entries, dict):
            return {}
        names = (manifest.key, manifest.name, manifest.folder)
        section = next((entries[n] for n in names if n and entries.get(n)), None)
        return section if isinstance(section, dict) else {}

    def _may_override(self, manifest: PluginManifest) -> bool:
        return self._plugin_config(manifest).get("allow_tool_override") is True

    def key_for_path(self, path: Path) -> str | None:
        """The directory plugin a changed file belongs to."""
        path = Path(path)
        for key, state in self.states.items():
            root = state.manifest.path
            if root is not None and (path == root or root in path.parents):
                return key
        return None

    def watch_roots(self) -> builtins.list[Path]:
        roots = {
            s.manifest.path.parent for s in self.states.values() if s.manifest.path is not None
        }
        roots.add(self.home / "plugins")
        return sorted(r for r in roots if r.is_dir())

    def _emit(self, event: object) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                logger.exception("plugin event listener failed")


def _code_of(manifest: PluginManifest) -> str:
    """The modules whose code is the plugin's: a directory plugin's namespace, a pip
    plugin's package."""
    if manifest.source != "entrypoint":
        return loader.module_name(manifest)
    return manifest.entry_point.partition(":")[0].strip().partition(".")[0]


def _stop(key: str, processes: builtins.list[children.Child]) -> None:
    for child in children.stop(processes):
        logger.info("plugin %s: stopped process %d (%s)", key, child.pid, child.command)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _describe(verb: str, swap: Any) -> str:
    parts = [
        f"{label} {', '.join(names)}"
        for label, names in (
            ("added", swap.added),
            ("removed", swap.removed),
            ("replaced", swap.replaced),
        )
        if names
    ]
    if swap.refused:
        parts.append("refused " + ", ".join(name for name, _ in swap.refused))
    return f"{verb}: " + ("; ".join(parts) if parts else "no tools")
