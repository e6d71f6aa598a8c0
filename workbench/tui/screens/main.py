"""The workbench's main screen: the tools tree beside a tool's details, its run form and the sources.

The screen owns no part of the core: the app's controller loads it, runs it and keeps the
rows and the call history this screen shows. The app hands it the core's events through
`core_event`; bursts of registry changes repaint once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static, Tree

from workbench.tui.widgets.tools_tree import ToolsTree

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

    from workbench.core.agent.offered import Costs
    from workbench.core.events import (
        CoreEvent,
        PluginChanged,
        ServerChanged,
        ToolCallFinished,
        ToolsChanged,
    )
    from workbench.core.history import CallEntry
    from workbench.tui.controller import Controller
    from workbench.tui.widgets.call_history import CallHistoryList
    from workbench.tui.widgets.run_form import RunToolForm

REFRESH_DELAY = 0.05  # a burst of registry changes repaints once
PREVIEW_DELAY = 0.15  # the cursor rests this long before a switch's change is measured


class FilterInput(Input):
    """The filter box: the tree is filtered in the same step as the keystroke, so both show
    in one frame (a `Changed` message would cost a frame of its own)."""

    def _watch_value(self, value: str) -> None:
        super()._watch_value(value)
        if isinstance(self.screen, MainScreen):
            self.screen.apply_filter()


class MainFooter(Footer):
    """The footer's keys, drawn once the first frame is on screen: composing them when the
    tree takes the focus held the first frame back by about as long as the tree and the
    tabs took. Until then the bar is in its place, empty."""

    keys_shown = False

    def bindings_changed(self, screen: Screen) -> None:
        if self.keys_shown:
            super().bindings_changed(screen)

    def show_keys(self) -> None:
        self.keys_shown = True
        # From the footer's own loop: its keys are composed with the footer as their parent.
        self.call_later(self.bindings_changed, self.screen)


class MainScreen(Screen[None]):
    CSS_PATH = "main.tcss"  # its layout, beside it
    AUTO_FOCUS = "ToolsTree"
    BINDINGS = [
        # `/` and Enter in the filter move the focus, so they act as the key is read (priority):
        # a key read with them (typed while the app was busy, or fast) goes where they sent it.
        Binding("slash", "focus_filter", "Filter", id="main.filter", priority=True),
        Binding(
            "enter", "filter_submitted", "First match", id="main.first", show=False, priority=True
        ),
        Binding("f2", "show_tab('run')", "Run form", id="main.run"),
        Binding("f3", "show_tab('sources')", "Sources", id="main.sources"),
        Binding("f4", "show_tab('detail')", "Detail", id="main.detail"),
        Binding("o", "show_offered", "Offered tools", id="main.offered"),
        Binding("u", "show_usage", "Tool use", id="main.usage"),
        Binding("m", "check_model", "Model check", id="main.model_check"),
        Binding("escape", "focus_tree", "Back to the tree", id="main.tree", show=False),
    ]

    def __init__(self, controller: Controller) -> None:
        super().__init__()
        self.controller = controller
        self._refresh_pending = False
        self._preview_timer: Timer | None = None
        self._previewing: tuple[str, str, bool, bool] | None = None  # kind, name, on, hovered
        self._mcp_seen: set[str] = set()  # servers whose first listing has come
        self._mcp_warned: set[tuple[str, str]] = set()  # (server, state) said once per outage
        self._status = ""  # the status line's text, as last shown
        self._said_warnings: tuple[str, ...] = ()  # tools.tool_search values not taken, said
        self._offered_title: str | None = None  # the tree's border title, as last set

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            with Vertical(id="left"):
                yield FilterInput(placeholder="Filter tools ( / )", id="filter")
                yield ToolsTree(id="tools-tree")
            yield Static(id="right-loading")  # the tabs' place, until `after_first_frame`
        yield Static("Loading tools…", id="status-line")
        yield MainFooter()

    async def after_first_frame(self) -> None:
        """The footer's keys, and the tabs: a tool's detail, its run form and the sources.
        Their widgets' imports, styles and layout took as long as the rest of the first
        frame; nothing is in them before the core loads, which the app starts after this."""
        from textual.widgets import TabbedContent, TabPane

        from workbench.tui.widgets.run_form import RunToolForm
        from workbench.tui.widgets.sources import SourcesPanel
        from workbench.tui.widgets.tool_detail import ToolDetail

        self.query_one(MainFooter).show_keys()
        tabs = TabbedContent(id="right", initial="detail")
        for pane in (
            TabPane("Detail", ToolDetail(id="tool-detail"), id="detail"),
            TabPane("Run", RunToolForm(id="run-form"), id="run"),
            TabPane("Sources", SourcesPanel(id="sources-panel"), id="sources"),
        ):
            tabs.compose_add_child(pane)  # as `with TabbedContent():` in `compose` does
        placeholder = self.query_one("#right-loading")
        with self.app.batch_update():  # the tabs take the placeholder's place in one frame
            await self.query_one("#panes").mount(tabs, after=placeholder)
            await placeholder.remove()

    # -- the core's events ------------------------------------------------------------

    def on_mount(self) -> None:
        if self.controller.loaded:  # loaded before this screen was mounted
            self.refresh_tools()

    def runtime_ready(self) -> None:
        """The controller has loaded the core: show its tools (now, or once mounted)."""
        if self.is_mounted:
            self.refresh_tools()

    def core_event(self, event: CoreEvent) -> None:
        """One event from the core (the app hands on every one it receives)."""
        from workbench.core.events import (
            ChangeKind,
            PluginChanged,
            RegistryChanged,
            ServerChanged,
            ToolCallFinished,
            ToolsChanged,
        )

        match event:
            case RegistryChanged(kind=ChangeKind.REJECTED, reason=reason):
                self.notify(reason, title="Tool refused", severity="warning", timeout=10)
                self._schedule_refresh()
            case RegistryChanged():
                self._schedule_refresh()
            case PluginChanged():
                self._plugin_changed(event)
                self._schedule_refresh()  # a memory provider's tools are not in the registry
                self.refresh_sources()
            case ServerChanged():
                self._server_changed(event)
                self.refresh_sources()
            case ToolsChanged():
                self._tools_changed(event)
                self.refresh_sources()
            case ToolCallFinished():
                self._call_finished(event)

    def _schedule_refresh(self) -> None:
        """Rebuild the tools view soon, once for a burst of changes."""
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(REFRESH_DELAY, self.refresh_tools)

    def _tools_changed(self, event: ToolsChanged) -> None:
        if not self._mcp_announced(event.server):
            return
        added = f"+{len(event.added)}" if event.added else ""
        removed = f"-{len(event.removed)}" if event.removed else ""
        changes = " ".join(c for c in (added, removed) if c)
        self.notify(f"tools changed: {changes}", title=f"MCP server {event.server}")

    def _server_changed(self, event: ServerChanged) -> None:
        """Warn once per outage (and again when the server is parked), not on every retry."""
        warned = self._mcp_warned
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

    def _plugin_changed(self, event: PluginChanged) -> None:
        if event.status == "failed":
            self.notify(
                f"{event.key}: {event.error}", title="Plugin failed", severity="error", timeout=10
            )
        elif event.status in ("reloaded", "removed"):
            change = self.controller.plugin_change(event.key)
            self.notify(
                change or f"{event.key} {event.status}",
                title=f"Plugin {event.key}",
            )

    def _mcp_announced(self, server: str) -> bool:
        """A server's first listing is not news; later changes are."""
        first = server not in self._mcp_seen
        self._mcp_seen.add(server)
        return not first

    # -- views -------------------------------------------------------------------------

    def refresh_tools(self) -> None:
        self._refresh_pending = False
        if not self.controller.loaded:
            return
        self.controller.refresh_rows()
        self.apply_filter()
        self._show_offered()
        self.refresh_sources()
        self._show_detail(self.query_one(ToolsTree).cursor_node)
        self._measure()

    @work(thread=True, exclusive=True, group="costs")
    def _measure(self) -> None:
        """Sizes in tokens, off the UI thread (the tokenizer's table loads the first time)."""
        costs = self.controller.measure()
        if costs is not None:
            self.app.call_from_thread(self._measured, costs)

    def _widgets_gone(self) -> bool:
        """A worker's answer that comes while the app closes finds the widgets going."""
        return not self.is_attached or not self.query("#status-line")

    def _measured(self, costs: Costs) -> None:
        self.controller.measured(costs)
        if self._widgets_gone():
            return
        self.apply_filter()
        self._show_offered()
        self.refresh_sources()
        self._preview(self.query_one(ToolsTree).cursor_node)
        if costs.warnings != self._said_warnings:  # once per change of config.yaml
            self._said_warnings = costs.warnings
            for warning in costs.warnings:
                self.notify(warning, title="config.yaml", severity="warning", timeout=12)

    def apply_filter(self) -> None:
        """The tree and the status line's count for the filter's query: on every keystroke,
        so what depends on the tools alone is shown where they change (`_show_offered`, the
        header in `refresh_sources`)."""
        query = self.query_one("#filter", Input).value
        rows = self.controller.rows  # read with the tools, not per keystroke
        tree = self.query_one(ToolsTree)
        matching = tree.show_rows(
            rows.tools, rows.toolsets, query, rows.memory, rows.sizes, rows.skills
        )
        shown = f" · {matching} match" if query.strip() else ""
        status = (
            f"{len(rows.tools)} tools{shown} · {rows.offered} offered to the model (o lists "
            "them) · space toggles a toolset · x a tool · F2 runs a tool · F1 help"
        )
        if status != self._status:  # the same line again would be parsed and painted again
            self._status = status
            # One fixed line: no need to lay the screen out again per keystroke.
            self.query_one("#status-line", Static).update(status, layout=False)

    def _show_offered(self) -> None:
        """What the model is offered, above the tree: once per change of the tools or their
        sizes, as the header (`refresh_sources`); setting a border title repaints the tree."""
        title = offered_title(self.controller.rows.costs)
        if title != self._offered_title:
            self._offered_title = self.query_one(ToolsTree).border_title = title

    def _update_header(self, offered: int) -> None:
        parts = [f"{len(self.controller.rows.tools)} tools", f"{offered} offered"]
        if self.controller.loaded:  # where commands run: local, sandboxed, ssh, refused
            parts.append(self.controller.where())
        sources = self.controller.sources()
        if sources.mcp_on:
            servers = sources.servers
            parts.append(f"MCP {sum(s.state == 'ready' for s in servers)}/{len(servers)} ready")
        if sources.plugins_on:
            parts.append(f"{sum(s.status == 'loaded' for s in sources.plugins)} plugin(s)")
        # what doctor says in full: a plugin that would replace the MCP SDK, or one that did
        if sources.conflicting:
            parts.append("⚠ plugin conflict")
        if sources.sdk_problem:
            parts.append("⚠ MCP SDK")
        title = " · ".join(parts)
        if title != self.sub_title:
            self.sub_title = title

    def refresh_sources(self) -> None:
        from workbench.tui.widgets.sources import SourcesPanel

        if not self.controller.loaded:
            return
        sources = self.controller.sources()
        rows = self.controller.rows
        panel = self.query_one(SourcesPanel)
        panel.show(sources.servers, sources.plugins, rows.sizes, rows.switched_on())
        self._update_header(self.controller.rows.offered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`/` is a character to type wherever one is typed; Enter is the filter's only there."""
        from textual.widgets import TextArea

        focused = self.app.focused
        if action == "focus_filter":
            return not isinstance(focused, (Input, TextArea))
        if action == "filter_submitted":
            return isinstance(focused, FilterInput)
        return True

    def action_filter_submitted(self) -> None:
        """Enter in the filter: to the tree, on the first matching tool."""
        tree = self.query_one(ToolsTree)
        self.focus_now(tree)
        for line in range(tree.last_line + 1):
            node = tree.get_node_at_line(line)
            if node is not None and node.data and node.data.get("kind") == "tool":
                tree.move_cursor(node)
                return

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._show_detail(event.node)
        self._preview(event.node)

    @on(ToolsTree.Hovered)
    def _hovered(self, event: ToolsTree.Hovered) -> None:
        data = event.node.data if event.node is not None else None
        if data and data.get("kind") in ("toolset", "tool"):
            self._preview(event.node, hovered=True)
        else:  # the mouse has left them: back to the cursor's
            self._preview(self.query_one(ToolsTree).cursor_node)

    def _preview(self, node: Any, hovered: bool = False) -> None:
        """What switching the toolset or tool under the cursor (or the mouse) would change,
        said before it is saved, in the tree's lower border."""
        data = node.data if node is not None else None
        self.query_one(ToolsTree).border_subtitle = ""  # until this one's is measured
        self._previewing = None
        if not data or data.get("kind") not in ("toolset", "tool"):
            return
        if data["kind"] == "toolset":
            change = ("toolset", data["name"], not data["enabled"])
        else:
            change = ("tool", data["name"], bool(data.get("switched_off")))
        self._previewing = (*change, hovered)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        # once the cursor rests: a preview measures every tool again, so not at every row
        # a held arrow key passes
        self._preview_timer = self.set_timer(PREVIEW_DELAY, lambda: self._previewed(*change))

    @work(thread=True, exclusive=True, group="preview")
    def _previewed(self, kind: str, name: str, enabled: bool) -> None:
        tokens = self.controller.preview(kind, name, enabled)
        deferring = self.controller.deferral_switch(name) if kind == "tool" else None
        deferral = (  # and what d would change: a tool deferred, or sent in full again
            None if deferring is None else self.controller.preview("defer", name, deferring)
        )
        self.app.call_from_thread(
            self._show_preview, kind, name, enabled, tokens, (deferring, deferral)
        )

    def _show_preview(
        self,
        kind: str,
        name: str,
        enabled: bool,
        tokens: int | None,
        deferral: tuple[bool | None, int | None] = (None, None),
    ) -> None:
        if self._widgets_gone() or self._previewing is None or tokens is None:
            return
        if self._previewing[:3] != (kind, name, enabled):
            return  # the cursor has moved on; its own preview follows
        verb = "on" if enabled else "off"  # short: the lower border of a narrow pane
        key = name if self._previewing[3] else "space" if kind == "toolset" else "x"
        from workbench.core.agent.context import signed

        said = f"{key}: {verb}, {signed(tokens)} tokens"
        deferring, change = deferral
        if deferring is not None and change is not None:
            said += f" · d: {'defer' if deferring else 'send in full'}, {signed(change)}"
        self.query_one(ToolsTree).border_subtitle = said

    def _show_detail(self, node: Any) -> None:
        if not self.controller.loaded:  # nothing to show yet (the tabs may not be mounted yet)
            return
        from workbench.tui.widgets.tool_detail import ToolDetail

        data = node.data if node is not None else None
        detail = self.query_one(ToolDetail)
        if not data or data.get("kind") != "tool":
            detail.show(None)
            return
        from workbench.tui.widgets.run_form import RunToolForm  # with the core: mounted by then

        name = data["name"]
        schema = self.controller.schema(name)
        costs = self.controller.rows.costs
        cost = costs.tools.get(name) if costs is not None and costs.deferred else None
        if cost is not None and cost.offered:
            data = {**data, "sent": SENT_WORDS[cost.state.value]}
        detail.show(data, schema, self.controller.calls(name))
        self._say_history_problems()
        form = self.query_one(RunToolForm)
        self.run_worker(form.show(name, schema), group="form", exclusive=True)

    def _say_history_problems(self) -> None:
        """A damaged history file was set aside when read: said once."""
        history = self.controller.history
        while history is not None and history.problems:
            self.notify(history.problems.pop(0), title="Call history", severity="warning")

    # -- actions -----------------------------------------------------------------------

    def focus_now(self, widget: Widget) -> None:
        """Focus `widget` before the next key is handled. `Widget.focus()` waits behind the
        events already queued, so keys that arrive together (typed while the app was busy, or
        by a fast typist) after `/` or Enter went to the widget they were leaving."""
        self.set_focus(widget)

    def action_focus_filter(self) -> None:
        self.focus_now(self.query_one("#filter", Input))

    def action_focus_tree(self) -> None:
        self.focus_now(self.query_one(ToolsTree))

    def action_show_tab(self, tab: str) -> None:
        from textual.widgets import TabbedContent

        from workbench.tui.widgets.call_history import CallHistoryList
        from workbench.tui.widgets.run_form import RunToolForm
        from workbench.tui.widgets.sources import SourcesPanel
        from workbench.tui.widgets.tool_detail import ToolDetail

        tabs = self.query(TabbedContent)
        if not tabs:  # just after the first frame: mounted in a moment
            return
        tabs.first().active = tab
        panels: dict[str, type[Widget]] = {
            "run": RunToolForm,
            "sources": SourcesPanel,
            "detail": ToolDetail,
        }
        target = panels[tab]
        widget = self.query_one(target)
        if tab == "sources":
            from textual.widgets import DataTable

            tables = [t for t in widget.query(DataTable) if t.display]
            self.focus_now(tables[0] if tables else widget)
        elif tab == "run":
            focusable = [w for w in widget.query("Input, TextArea, Select, Checkbox")]
            self.focus_now(focusable[0] if focusable else widget)
        elif tab == "detail":
            calls = widget.query_one(CallHistoryList)
            if calls.display:  # the keys of a tool's kept calls work from here
                self.focus_now(calls)

    def action_show_offered(self) -> None:
        """What the model receives on every request, largest first, with each one's size."""
        from workbench.core.agent.context import short
        from workbench.tui.screens.pick import PickScreen

        costs = self.controller.rows.costs
        if costs is None:
            names = sorted(r["name"] for r in self.controller.rows.tools if r["offered"])
            self.app.push_screen(PickScreen(f"{len(names)} tools offered to the model", names))
            return
        states = {"listed": "  deferred, listed", "searchable": "  deferred, search only"}
        items = [
            f"{short(c.tokens):>6}  {c.name}  ({c.toolset}){states.get(c.state.value, '')}"
            for c in costs.offered
        ]
        names = [c.name for c in costs.offered]
        if costs.bridge:  # what is sent for the deferred tools, in their place
            items.append(
                f"{short(costs.bridge):>6}  tool_search, tool_describe, tool_call "
                f"(sent for the {len(costs.deferred)} deferred; listing: {costs.listing_form})"
            )
        sent = f"{len(costs.offered) - len(costs.deferred)} sent in full" if costs.bridge else ""
        title = (
            f"The model is offered {len(costs.offered)} tools"
            + (f" ({sent})" if sent else "")
            + f", {short(costs.total)} tokens each request (largest first)\n{costs.describe()}"
        )

        def chosen(item: str | None) -> None:
            if item is not None and items.index(item) < len(names):
                self.select_tool(names[items.index(item)])

        self.app.push_screen(PickScreen(title, items), chosen)

    def action_show_usage(self) -> None:
        """Each tool's cost beside its use in past sessions, and what to defer or switch off."""
        from workbench.tui.screens.usage import UsageScreen

        self.app.push_screen(UsageScreen(self.controller))

    def action_check_model(self) -> None:
        """Does the model endpoint return tool calls the agent can use (`doctor model`)."""
        from workbench.tui.screens.model_check import ModelCheckScreen

        self.app.push_screen(ModelCheckScreen(self.controller))

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
                self.focus_now(tree)
                return

    def on_run_tool_form_run_requested(self, event: RunToolForm.RunRequested) -> None:
        """The run form's Run (its class's module loads after the first frame, hence the
        handler's name rather than `@on`)."""
        self.run_tool(event.tool, event.arguments)

    @work(exclusive=False, group="calls")
    async def run_tool(self, tool: str, arguments: dict[str, Any]) -> None:
        """Through the executor, as the agent would call it; the result shows in the form."""
        outcome = await self.controller.run_tool(tool, arguments)
        if outcome is None:
            return
        from workbench.tui.widgets.run_form import RunToolForm

        duration = (outcome.finished or 0) - (outcome.started or outcome.finished or 0)
        form = self.query_one(RunToolForm)
        if form.tool == tool:
            form.show_result(
                outcome.status, outcome.content, duration, str(outcome.spilled or "") or None
            )

    # -- kept calls --------------------------------------------------------------------

    def on_call_history_list_act(self, event: CallHistoryList.Act) -> None:
        """A kept call's key (handled by name: the list's module loads after the first frame)."""
        call: CallEntry = event.call
        if event.action == "pin":
            self.controller.pin(call)
            self._show_calls(event.tool)
        elif not call.can_rerun:
            self.notify(call.note or "this call's arguments were not kept", severity="warning")
        elif event.action == "rerun":
            self.notify(f"re-running {call.tool} with the same arguments", timeout=3)
            self.run_tool(call.tool, dict(call.arguments or {}))
        elif event.action == "edit":
            self.edit_call(call)
        elif event.action == "save":
            from workbench.tui.screens.save_case import SaveCaseScreen

            self.app.push_screen(SaveCaseScreen(call), self._case_chosen)

    def _show_calls(self, tool: str) -> None:
        from workbench.tui.widgets.tool_detail import ToolDetail

        self.query_one(ToolDetail).show_calls(tool, self.controller.calls(tool))

    @work(exclusive=True, group="form")
    async def edit_call(self, call: CallEntry) -> None:
        """The call's arguments in the run form, to change and run (ctrl+r)."""
        from workbench.tui.widgets.call_history import when
        from workbench.tui.widgets.run_form import RunToolForm

        if not self.controller.loaded:
            return
        form = self.query_one(RunToolForm)
        await form.show(call.tool, self.controller.schema(call.tool))
        if form.tool != call.tool:
            return
        extra = form.fill(dict(call.arguments or {}))
        self.action_show_tab("run")
        form.set_status(f"arguments of the call at {when(call.at)}; ctrl+r runs it")
        if extra:
            self.notify(f"no field for {', '.join(extra)}: left out", severity="warning")

    def _case_chosen(self, chosen: Any) -> None:
        if chosen is not None:
            self.save_case(*chosen)

    @work(thread=True, group="cases")
    def save_case(self, path: Any, case: Any) -> None:
        from workbench.core.replay.cases import CaseFileError, append

        home = self.controller.home
        try:
            number = append(path, case, locks=home / "state" / "locks" if home else None)
        except CaseFileError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Not saved", severity="error")
            return
        self.app.call_from_thread(
            self.notify,
            f"case {number} of {path}; `hermes-tui replay {path}` runs it",
            title="Saved as a test",
        )

    def _call_finished(self, event: ToolCallFinished) -> None:
        """A call's record is in the controller's history: redraw its tool's detail."""
        node = self.query_one(ToolsTree).cursor_node
        if node is not None and node.data and node.data.get("name") == event.name:
            self._show_detail(node)


# How an offered tool is sent, said in its detail once deferral is on (core.tools.deferral).
SENT_WORDS = {
    "eager": "sent in full with every request",
    "listed": "deferred behind tool_search, named in its listing",
    "searchable": "deferred behind tool_search, found only by a search",
}


def offered_title(costs: Costs | None) -> str:
    """`31 offered · 8.4k tokens` (`~8.4k` when estimated), always in sight (short: the
    upper border of a narrow pane)."""
    from workbench.core.agent.context import short

    if costs is None:
        return "measuring…"
    about = "" if costs.exact else "~"
    return f"{len(costs.offered)} offered · {about}{short(costs.total)} tokens"
