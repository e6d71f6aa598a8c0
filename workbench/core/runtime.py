"""Everything a front end needs from the core, loaded once: home, config, tools, toolsets."""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.asking import Asker
from workbench.core.config import Config, ensure_home, hermes_home, load_config
from workbench.core.plugins.hooks import HOOK_TIMEOUT, HookRegistry
from workbench.core.storage.private import private_file_handler
from workbench.core.tools.discovery import DiscoveryReport, discover_builtin_tools
from workbench.core.tools.events import ToolSource
from workbench.core.tools.memory import BUILTIN, MEMORY_TOOLSET, MemoryProviders
from workbench.core.tools.registry import ToolRegistry, fresh_registry
from workbench.core.tools.switches import REASON as DISABLED_REASON
from workbench.core.tools.switches import disabled_tools, refusal
from workbench.core.tools.toolsets import (
    AGENT_TOOLS,
    AGENT_TOOLSETS,
    LEAN_OPT_IN,
    ToolsetChoices,
    Toolsets,
)

if TYPE_CHECKING:
    from workbench.core.agent.session_index import SessionIndex
    from workbench.core.backends import Backend
    from workbench.core.checkpoints import CheckpointStore
    from workbench.core.checkpoints.turns import TurnCheckpoints
    from workbench.core.execution.approval import ApprovalBroker
    from workbench.core.execution.executor import Executor
    from workbench.core.history import CallHistory
    from workbench.core.mcp import MCPManager
    from workbench.core.plugins import PluginManager
    from workbench.core.trust import Change, ProjectTrust


@dataclass
class Runtime:
    home: Path
    config: Config
    registry: ToolRegistry
    toolsets: Toolsets
    discovery: DiscoveryReport
    home_problems: list[str] = field(default_factory=list)
    plugins: PluginManager | None = None  # None in safe mode (HERMES_SAFE_MODE)
    broker: ApprovalBroker | None = None  # set by the front end that can ask the user
    asker: Asker = field(default_factory=Asker)  # every question to a person waits here
    mcp: MCPManager | None = None  # started by start_mcp(), in the background
    hooks: HookRegistry = field(default_factory=HookRegistry)  # the plugins' hooks, middleware
    memory: MemoryProviders = field(init=False)  # the active memory provider's tools
    _index: SessionIndex | None = field(default=None, init=False, repr=False)
    _history: CallHistory | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # how long one plugin hook callback may take before it is abandoned
        self.hooks.timeout = _positive(self.config.get("plugins.hook_timeout")) or HOOK_TIMEOUT
        self.memory = MemoryProviders(self.home, reserved=self._taken)
        self.memory.selected = str(self.config.get("memory.provider") or BUILTIN)

    def _taken(self, name: str) -> bool:
        """A memory provider's tool may not take the name of a shared or a session tool."""
        from workbench.core.agent.own_tools import OWN_TOOL_NAMES

        return self.registry.get_entry(name) is not None or name in OWN_TOOL_NAMES

    @property
    def session_index(self) -> SessionIndex:
        if self._index is None:
            from workbench.core.agent.session_index import SessionIndex

            self._index = SessionIndex(self.home)
        return self._index

    @property
    def history(self) -> CallHistory:
        """Every tool's calls, kept across restarts (`state/history/`)."""
        if self._history is None:
            from workbench.core.history import CallHistory

            self._history = CallHistory(self.home / "state" / "history")
        return self._history

    @property
    def choices(self) -> ToolsetChoices:
        return ToolsetChoices.from_config(self.config)

    def untrusted(self, cwd: str | None = None) -> list[tuple[ProjectTrust, tuple[Change, ...]]]:
        """The projects whose plugins and rules this session would use, but not all of them,
        since they are not as the person last trusted them: the plugins' project (where
        hermes-tui started) and the rules' (the tools' working directory, `cwd`). Empty when
        project plugins and rules are not used at all (HERMES_ENABLE_PROJECT_PLUGINS)."""
        found: dict[Path, tuple[ProjectTrust, tuple[Change, ...]]] = {}
        for project in (Path.cwd(), Path(cwd) if cwd else Path.cwd()):
            trust = project_trust(self.home, project)
            if trust is not None and trust.project not in found:
                changes = trust.changes()
                if changes:
                    found[trust.project] = (trust, changes)
        return list(found.values())

    def trusted_now(self) -> None:
        """A person trusted the project: its plugins held load, its rules are read again."""
        if self.plugins is not None:
            self.plugins.load_enabled()
            self.plugins.load_held()  # a trusted plugin whose change was not reloaded
        if self.broker is not None:
            self.broker.book.reload()

    def reload_config(self) -> None:
        self.config = load_config(self.config.path)

    def start_mcp(self, on_event: Callable[[object], None] | None = None) -> MCPManager | None:
        """Start every configured MCP server in the background (returns at once)."""
        if self.mcp is not None or safe_mode():
            return self.mcp
        from workbench.core.mcp import MCPManager, ServerAsks

        self.mcp = MCPManager.from_config(
            self.registry,
            self.config.get("mcp_servers"),
            log_dir=self.home / "logs",
            documents=self.home / "cache" / "documents",  # Hermes's folder for them
            on_event=on_event,
            asks=ServerAsks(asker=self.asker),  # a server's questions wait like the rest
        )
        self.mcp.start()
        return self.mcp

    def stop_mcp(self) -> None:
        if self.mcp is not None:
            self.mcp.stop()
            self.mcp = None

    def stop(self) -> None:
        """hermes-tui stops: the MCP servers, and the processes plugins started as they
        loaded (in Hermes they outlive the command that loaded them)."""
        self.stop_mcp()
        if self.plugins is not None:
            self.plugins.stop()

    def backend(self) -> Backend:
        """Where terminal and file calls run, from `terminal.*` in config.yaml."""
        from workbench.core.backends import backend_from_config

        return backend_from_config(self.config, self.home)

    def results_dir(self) -> Path:
        return self.home / "state" / "results"

    def executor(
        self,
        *,
        broker: ApprovalBroker | None,
        session_id: str | None = None,
        cwd: str | None = None,
        on_event: Callable[[object], None] | None = None,
    ) -> Executor:
        """An executor configured from config.yaml (timeouts, workers, budgets, spill dir)."""
        from workbench.core.execution.budget import BudgetConfig, SpillStore
        from workbench.core.execution.executor import DEFAULT_TIMEOUT, DEFAULT_WORKERS, Executor

        get = self.config.get
        timeouts = get("tools.timeouts") or {}
        session_id = session_id or new_session_id()
        backend = self.backend()
        return Executor(
            self.registry,
            broker=broker,
            budget=BudgetConfig.for_context_window(_positive(get("model.context_window"))),
            store=SpillStore(self.results_dir(), session_id),
            session_id=session_id,
            cwd=cwd or os.getcwd(),
            max_workers=int(_positive(get("tools.max_workers")) or DEFAULT_WORKERS),
            timeout=float(_positive(get("tools.timeout")) or DEFAULT_TIMEOUT),
            tool_timeouts={str(k): float(v) for k, v in timeouts.items() if _positive(v)}
            if isinstance(timeouts, dict)
            else {},
            on_event=on_event,
            hooks=self.hooks,
            write_roots=write_roots(self.config),
            backend=backend,
            switched_off=self.off_tools,
            checkpoints=self.turn_checkpoints(session_id) if backend.remote is None else None,
        )

    def checkpoints(self) -> CheckpointStore:
        """The checkpoint store, with the `checkpoints:` settings of config.yaml."""
        from workbench.core.checkpoints import CheckpointStore

        return CheckpointStore(self.home, self.config)

    def turn_checkpoints(self, session_id: str | None = None) -> TurnCheckpoints:
        """An executor's checkpoints: one snapshot a turn before the first change."""
        from workbench.core.checkpoints.turns import TurnCheckpoints

        return TurnCheckpoints(self.checkpoints(), session_id)

    def dispatch_for_plugins(self, name: str, args: dict[str, Any], **_: object) -> str:
        """`ctx.dispatch_tool`: the same pipeline as the agent, approvals included (Hermes's
        skips hooks, approvals and budgets)."""
        from workbench.core.tools.dispatch import run_coroutine_sync

        executor = self.executor(broker=self.broker)
        try:
            (outcome,) = run_coroutine_sync(
                executor.run([{"id": "plugin", "name": name, "arguments": args}])
            )
        finally:
            executor.shutdown()
        content = outcome.content
        return content if isinstance(content, str) else str(content)

    def effective_tools(self, config: Config | None = None, *, lean: bool = False) -> list[str]:
        """The tools the model would be offered now (or with another `config`): those no
        switch leaves off (`off_tools`), available now; the agent's own among them (which
        of those a session has is its own: a sub-agent asks no one, core.agent.own_tools).
        None while config.yaml cannot be read (`switches_unknown`). `lean`: for a small
        model's profile, without the toolsets it gets only when named (LEAN_OPT_IN)."""
        config = config or self.config
        if config.error:
            return []
        on, _ = self._switches(config)
        if lean:
            on = [n for n in on if not self._held_from_lean(n, config)]
        report = self.registry.availability_report(on)
        agent = self.agent_tools()
        mine = [n for n in on if n in agent and n not in report]
        return sorted([*(n for n, a in report.items() if a.available), *mine])

    def _held_from_lean(self, name: str, config: Config) -> bool:
        """A tool of a toolset the lean profile leaves out unless platform_toolsets.cli
        names it (skills: a small model keeps its short set of tools)."""
        entry = self.registry.get_entry(name)
        if entry is None or entry.toolset not in LEAN_OPT_IN:
            return False
        return entry.toolset not in (ToolsetChoices.from_config(config).enabled or ())

    def agent_tools(self) -> dict[str, str]:
        """The agent's own tools → their toolset: the session's (todo, clarify,
        session_search, delegate_task) and the active memory provider's (all in `memory`)."""
        own = {t: ts for t, ts in AGENT_TOOLS.items() if ts != MEMORY_TOOLSET}
        provider = self.memory.registry().get_all_tool_names()
        return {**own, **dict.fromkeys(provider, MEMORY_TOOLSET)}

    def off_tools(self, config: Config | None = None) -> dict[str, str]:
        """Every registered tool switched off → why, and how to switch it on again: by itself
        (`tools.disabled`, its MCP server's filter) or with its toolset. The one rule: such
        a tool is never offered to the model, and the executor refuses it whoever asks."""
        return self._switches(config or self.config)[1]

    def switches_unknown(self, config: Config | None = None) -> str:
        """What a front end says while config.yaml cannot be read ("" when it can): the
        tools switched off there would look switched on, so the model is offered none."""
        error = (config or self.config).error
        if not error:
            return ""
        return (
            f"{error}. Until it is fixed, the model is offered none of the tools you can "
            "switch off (file, terminal, web, MCP and plugin tools): the ones switched off "
            "there cannot be known"
        )

    def _switches(self, config: Config) -> tuple[list[str], dict[str, str]]:
        """The tools the switches leave on, and those they leave off → refusal's sentence."""
        choices = ToolsetChoices.from_config(config)
        names = choices.effective_tools(self.toolsets)
        agent = self.agent_tools()
        if set(AGENT_TOOLSETS[MEMORY_TOOLSET]) <= set(names):  # the toolset stands for them
            names = sorted({*names, *(n for n, ts in agent.items() if ts == MEMORY_TOOLSET)})
        alone = self.switched_off(config)
        members = {n: e.toolset for n, e in self.registry.snapshot().items()} | agent
        by_toolset = choices.off_by_toolset(self.toolsets, names, members)
        off = {
            name: refusal(name, alone.get(name), by_toolset.get(name))
            for name in sorted({*alone, *by_toolset})
        }
        return [n for n in names if n not in alone], off

    def switched_off(self, config: Config | None = None) -> dict[str, str]:
        """Registered tools switched off one by one → why: `tools.disabled`, and MCP tools
        their server's `tools.include`/`tools.exclude` leaves out (from the config now)."""
        config = config or self.config
        snapshot = self.registry.snapshot()
        off = {n: DISABLED_REASON for n in disabled_tools(config) if n in snapshot}
        originals = self.mcp.original_names if self.mcp is not None else {}
        helpers = self.mcp.utilities if self.mcp is not None else {}
        mcp = [  # a server's resources and prompts tools are not its tools: no filter on them
            (name, entry.owner, originals.get(name, (entry.owner, name))[1])
            for name, entry in snapshot.items()
            if entry.source is ToolSource.MCP and name not in helpers
        ]
        if mcp:  # registered by a running manager, so the MCP package is loaded already
            from workbench.core.mcp.filters import switched_off

            off.update(switched_off(config.get("mcp_servers"), mcp))
        return off


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def _positive(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def load_runtime(home: Path | None = None, *, load_plugins: bool = True) -> Runtime:
    """The core, ready to use. `load_plugins=False` for commands that run no plugin code
    (editing the config, reading sessions): a broken plugin can never stop those."""
    home = home or hermes_home()
    problems = ensure_home(home)
    _log_to_file(home)
    discovery = discover_builtin_tools()  # into the module-level registry, once a process
    config = load_config(home / "config.yaml")
    _clean_old_results(home, config)
    registry = fresh_registry()
    runtime = Runtime(
        home=home,
        config=config,
        registry=registry,
        toolsets=Toolsets(registry),
        discovery=discovery,
        home_problems=problems,
    )
    if load_plugins and not safe_mode():
        runtime.plugins = plugin_manager(runtime)
        runtime.plugins.load_enabled()
    return runtime


def safe_mode() -> bool:
    return _truthy(os.environ.get("HERMES_SAFE_MODE"))


def plugin_manager(runtime: Runtime, not_loading: str = "") -> PluginManager:
    """Every plugin discovered; each probed in a child process before it first runs here.

    With `not_loading` (the reason), the manager lists, enables and disables plugins but
    runs none of their code."""
    from workbench.core.plugins import PluginManager
    from workbench.core.plugins.probe import CACHE_NAME, DEFAULT_TIMEOUT, Prober

    timeout = _positive(runtime.config.get("plugins.load_timeout")) or DEFAULT_TIMEOUT
    manager = PluginManager(
        runtime.registry,
        runtime.hooks,
        runtime.config,
        home=runtime.home,
        dispatcher=runtime.dispatch_for_plugins,
        memory=runtime.memory,
        prober=Prober(runtime.home / "state" / CACHE_NAME, timeout),
        not_loading=not_loading,
        trust=project_trust(runtime.home),
    )
    manager.discover()
    return manager


def project_trust(home: Path, project: Path | None = None) -> ProjectTrust | None:
    """The project's plugins and rules against what its person trusted (the folder hermes-tui
    runs in by default); None when project plugins and rules are not used at all."""
    from workbench.core.plugins.sources import PROJECT_ENV, truthy
    from workbench.core.trust import ProjectTrust

    if not truthy(os.environ.get(PROJECT_ENV)):
        return None
    return ProjectTrust(home, project or Path.cwd())


def write_roots(config: Config) -> tuple[str, ...]:
    """`approvals.write_roots`: directories besides the working one where writes need no approval."""
    from workbench.core.backends.settings import write_roots as roots

    return roots(config.get("approvals.write_roots") or [])


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _clean_old_results(home: Path, config: Config) -> None:
    """Spilled results are kept `results.retention_days` (default 7), then deleted."""
    from workbench.core.execution.budget import DEFAULT_RETENTION_DAYS, SpillStore

    days = _positive(config.get("results.retention_days")) or DEFAULT_RETENTION_DAYS
    SpillStore.cleanup(home / "state" / "results", days)


def _log_to_file(home: Path) -> None:
    """Send the core's log to HERMES_HOME/logs, never to the terminal a UI may own."""
    root = logging.getLogger("workbench")
    if root.handlers:
        return
    try:
        handler: logging.Handler = private_file_handler(home / "logs" / "hermes-tui.log")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # A log that cannot be written (a full disk) must not print tracebacks over the
    # terminal for every record; what matters is said by the front ends themselves.
    handler.handleError = lambda record: None  # type: ignore[method-assign]
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    root.propagate = False
    # The MCP SDK logs each line a server prints that is not JSON-RPC, with a traceback;
    # with no handler of its own that would reach the terminal, thousands of lines of it.
    # Our server handle counts those lines and says it once; the rest goes to our log.
    sdk = logging.getLogger("mcp")
    sdk.addHandler(handler)
    sdk.propagate = False
    logging.getLogger("mcp.client.stdio").addFilter(_not_parse_noise)  # where it is logged


def _not_parse_noise(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Failed to parse JSONRPC message")
