"""The workbench's main screen: the tools tree beside a tool's details, its run form and the sources.

Everything slow happens off the event loop: the core loads in a thread, MCP servers start in
a thread, tool calls run on the executor's workers. The core's events arrive as messages;
bursts of registry changes repaint once.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static, TabbedContent, TabPane, Tree

from workbench.widgets.run_form import RunToolForm
from workbench.widgets.sources import SourcesPanel
from workbench.widgets.tool_detail import ToolDetail
from workbench.widgets.tools_tree import ToolsTree

if TYPE_CHECKING:
    from workbench.core.events import RegistryChanged
    from workbench.core.runtime import Runtime

REFRESH_DELAY = 0.05  # a burst of registry changes repaints once
HISTORY = 20


@dataclass(frozen=True)
class CallRecord:
    when: str
    status: str
    duration: float
    summary: str


class FilterInput(Input):
    """The filter box: the tree is filtered in the same step as the keystroke, so both show
    in one frame (a `Changed` message would cost a frame of its own)."""

    def _watch_value(self, value: str) -> None:
        super()._watch_value(value)
        if isinstance(self.screen, MainScreen):
            self.screen.apply_filter()


class MainScreen(Screen[None]):
    AUTO_FOCUS = "ToolsTree"
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="main.filter"),
        Binding("f2", "show_tab('run')", "Run form", id="main.run"),
        Binding("f3", "show_tab('sources')", "Sources", id="main.sources"),
        Binding("f4", "show_tab('detail')", "Detail", id="main.detail"),
        Binding("o", "show_offered", "Offered tools", id="main.offered"),
        Binding("escape", "focus_tree", "Back to the tree", id="main.tree", show=False),
    ]

    class RegistryUpdated(Message):
        """Posted from any thread when the registry changed; `refused` says why one was refused."""

        def __init__(self, refused: str = "") -> None:
            super().__init__()
            self.refused = refused

    class CoreEvent(Message):
        """An event from the plugin watcher or the MCP thread."""

        def __init__(self, event: object) -> None:
            super().__init__()
            self.event = event

    def __init__(self) -> None:
        super().__init__()
        self.runtime: Runtime | None = None
        self.executor: Any = None
        self.history: dict[str, deque[CallRecord]] = defaultdict(lambda: deque(maxlen=HISTORY))
        self._refresh_pending = False
        self._reloader: Any = None
        self._mcp_seen: set[str] = set()
        self._rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            with Vertical(id="left"):
                yield FilterInput(placeholder="Filter tools ( / )", id="filter")
                yield ToolsTree(id="tools-tree")
            with TabbedContent(id="right", initial="detail"):
                with TabPane("Detail", id="detail"):
                    yield ToolDetail(id="tool-detail")
                with TabPane("Run", id="run"):
                    yield RunToolForm(id="run-form")
                with TabPane("Sources", id="sources"):
                    yield SourcesPanel(id="sources-panel")
        yield Static("Loading tools…", id="status-line")
        yield Footer()

    # -- loading -----------------------------------------------------------------------

    def on_mount(self) -> None:
        self.load_runtime()

    @work(thread=True, exclusive=True, group="runtime")
    def load_runtime(self) -> None:
        from workbench.core.approval import ApprovalBroker
        from workbench.core.runtime import load_runtime

        runtime = load_runtime()
        runtime.broker = ApprovalBroker.from_config(runtime.config)
        runtime.registry.add_listener(self._on_registry_change)
        self.app.call_from_thread(self._runtime_ready, runtime)

    def _runtime_ready(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.app.runtime = runtime
        if hasattr(self.app, "attach_approvals"):
            self.app.attach_approvals(runtime.broker)
        self.executor = runtime.executor(broker=runtime.broker)
        self.executor.on_event = lambda event: self.post_message(self.CoreEvent(event))
        self.refresh_tools()
        if runtime.plugins is not None:
            from workbench.core.plugins.watcher import HotReloader

            runtime.plugins.on_event = lambda event: self.post_message(self.CoreEvent(event))
            self._reloader = HotReloader(runtime.plugins)
            self._reloader.start()
        if runtime.config.get("mcp_servers"):
            self.start_mcp()
        from workbench.core.report import collect_problems

        for problem in collect_problems(runtime):
            self.notify(problem, severity="warning", timeout=8)
        # The objects loaded so far live for the whole session: keep the cyclic collector
        # from walking them again and again (its pauses showed as keystroke lag).
        gc.collect()
        gc.freeze()

    @work(thread=True, group="mcp")
    def start_mcp(self) -> None:
        """MCP servers start in the background: the tree fills in as each one is ready."""
        if self.runtime is not None:
            self.runtime.start_mcp(on_event=lambda event: self.post_message(self.CoreEvent(event)))

    def on_unmount(self) -> None:
        if self._reloader is not None:
            self._reloader.stop(timeout=0.5)
        if self.runtime is not None:
            self.runtime.stop_mcp()
        if self.executor is not None:
            self.executor.shutdown()

    # -- registry and core events ------------------------------------------------------

    def _on_registry_change(self, event: RegistryChanged) -> None:
        from workbench.core.events import ChangeKind

        refused = event.reason if event.kind is ChangeKind.REJECTED else ""
        self.post_message(self.RegistryUpdated(refused))

    def on_main_screen_registry_updated(self, message: RegistryUpdated) -> None:
        if message.refused:
            self.notify(message.refused, title="Tool refused", severity="warning", timeout=10)
        self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        """Rebuild the tools view soon, once for a burst of changes."""
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(REFRESH_DELAY, self.refresh_tools)

    def on_main_screen_core_event(self, message: CoreEvent) -> None:
        event, kind = message.event, type(message.event).__name__
        if kind == "PluginChanged":
            self._plugin_event(event)
            self._schedule_refresh()  # a memory provider's tools are not in the registry
        elif kind == "ServerChanged":
            self._server_event(event)
        elif kind == "ToolsChanged" and self._mcp_announced(event.server):
            changes = " ".join(
                c
                for c in (
                    f"+{len(event.added)}" * bool(event.added),
                    f"-{len(event.removed)}" * bool(event.removed),
                )
                if c
            )
            self.notify(f"tools changed: {changes}", title=f"MCP server {event.server}")
        elif kind == "ToolCallFinished":
            self._record_call(event)
        if kind in ("ToolCallStarted", "ToolCallFinished") and hasattr(self.app, "record_call"):
            self.app.record_call(event)
        if kind in ("PluginChanged", "ServerChanged", "ToolsChanged"):
            self.refresh_sources()

    def _server_event(self, event: Any) -> None:
        """Warn once per outage (and again when the server is parked), not on every retry."""
        warned = self.__dict__.setdefault("_mcp_warned", set())
        if event.state == "ready":
            warned.difference_update({(event.server, "reconnecting"), (event.server, "parked")})
        elif (
            event.state in ("reconnecting", "parked")
            and event.error
            and (event.server, event.state) not in warned
        ):
            warned.add((event.server, event.state))
            self.notify(
                event.error, title=f"MCP server {event.server} {event.state}", severity="warning"
            )

    def _plugin_event(self, event: Any) -> None:
        if event.status == "failed":
            self.notify(
                f"{event.key}: {event.error}", title="Plugin failed", severity="error", timeout=10
            )
        elif event.status in ("reloaded", "removed"):
            state = (
                self.runtime.plugins.states.get(event.key)
                if self.runtime and self.runtime.plugins
                else None
            )
            self.notify(
                state.last_change if state else f"{event.key} {event.status}",
                title=f"Plugin {event.key}",
            )

    def _mcp_announced(self, server: str) -> bool:
        """A server's first listing is not news; later changes are."""
        first = server not in self._mcp_seen
        self._mcp_seen.add(server)
        return not first

    # -- views -------------------------------------------------------------------------

    def refresh_tools(self) -> None:
        from workbench.core.report import tool_rows, toolset_rows

        self._refresh_pending = False
        if self.runtime is None:
            return
        self._rows = tool_rows(self.runtime)
        self._toolset_rows = toolset_rows(self.runtime)
        memory = self.runtime.memory
        self._memory_rows = (memory.active_name, memory.tools())
        self.apply_filter()
        self.refresh_sources()
        self._show_detail(self.query_one(ToolsTree).cursor_node)

    def apply_filter(self) -> None:
        query = self.query_one("#filter", Input).value
        matching = self.query_one(ToolsTree).show_rows(
            self._rows,
            getattr(self, "_toolset_rows", []),
            query,
            getattr(self, "_memory_rows", None),  # read with the tools, not per keystroke
        )
        offered = sum(r["offered"] for r in self._rows)
        shown = f" · {matching} match" if query.strip() else ""
        self.query_one("#status-line", Static).update(
            f"{len(self._rows)} tools{shown} · {offered} offered to the model (o lists them) · "
            "space toggles a toolset · F2 runs a tool · F1 help",
            layout=False,  # one fixed line: no need to lay the screen out again per keystroke
        )
        self._update_header(offered)

    def _update_header(self, offered: int) -> None:
        runtime = self.runtime
        parts = [f"{len(self._rows)} tools", f"{offered} offered"]
        if runtime is not None:  # where commands run: local, sandboxed, ssh, refused
            parts.append(runtime.backend().label())
        if runtime is not None and runtime.mcp is not None:
            servers = runtime.mcp.statuses()
            parts.append(f"MCP {sum(s.state == 'ready' for s in servers)}/{len(servers)} ready")
        if runtime is not None and runtime.plugins is not None:
            parts.append(f"{sum(s.status == 'loaded' for s in runtime.plugins.list())} plugin(s)")
        title = " · ".join(parts)
        if title != self.sub_title:
            self.sub_title = title

    def refresh_sources(self) -> None:
        if self.runtime is None:
            return
        servers = self.runtime.mcp.statuses() if self.runtime.mcp is not None else []
        plugins = self.runtime.plugins.list() if self.runtime.plugins is not None else []
        self.query_one(SourcesPanel).show(servers, plugins)
        self._update_header(sum(r["offered"] for r in self._rows))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        """Enter in the filter: to the tree, on the first matching tool."""
        tree = self.query_one(ToolsTree)
        tree.focus()
        for line in range(tree.last_line + 1):
            node = tree.get_node_at_line(line)
            if node is not None and node.data and node.data.get("kind") == "tool":
                tree.move_cursor(node)
                return

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._show_detail(event.node)

    def _show_detail(self, node: Any) -> None:
        data = node.data if node is not None else None
        detail = self.query_one(ToolDetail)
        form = self.query_one(RunToolForm)
        if not data or data.get("kind") != "tool" or self.runtime is None:
            detail.show(None)
            return
        name = data["name"]
        schema = self.runtime.registry.get_schema(name)
        detail.show(data, schema, list(self.history[name]))
        self.run_worker(form.show(name, schema), group="form", exclusive=True)

    # -- actions -----------------------------------------------------------------------

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_focus_tree(self) -> None:
        self.query_one(ToolsTree).focus()

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        target = {"run": RunToolForm, "sources": SourcesPanel, "detail": ToolDetail}[tab]
        widget = self.query_one(target)
        if tab == "sources":
            from textual.widgets import DataTable

            tables = [t for t in widget.query(DataTable) if t.display]
            (tables[0] if tables else widget).focus()
        elif tab == "run":
            focusable = [w for w in widget.query("Input, TextArea, Select, Checkbox")]
            (focusable[0] if focusable else widget).focus()

    def action_show_offered(self) -> None:
        from workbench.screens.pick import PickScreen

        names = sorted(r["name"] for r in self._rows if r["offered"])
        self.app.push_screen(PickScreen(f"{len(names)} tools offered to the model", names))

    def select_tool(self, name: str) -> None:
        tree = self.query_one(ToolsTree)
        for line in range(tree.last_line + 1):
            node = tree.get_node_at_line(line)
            if (
                node is not None
                and node.data
                and node.data.get("kind") == "tool"
                and node.data["name"] == name
            ):
                tree.move_cursor(node)
                tree.focus()
                return

    @on(ToolsTree.ToolsetToggled)
    def _toggle(self, event: ToolsTree.ToolsetToggled) -> None:
        self.save_toolset(event.toolset, event.enabled)

    @work(thread=True, group="config")
    def save_toolset(self, toolset: str, enabled: bool) -> None:
        from workbench.core.config import ConfigError
        from workbench.core.toolsets import ToolsetError, set_toolset_enabled

        runtime = self.runtime
        if runtime is None:
            return
        try:
            set_toolset_enabled(toolset, enabled, runtime.toolsets, runtime.config)
        except (ConfigError, ToolsetError) as exc:
            self.app.call_from_thread(self.notify, f"{exc}\nNothing was changed.", severity="error")
            return
        runtime.reload_config()
        state = "enabled" if enabled else "disabled"
        self.app.call_from_thread(self.notify, f"Toolset {toolset} {state}")
        self.app.call_from_thread(self.refresh_tools)

    @on(RunToolForm.RunRequested)
    async def _run_requested(self, event: RunToolForm.RunRequested) -> None:
        self.run_tool(event.tool, event.arguments)

    @work(exclusive=False, group="calls")
    async def run_tool(self, tool: str, arguments: dict[str, Any]) -> None:
        """Through the executor, as the agent would call it (approvals, timeouts, budgets)."""
        if self.executor is None:
            return
        call_id = f"form-{time.monotonic_ns()}"
        (outcome,) = await self.executor.run(
            [{"id": call_id, "name": tool, "arguments": arguments}]
        )
        duration = (outcome.finished or 0) - (outcome.started or outcome.finished or 0)
        form = self.query_one(RunToolForm)
        if form.tool == tool:
            form.show_result(
                outcome.status, outcome.content, duration, str(outcome.spilled or "") or None
            )

    def _record_call(self, event: Any) -> None:
        summary = event.content if isinstance(event.content, str) else "<multimodal result>"
        summary = summary.replace("\n", " ")[:60]
        record = CallRecord(time.strftime("%H:%M:%S"), event.status, event.duration, summary)
        self.history[event.name].append(record)
        node = self.query_one(ToolsTree).cursor_node
        if node is not None and node.data and node.data.get("name") == event.name:
            self._show_detail(node)

    @on(SourcesPanel.Action)
    def _source_action(self, event: SourcesPanel.Action) -> None:
        self.act_on_source(event.action, event.name)

    @work(thread=True, group="sources")
    def act_on_source(self, action: str, name: str) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        try:
            if action == "restart" and runtime.mcp is not None:
                runtime.mcp.restart(name)
                message = f"restarting MCP server {name}"
            elif runtime.plugins is not None and action in ("enable", "disable"):
                state = runtime.plugins.set_enabled(name, action == "enable")
                message = f"plugin {name}: {state.status}"
            elif runtime.plugins is not None and action == "reload":
                state = runtime.plugins.reload(name)
                message = f"plugin {name}: {state.last_change or state.status}"
            else:
                return
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"{action} {name}: {exc}", severity="error")
            return
        self.app.call_from_thread(self.notify, message)
        self.app.call_from_thread(self.refresh_sources)
        self.app.call_from_thread(self.refresh_tools)
