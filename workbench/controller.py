"""The workbench's one owner of the core: it loads the runtime, runs its services, keeps what
the screens show, and hands every core event to one callback.

It knows nothing of Textual: the app holds one, runs `load` on a worker thread, calls
`start` on its own loop and turns `deliver`'s events into messages. Screens read the rows
and the history from here and act through its methods; none of them owns the core.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from workbench.core.agent.offered import Costs
    from workbench.core.checkpoints import CheckpointStore
    from workbench.core.events import CoreEvent
    from workbench.core.execution.executor import CallOutcome, Executor
    from workbench.core.history import CallEntry, CallHistory
    from workbench.core.plugins.watcher import HotReloader
    from workbench.core.runtime import Runtime
    from workbench.core.tools.memory import ProviderTool


@dataclass(frozen=True, slots=True)
class ToolRows:
    """What the tools tree shows, read once per change of the registry (not per keystroke)."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    toolsets: list[dict[str, Any]] = field(default_factory=list)
    memory: tuple[str, list[ProviderTool]] | None = None
    costs: Costs | None = None  # sizes in tokens: measured on a worker, after the rows
    sizes: dict[tuple[str, str], str] = field(default_factory=dict)  # said short, by (kind, name)

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

    out = {("tool", name): short(c.tokens) + _STATE_MARK.get(c.state.value, "")
           if c.offered else short(c.tokens)
           for name, c in costs.tools.items()}  # fmt: skip
    for row in rows.toolsets:
        out["toolset", row["name"]] = short(costs.toolset(row["name"]))
    for source in {row["source"] for row in rows.tools} | {"memory"}:
        out["source", source] = short(costs.source(source))
    owners: dict[tuple[str, str], int] = {}  # an MCP server's tools, a plugin's: those on
    for key, row in _owned(rows.tools):
        cost = costs.tools.get(row["name"])
        if row["enabled"] and cost is not None:
            owners[key] = owners.get(key, 0) + cost.tokens
    out.update((key, short(tokens)) for key, tokens in owners.items())
    return out


class Controller:
    """Owns the runtime of one workbench session; `deliver` gets every core event, from any
    thread."""

    def __init__(
        self, deliver: Callable[[CoreEvent], None], model_flags: dict[str, str] | None = None
    ) -> None:
        self.deliver = deliver
        self.model_flags = dict(model_flags or {})  # --model, --base-url, --api-key
        self.runtime: Runtime | None = None
        self.executor: Executor | None = None
        self.reloader: HotReloader | None = None
        self.rows = ToolRows()
        # Calls are saved to the history on a thread of their own: a screen never waits for
        # the disk, and `stop` waits for what is queued so no finished call is lost.
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="history")

    # -- life --------------------------------------------------------------------------

    def load(self) -> Runtime:
        """Load the core (slow: on a worker thread). `start` then puts it to work."""
        from workbench.core.execution.approval import ApprovalBroker
        from workbench.core.runtime import load_runtime

        runtime = load_runtime()
        runtime.broker = ApprovalBroker.from_config(runtime.config, asker=runtime.asker)
        runtime.registry.add_listener(self.deliver)
        runtime.asker.listen(self.deliver)  # asks and their ends, on the one stream
        return runtime

    def start(self, runtime: Runtime) -> list[str]:
        """Make the executor, watch the plugins; returns the problems to tell the user."""
        from workbench.core.execution.kept import CallKeeper, watching
        from workbench.core.report import collect_problems

        self.runtime = runtime
        self.executor = runtime.executor(broker=runtime.broker)
        self.executor.on_event = watching(CallKeeper(self._keep), self.deliver)
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
    def wants_mcp(self) -> bool:
        return self.runtime is not None and bool(self.runtime.config.get("mcp_servers"))

    def start_mcp(self) -> None:
        """Start the MCP servers (blocks while they launch: on a worker thread)."""
        if self.runtime is not None:
            self.runtime.start_mcp(on_event=self.deliver)

    def stop(self) -> None:
        if self.reloader is not None:
            self.reloader.stop(timeout=0.5)
        if self.runtime is not None:
            self.runtime.stop_mcp()
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
            )
        return self.rows

    @property
    def cwd(self) -> str:
        """The working directory calls run in (the by-hand executor's; a session's is the same
        unless it was given another)."""
        return self.executor.cwd if self.executor is not None else os.getcwd()

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
        return offered_costs(self.runtime, **self.model_flags)

    def measured(self, costs: Costs) -> None:
        self.rows = replace(self.rows, costs=costs, sizes=_sizes(self.rows, costs))

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
        changes = {"toolset": preview_toolset, "tool": preview_tool, "defer": preview_defer}
        change = changes[kind]
        try:
            return change(runtime, costs, name, enabled, **self.model_flags)
        except CommandFailed:
            return None

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
        """Through the executor, as the agent would call it (approvals, timeouts, budgets)."""
        if self.executor is None:
            return None
        from workbench.core.execution.kept import FORM_CALL

        call_id = f"{FORM_CALL}{time.monotonic_ns()}"
        (outcome,) = await self.executor.run(
            [{"id": call_id, "name": tool, "arguments": arguments}]
        )
        return outcome
