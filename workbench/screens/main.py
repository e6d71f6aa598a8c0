"""The workbench's main screen: the tools tree beside the selected tool's details."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, Tree

from workbench.widgets.tool_detail import ToolDetail
from workbench.widgets.tools_tree import ToolsTree

if TYPE_CHECKING:
    from workbench.core.events import RegistryChanged
    from workbench.core.runtime import Runtime

REFRESH_DELAY = 0.05  # a burst of registry changes repaints once


class MainScreen(Screen[None]):
    AUTO_FOCUS = "ToolsTree"

    class RegistryUpdated(Message):
        """Posted from any thread when the registry changed; `refused` says why one was refused."""

        def __init__(self, refused: str = "") -> None:
            super().__init__()
            self.refused = refused

    class PluginEvent(Message):
        """A plugin was loaded, reloaded, removed or failed (posted from the watcher thread)."""

        def __init__(self, event: object) -> None:
            super().__init__()
            self.event = event

    def __init__(self) -> None:
        super().__init__()
        self.runtime: Runtime | None = None
        self._refresh_pending = False
        self._reloader = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            yield ToolsTree(id="tools-tree")
            yield ToolDetail(id="tool-detail")
        yield Static("Loading tools…", id="status-line")
        yield Footer()

    def on_mount(self) -> None:
        self.load_runtime()

    @work(thread=True, exclusive=True, group="runtime")
    def load_runtime(self) -> None:
        from workbench.core.runtime import load_runtime

        runtime = load_runtime()
        runtime.registry.add_listener(self._on_registry_change)
        self.app.call_from_thread(self._runtime_ready, runtime)

    def _runtime_ready(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.refresh_tools()
        if runtime.plugins is not None:
            from workbench.core.plugins.watcher import HotReloader

            runtime.plugins.on_event = lambda event: self.post_message(self.PluginEvent(event))
            self._reloader = HotReloader(runtime.plugins)
            self._reloader.start()
        if runtime.config.get("mcp_servers"):
            self.start_mcp()
        from workbench.core.report import collect_problems

        for problem in collect_problems(runtime):
            self.notify(problem, severity="warning", timeout=8)

    @work(thread=True, group="mcp")
    def start_mcp(self) -> None:
        """MCP servers start in the background: the tree fills in as each one is ready."""
        if self.runtime is not None:
            self.runtime.start_mcp(on_event=lambda event: self.post_message(self.MCPEvent(event)))

    def _on_registry_change(self, event: RegistryChanged) -> None:
        from workbench.core.events import ChangeKind

        refused = event.reason if event.kind is ChangeKind.REJECTED else ""
        self.post_message(self.RegistryUpdated(refused))

    def on_main_screen_plugin_event(self, message: PluginEvent) -> None:
        event = message.event
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

    class MCPEvent(Message):
        """An MCP server changed state or tools (posted from the MCP thread)."""

        def __init__(self, event: object) -> None:
            super().__init__()
            self.event = event

    def on_main_screen_mcp_event(self, message: MCPEvent) -> None:
        from workbench.core.mcp import ServerChanged, ToolsChanged

        event = message.event
        if (
            isinstance(event, ServerChanged)
            and event.state in ("reconnecting", "parked")
            and event.error
        ):
            self.notify(
                event.error, title=f"MCP server {event.server} {event.state}", severity="warning"
            )
        elif (
            isinstance(event, ToolsChanged)
            and (event.added or event.removed)
            and self._mcp_announced(event)
        ):
            changes = [
                f"+{len(event.added)}" if event.added else "",
                f"-{len(event.removed)}" if event.removed else "",
            ]
            self.notify(
                f"tools changed: {' '.join(c for c in changes if c)}",
                title=f"MCP server {event.server}",
            )

    def _mcp_announced(self, event: object) -> bool:
        """The first listing of a server is not news; later changes are."""
        seen = self.__dict__.setdefault("_mcp_seen", set())
        first = event.server not in seen
        seen.add(event.server)
        return not first

    def on_unmount(self) -> None:
        if self._reloader is not None:
            self._reloader.stop(timeout=0.5)
        if self.runtime is not None and self.runtime.mcp is not None:
            self.runtime.stop_mcp()

    def on_main_screen_registry_updated(self, message: RegistryUpdated) -> None:
        if message.refused:
            self.notify(message.refused, title="Tool refused", severity="warning", timeout=10)
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(REFRESH_DELAY, self.refresh_tools)

    def refresh_tools(self) -> None:
        from workbench.core.report import tool_rows, toolset_rows

        self._refresh_pending = False
        if self.runtime is None:
            return
        rows = tool_rows(self.runtime)
        self.query_one(ToolsTree).show_rows(rows, toolset_rows(self.runtime))
        offered = sum(r["offered"] for r in rows)
        self.query_one("#status-line", Static).update(
            f"{len(rows)} tools · {offered} offered to the model · space toggles a toolset"
        )
        self._show_detail(self.query_one(ToolsTree).cursor_node)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._show_detail(event.node)

    def _show_detail(self, node: Any) -> None:
        data = node.data if node is not None else None
        detail = self.query_one(ToolDetail)
        if not data or data.get("kind") != "tool" or self.runtime is None:
            detail.show(None)
            return
        detail.show(data, self.runtime.registry.get_schema(data["name"]))

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
