"""The workbench's one owner of the core: it loads the runtime, runs its services, owns the
chat session, the agent's thread and the one executor, keeps what the screens show, and
hands every core event to one callback.

It knows nothing of Textual: the app holds one, runs `load` on a worker thread, calls
`start` on its own loop and turns `deliver`'s events into messages. Screens read plain
data from here and act through its verbs (`send`, `cancel`, `run_tool`, ...); none of them
owns a part of the core or reads the runtime.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from workbench.core.agent.offered import Costs
    from workbench.core.checkpoints import CheckpointStore
    from workbench.core.events import CoreEvent, TurnFinished
    from workbench.core.execution.executor import CallOutcome, Executor
    from workbench.core.history import CallEntry, CallHistory
    from workbench.core.mcp.manager import MCPManager
    from workbench.core.mcp.server import ServerStatus
    from workbench.core.model.settings import ModelSettings
    from workbench.core.plugins.manager import PluginState
    from workbench.core.plugins.watcher import HotReloader
    from workbench.core.policy.simulate import Simulator
    from workbench.core.probe import Finding
    from workbench.core.probe import Report as ProbeReport
    from workbench.core.runtime import Runtime
    from workbench.core.session import ChatSession
    from workbench.core.tools.memory import ProviderTool
    from workbench.core.usage.report import Report
    from workbench.tui.agent_thread import AgentThread


class SessionRefused(Exception):
    """The chat session cannot open or start; the message says why (said in the chat)."""

    def __init__(self, message: str, failed: bool = False) -> None:
        super().__init__(message)
        self.failed = failed  # it failed (not merely still loading): say how to configure


class ChangeRefused(Exception):
    """A change to config.yaml the workbench was asked to save cannot be saved; why."""


@dataclass(frozen=True, slots=True)
class Opening:
    """A chat session just made, not started yet: what to say before it starts."""

    notes: list[str]  # e.g. an unreadable config.yaml, a transcript that cannot be saved
    local: bool  # the bundled model: it takes a few seconds to start


@dataclass(frozen=True, slots=True)
class Started:
    """A chat session ready for its first turn."""

    title: str  # the model, the session, where commands run
    cannot_run: str = ""  # why commands will not run (a missing sandbox), said before the first


@dataclass(frozen=True, slots=True)
class Sources:
    """What the Sources panel shows: each MCP server's state and each plugin's."""

    servers: list[ServerStatus] = field(default_factory=list)
    plugins: list[PluginState] = field(default_factory=list)
    mcp_on: bool = False  # MCP servers are configured and started
    plugins_on: bool = False  # plugins are loaded (not HERMES_SAFE_MODE)
    # the plugins whose declared requirements would replace a package hermes-tui needs
    conflicting: list[str] = field(default_factory=list)
    sdk_problem: str = ""  # why the installed MCP SDK cannot work ("" when it can)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a model answers: the running chat's, else the configured one."""

    base_url: str
    api_key: str
    model: str
    local: bool = False  # the bundled model, not started (it runs only with a chat)


@dataclass(frozen=True, slots=True)
class ToolRows:
    """What the tools tree shows, read once per change of the registry (not per keystroke)."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    toolsets: list[dict[str, Any]] = field(default_factory=list)
    memory: tuple[str, list[ProviderTool]] | None = None
    costs: Costs | None = None  # sizes in tokens: measured on a worker, after the rows
    sizes: dict[tuple[str, str], str] = field(default_factory=dict)  # said short, by (kind, name)
    skills: list[dict[str, Any]] = field(default_factory=list)  # Hermes's skills (core.skills)

    @property
    def offered(self) -> int:
        """How many tools the model is offered: measured, with the agent's own and the
        memory provider's; until then, the registry's."""
        if self.costs is not None:
            return len(self.costs.offered)
        return sum(row["offered"] for row in self.tools)

    def switched_on(self) -> dict[tuple[str, str], int]:
        """How many of each MCP server's and plugin's tools no switch leaves off, by
        ("server", name) and ("plugin", key), as the Sources panel counts them."""
        counts: dict[tuple[str, str], int] = {}
        for key, row in _owned(self.tools):
            counts[key] = counts.get(key, 0) + bool(row["enabled"])
        return counts


def _owned(rows: list[dict[str, Any]]) -> Iterator[tuple[tuple[str, str], dict[str, Any]]]:
    """The tools of an MCP server or a plugin, each with its owner's key in the Sources panel."""
    for row in rows:
        kind = {"mcp": "server", "plugin": "plugin"}.get(row["source"])
        if kind is not None:
            yield (kind, row["owner"]), row


# Beside the size of an offered tool that is not sent in full (core.tools.deferral): the
# tree marks the deferred ones; the `o` view and the detail say every tool's state.
_STATE_MARK = {"listed": " deferred", "searchable": " deferred, search only"}


def _sizes(rows: ToolRows, costs: Costs) -> dict[tuple[str, str], str]:
    """Each tool's, toolset's and source's size, said short ("1.2k"), by (kind, name)."""
    from workbench.core.agent.context import short
    from workbench.core.agent.offered import AGENT, MEMORY

    out = {("tool", name): short(c.tokens) + _STATE_MARK.get(c.state.value, "")
           if c.offered else short(c.tokens)
           for name, c in costs.tools.items()}  # fmt: skip
    for row in rows.toolsets:
        out["toolset", row["name"]] = short(costs.toolset(row["name"]))
    for source in {row["source"] for row in rows.tools}:
        out["source", source] = short(costs.source(source))
    # the agent's own tools and the memory provider's: one source in the tree
    out["source", AGENT] = short(costs.source(AGENT) + costs.source(MEMORY))
    owners: dict[tuple[str, str], int] = {}  # an MCP server's tools, a plugin's: those on
    for key, row in _owned(rows.tools):
        cost = costs.tools.get(row["name"])
        if row["enabled"] and cost is not None:
            owners[key] = owners.get(key, 0) + cost.tokens
    out.update((key, short(tokens)) for key, tokens in owners.items())
    return out


def skill_rows() -> list[dict[str, Any]]:
    """Hermes's skills for the tree: each one's name, folder and why it is not loaded."""
    from workbench.core import skills as skill_store

    try:
        listing = skill_store.discover()
    except OSError:
        return []
    return [
        {
            "name": s.name,
            "key": str(s.directory),
            "category": s.category,
            "problem": s.problem,
            "platform_ok": s.platform_ok,
        }
        for s in listing.skills
    ]


class Controller:
    """Owns the runtime of one workbench session; `deliver` gets every core event, from any
    thread."""

    def __init__(
        self, deliver: Callable[[CoreEvent], None], model_flags: dict[str, str] | None = None
    ) -> None:
        self.deliver = deliver
        self.model_flags: dict[str, Any] = dict(model_flags or {})  # --model, --base-url, --api-key
        self.runtime: Runtime | None = None
        self.executor: Executor | None = None
        self.reloader: HotReloader | None = None
        self.rows = ToolRows()
        self.session: ChatSession | None = None
        self._thread: AgentThread | None = None
        self._on_calls: Callable[[object], None] | None = None  # the executor's own callback
        # Calls are saved to the history on a thread of their own: a screen never waits for
        # the disk, and `stop` waits for what is queued so no finished call is lost.
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="history")
        self._skill_tokens: dict[str, int] = {}  # each skill's SKILL.md, by its folder

    def _stream(self, event: object) -> None:
        """The core's callbacks are typed loosely (`object`); every event on them is one of
        `CoreEvent`, handed to `deliver`."""
        self.deliver(cast("CoreEvent", event))

    # -- life --------------------------------------------------------------------------

    def load(self) -> Runtime:
        """Load the core (slow: on a worker thread). `start` then puts it to work."""
        from workbench.core.execution.approval import ApprovalBroker
        from workbench.core.own_output import route_stdout
        from workbench.core.runtime import load_runtime

        route_stdout()  # inside the app's capture: what plugin code prints is its output
        runtime = load_runtime()
        runtime.broker = ApprovalBroker.from_config(runtime.config, asker=runtime.asker)
        runtime.registry.add_listener(self.deliver)
        runtime.asker.listen(self._stream)  # asks and their ends, on the one stream
        return runtime

    def start(self, runtime: Runtime) -> list[str]:
        """Make the executor, watch the plugins; returns the problems to tell the user."""
        from workbench.core.execution.kept import CallKeeper, watching
        from workbench.core.report import collect_problems

        self.runtime = runtime
        self.executor = runtime.executor(broker=runtime.broker)
        self._on_calls = watching(CallKeeper(self._keep), self._stream)
        self.executor.on_event = self._on_calls
        self.refresh_rows()
        if runtime.plugins is not None:
            from workbench.core.plugins.watcher import HotReloader

            runtime.plugins.on_event = self.deliver
            self.reloader = HotReloader(runtime.plugins)
            self.reloader.start()
        problems = collect_problems(runtime)
        # The objects loaded so far live for the whole session: keep the cyclic collector
        # from walking them again and again (its pauses showed as keystroke lag).
        gc.collect()
        gc.freeze()
        return problems

    @property
    def loaded(self) -> bool:
        """The core is loaded and started."""
        return self.runtime is not None and self.executor is not None

    @property
    def wants_mcp(self) -> bool:
        return self.runtime is not None and bool(self.runtime.config.get("mcp_servers"))

    def start_mcp(self) -> None:
        """Start the MCP servers (blocks while they launch: on a worker thread)."""
        if self.runtime is not None:
            self.runtime.start_mcp(on_event=self._stream)

    def stop(self) -> None:
        self._close_session()
        if self.reloader is not None:
            self.reloader.stop(timeout=0.5)
        if self.runtime is not None:
            self.runtime.stop()  # MCP, and the processes plugins started
        if self.executor is not None:
            self.executor.shutdown()
        self._writer.shutdown(wait=True)

    # -- what the screens show ---------------------------------------------------------

    def refresh_rows(self) -> ToolRows:
        from workbench.core.report import tool_rows, toolset_rows

        if self.runtime is not None:
            memory = self.runtime.memory
            self.rows = ToolRows(
                tool_rows(self.runtime),
                toolset_rows(self.runtime),
                (memory.active_name, memory.tools()),
                self.rows.costs,  # until measured again: sizes change little between two
                self.rows.sizes,
                skill_rows(),
            )
        return self.rows

    @property
    def cwd(self) -> str:
        """The working directory calls run in, the agent's and those run by hand."""
        return self.executor.cwd if self.executor is not None else os.getcwd()

    @property
    def home(self) -> Path | None:
        """HERMES_HOME (None before the core is loaded)."""
        return self.runtime.home if self.runtime is not None else None

    @property
    def mcp(self) -> MCPManager | None:
        """The MCP servers, once started (None before, or with none configured)."""
        return self.runtime.mcp if self.runtime is not None else None

    def where(self) -> str:
        """Where commands run: local, sandboxed, ssh, refused ("" before the core is loaded)."""
        return self.runtime.backend().label() if self.runtime is not None else ""

    def sources(self) -> Sources:
        runtime = self.runtime
        if runtime is None:
            return Sources()
        from workbench.core import requirements

        plugins = runtime.plugins.list() if runtime.plugins is not None else []
        return Sources(
            runtime.mcp.statuses() if runtime.mcp is not None else [],
            plugins,
            runtime.mcp is not None,
            runtime.plugins is not None,
            [state.key for state in plugins if _conflicts(tuple(state.manifest.requirements))],
            requirements.installed_sdk_problem() if runtime.mcp is not None else "",
        )

    def plugin_change(self, key: str) -> str | None:
        """The sentence saying what a plugin's last reload or removal changed."""
        plugins = self.runtime.plugins if self.runtime is not None else None
        state = plugins.states.get(key) if plugins is not None else None
        return state.last_change if state is not None else None

    def schema(self, tool: str) -> dict[str, Any] | None:
        """A tool's schema, as the model is offered it (None: no such tool)."""
        return self.runtime.registry.get_schema(tool) if self.runtime is not None else None

    def rule_simulator(self) -> Simulator:
        """What the rules panel judges a call against: the tools (looked up, never run) and
        the folders writes need no approval in."""
        from workbench.core.policy.simulate import Simulator
        from workbench.core.runtime import write_roots

        if self.runtime is None:
            return Simulator()
        return Simulator(self.runtime.registry, write_roots(self.runtime.config))

    def endpoint(self) -> Endpoint:
        """The running chat's model endpoint, else the configured one (raises
        `ModelConfigError` when that cannot be used)."""
        session = self.session
        client = session.agent.client if session is not None else None
        if session is not None and client is not None:
            return Endpoint(str(client.base_url), client.api_key, session.settings.model)
        settings = self.model()
        return Endpoint(
            settings.base_url or "", settings.api_key or "", settings.model, settings.local
        )

    def checkpoints(self) -> CheckpointStore | None:
        """The checkpoint store, with the settings of config.yaml now (None before the core
        is loaded)."""
        return self.runtime.checkpoints() if self.runtime is not None else None

    @property
    def history(self) -> CallHistory | None:
        return self.runtime.history if self.runtime is not None else None

    def calls(self, tool: str) -> list[CallEntry]:
        """The tool's kept calls, pinned first, then newest first."""
        return self.history.calls(tool) if self.history is not None else []

    def measure(self) -> Costs | None:
        """Every tool's size and what the model is offered (slow the first time, when the
        tokenizer's table loads: on a worker thread)."""
        from workbench.core.costs import offered_costs

        if self.runtime is None:
            return None
        from workbench.core import skills as skill_store
        from workbench.core.costs import skill_sizes

        found = skill_store.discover(self.runtime.config).skills
        self._skill_tokens = skill_sizes(self.runtime, found, **self.model_flags)
        return offered_costs(self.runtime, **self.model_flags)

    def measured(self, costs: Costs) -> None:
        from workbench.core.agent.context import short

        sizes = _sizes(self.rows, costs)
        sizes.update((("skill", k), short(n)) for k, n in self._skill_tokens.items())
        self.rows = replace(self.rows, costs=costs, sizes=sizes)

    def preview(self, kind: str, name: str, enabled: bool) -> int | None:
        """Tokens each request would gain (or lose) by switching a toolset or a tool now (or
        deferring a tool, `kind` "defer"; sending it in full, `enabled` False), or None when
        it cannot be said (sizes not measured yet, a broken config, a tool the list cannot
        switch)."""
        from workbench.core.commands import CommandFailed
        from workbench.core.costs import preview_defer, preview_tool, preview_toolset

        costs, runtime = self.rows.costs, self.runtime
        if costs is None or runtime is None:
            return None
        changes: dict[str, Callable[..., int]] = {
            "toolset": preview_toolset,
            "tool": preview_tool,
            "defer": preview_defer,
        }
        change = changes[kind]
        try:
            return change(runtime, costs, name, enabled, **self.model_flags)
        except CommandFailed:
            return None

    def usage(self, sessions: int) -> Report | None:
        """Each tool's cost joined with its use over the last `sessions` sessions (slow: run
        it off the app's loop); None while the tools are still loading."""
        from workbench.core.usage.report import usage_report

        runtime = self.runtime
        return None if runtime is None else usage_report(runtime, sessions, self.model_flags)

    async def probe_model(self, on_finding: Callable[[Finding], None]) -> ProbeReport:
        """The model probe (core.probe) on the agent's loop, against the open session's model
        (its bundled server, if it has one) or the configured one; `on_finding` hears each
        finding on that loop's thread. Raises SessionRefused when no model can be used."""
        from workbench.core import probe
        from workbench.core.model.settings import ModelConfigError

        session = self.session
        try:
            settings = session.settings if session is not None else self.model()
        except ModelConfigError as exc:
            raise SessionRefused(f"The configured model cannot be used: {exc}.") from None
        assert self.runtime is not None  # self.model() refuses before the core is loaded
        server = session.local if session is not None else None
        return await self.thread.run(
            probe.run(self.runtime, settings, server=server, on_finding=on_finding)
        )

    def apply_suggestion(self, tool: str, action: str) -> str | None:
        """Save a usage suggestion (switch a tool off, or defer it); what was done, or None
        while the tools are still loading. A change that cannot be saved raises
        ChangeRefused with the reason."""
        from workbench.core.commands import CommandFailed
        from workbench.core.usage.change import apply

        runtime = self.runtime
        if runtime is None:
            return None
        try:
            return apply(runtime, tool, action).message
        except CommandFailed as exc:
            raise ChangeRefused(exc.message) from exc

    def deferral_switch(self, name: str) -> bool | None:
        """Which way the defer switch moves an offered tool: True defers it, False sends it
        in full; None when it is not offered (or the sizes are not measured yet)."""
        from workbench.core.tools.deferral import ToolState

        costs = self.rows.costs
        cost = costs.tools.get(name) if costs is not None else None
        if cost is None or not cost.offered:
            return None
        return cost.state is ToolState.EAGER

    def _keep(self, call: CallEntry) -> None:
        """A call run by hand goes into its tool's history: shown at once, saved in the
        background. (The agent's calls are kept by its session, on the agent's thread.)"""
        if self.history is not None:
            self.history.add(call, write=False)
            self._save(self.history.add, call)

    def pin(self, call: CallEntry) -> None:
        """Pin an unpinned call, unpin a pinned one."""
        if self.history is not None:
            self.history.pin(call.tool, call.id, not call.pinned, write=False)
            self._save(self.history.pin, call.tool, call.id, not call.pinned)

    def _save(self, change: Callable[..., Any], *args: Any) -> None:
        def save() -> None:
            try:
                change(*args)
            except OSError as exc:  # a full disk or a read-only home: shown, not saved
                logger.warning("call history not saved: %s", exc)

        try:
            self._writer.submit(save)
        except RuntimeError:  # stopping: a call that finishes now is saved here and now
            save()

    async def run_tool(self, tool: str, arguments: dict[str, Any]) -> CallOutcome | None:
        """Through the executor the agent uses, on the agent's loop, as the agent would call
        it (approvals, timeouts, budgets); it waits for a batch of the agent's that runs."""
        if self.executor is None:
            return None
        from workbench.core.execution.kept import FORM_CALL

        call_id = f"{FORM_CALL}{time.monotonic_ns()}"
        (outcome,) = await self.thread.run(
            self.executor.run([{"id": call_id, "name": tool, "arguments": arguments}])
        )
        return outcome

    # -- the chat session --------------------------------------------------------------

    @property
    def thread(self) -> AgentThread:
        """The agent's own loop (made when first needed: the first frame does without)."""
        if self._thread is None:
            from workbench.tui.agent_thread import AgentThread

            self._thread = AgentThread()
        return self._thread

    def model(self) -> ModelSettings:
        """The model chosen by config.yaml, $HERMES_HOME/.env, the environment and the flags
        (raises `ModelConfigError` when it cannot be used)."""
        from workbench.core.model.settings import resolve

        if self.runtime is None:
            raise SessionRefused("The workbench is still loading; send again in a moment.")
        return resolve(self.runtime.config, **self.model_flags)

    @staticmethod
    def local_model_installed(settings: ModelSettings) -> bool:
        """Whether the bundled model `settings` names is on disk (`make run` installs it)."""
        from workbench.core.model import local as local_model

        return local_model.installed(local_model.MODELS[settings.model])

    def open_session(self) -> Opening:
        """Make the chat session (on the UI's loop: quick); `start_session` then starts it."""
        from workbench.core.model.settings import ModelConfigError
        from workbench.core.plugins.lifecycle import TUI
        from workbench.core.session import ChatSession

        if self.runtime is None or self.executor is None:
            raise SessionRefused("The workbench is still loading; send again in a moment.")
        try:
            settings = self.model()
        except ModelConfigError as exc:  # said, not replaced by another model
            raise SessionRefused(f"The configured model cannot be used: {exc}.") from None
        self._unshare()  # a session that failed to start left its own on the executor
        try:
            self.session = ChatSession(
                self.runtime,
                settings,
                broker=self.runtime.broker,
                on_event=self._stream,
                executor=self.executor,
                platform=TUI,
            )
        except Exception as exc:
            self._unshare()
            raise SessionRefused(f"The model could not start: {exc}", failed=True) from exc
        return Opening(list(self.session.notes), settings.local)

    def _unshare(self) -> None:
        """The executor as it is without a session: the registry's tools, calls by hand."""
        if self.executor is not None and self.runtime is not None:
            self.executor.registry = self.runtime.registry
            self.executor.on_event = self._on_calls

    async def start_session(self) -> Started:
        """Connect to the model (the bundled one starts: seconds), on the agent's loop."""
        session = self.session
        assert session is not None and self.runtime is not None  # opened just before
        try:
            await self.thread.run(session.start())
        except Exception as exc:
            self.session = None
            raise SessionRefused(f"The model could not start: {exc}", failed=True) from exc
        gc.freeze()  # the client just imported is long-lived: keep it out of collections
        where = session.executor.backend or self.runtime.backend()
        works, why = where.working()
        title = f"{session.settings.describe()} · session {session.id} · {where.label()}"
        return Started(title, "" if works else why)

    async def send(self, prompt: str) -> TurnFinished:
        """One turn of the open session, on the agent's loop; its events go to `deliver`."""
        assert self.session is not None  # opened and started before
        return await self.thread.run(self.session.turn(prompt))

    def cancel(self) -> None:
        """Stop the running turn: its stream and its tool calls."""
        if self.session is not None:
            self.thread.call(self.session.cancel)

    def memory_problems(self, seen: int) -> list[str]:
        """A memory provider's failing hooks, from the `seen`-th on."""
        memory = self.session.agent.memory if self.session is not None else None
        return list(memory.problems[seen:]) if memory is not None else []

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def _close_session(self) -> None:
        """On the way out: the running turn is cancelled and the session closed (bounded: a
        stuck tool must not keep the app from quitting)."""
        if self._thread is None:
            return
        session, self.session = self.session, None
        if session is not None:
            self._thread.call(session.cancel)
            closing = asyncio.run_coroutine_threadsafe(session.close(), self._thread.loop)
            try:
                closing.result(timeout=5)
            except Exception:  # closing on the way out: nothing left to tell
                closing.cancel()
        self._thread.stop()
        self._thread = None


@functools.lru_cache(maxsize=128)
def _conflicts(declared: tuple[str, ...]) -> bool:
    """Whether a plugin's declared requirements would replace a package hermes-tui needs:
    once per set of them (reading the installed versions takes milliseconds, and the header
    is drawn again on every change of a source)."""
    from workbench.core.report import requirement_conflicts

    return bool(requirement_conflicts(list(declared)))
