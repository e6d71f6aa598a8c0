"""The workbench's one owner of the core: it loads the runtime, runs its services, keeps what
the screens show, and hands every core event to one callback.

It knows nothing of Textual: the app holds one, runs `load` on a worker thread, calls
`start` on its own loop and turns `deliver`'s events into messages. Screens read the rows
and the history from here and act through its methods; none of them owns the core.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.events import CoreEvent
    from workbench.core.execution.executor import CallOutcome, Executor, ToolCallFinished
    from workbench.core.plugins.watcher import HotReloader
    from workbench.core.runtime import Runtime
    from workbench.core.tools.memory import ProviderTool

HISTORY = 20  # calls kept per tool for its detail pane


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a tool, as its detail pane lists it."""

    when: str
    status: str
    duration: float
    summary: str


@dataclass(frozen=True, slots=True)
class ToolRows:
    """What the tools tree shows, read once per change of the registry (not per keystroke)."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    toolsets: list[dict[str, Any]] = field(default_factory=list)
    memory: tuple[str, list[ProviderTool]] | None = None

    @property
    def offered(self) -> int:
        return sum(row["offered"] for row in self.tools)


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
        self.history: defaultdict[str, deque[CallRecord]] = defaultdict(
            lambda: deque(maxlen=HISTORY)
        )

    # -- life --------------------------------------------------------------------------

    def load(self) -> Runtime:
        """Load the core (slow: on a worker thread). `start` then puts it to work."""
        from workbench.core.execution.approval import ApprovalBroker
        from workbench.core.runtime import load_runtime

        runtime = load_runtime()
        runtime.broker = ApprovalBroker.from_config(runtime.config)
        runtime.registry.add_listener(self.deliver)
        return runtime

    def start(self, runtime: Runtime) -> list[str]:
        """Make the executor, watch the plugins; returns the problems to tell the user."""
        from workbench.core.report import collect_problems

        self.runtime = runtime
        self.executor = runtime.executor(broker=runtime.broker)
        self.executor.on_event = self.deliver
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

    # -- what the screens show ---------------------------------------------------------

    def refresh_rows(self) -> ToolRows:
        from workbench.core.report import tool_rows, toolset_rows

        if self.runtime is not None:
            memory = self.runtime.memory
            self.rows = ToolRows(
                tool_rows(self.runtime),
                toolset_rows(self.runtime),
                (memory.active_name, memory.tools()),
            )
        return self.rows

    def record(self, event: ToolCallFinished) -> None:
        """A finished call goes into its tool's history."""
        summary = event.content if isinstance(event.content, str) else "<multimodal result>"
        summary = summary.replace("\n", " ")[:60]
        when = time.strftime("%H:%M:%S")
        self.history[event.name].append(CallRecord(when, event.status, event.duration, summary))

    async def run_tool(self, tool: str, arguments: dict[str, Any]) -> CallOutcome | None:
        """Through the executor, as the agent would call it (approvals, timeouts, budgets)."""
        if self.executor is None:
            return None
        call_id = f"form-{time.monotonic_ns()}"
        (outcome,) = await self.executor.run(
            [{"id": call_id, "name": tool, "arguments": arguments}]
        )
        return outcome
