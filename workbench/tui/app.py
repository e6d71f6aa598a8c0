"""The hermes-tui application: screens, the queue of asks, the command palette, help."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Set before Textual is imported, which reads it once. After a frame longer than its
# period, Textual's frame timer waits for the next period but one: at 60 fps a key typed
# while a reply streams waited up to 33 ms for its frame; at 120 fps, 17 ms. Frames are
# drawn only when something changed, so an idle screen costs nothing more.
os.environ.setdefault("TEXTUAL_FPS", "120")

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from workbench import __version__
from workbench.tui.controller import Controller
from workbench.tui.messages import CoreEventArrived
from workbench.tui.screens.main import MainScreen
from workbench.tui.widgets.tools_tree import ToolsTree

if TYPE_CHECKING:
    from workbench.core.asking import Ask
    from workbench.core.checkpoints import Checkpoint, RestoreResult
    from workbench.core.commands import Done, SourceAction
    from workbench.core.events import Asked, CallProgress, CoreEvent, Settled
    from workbench.core.runtime import Runtime
    from workbench.tui.screens.asks import AskQueue
    from workbench.tui.screens.mcp_sources import McpSources
    from workbench.tui.screens.session import SessionScreen
    from workbench.tui.widgets.sources import SourcesPanel
    from workbench.tui.widgets.timeline import TimelineModel


def waiting_for(ask: Ask) -> str:
    """What a call's timeline bar says while its ask waits for a person."""
    return "waiting for approval" if ask.kind == "approval" else "waiting for your answer"


def write_timeline(model: TimelineModel, event: CoreEvent) -> str:
    """The one writer of the timeline: a call of the agent or one run by hand starts or
    ends, a turn begins, a sub-agent starts. Returns "" when nothing changed, "turn" when a
    turn began (its calls are followed live), else "call"."""
    from workbench.core.events import (
        RoundStarted,
        SubagentStarted,
        ToolCallFinished,
        ToolCallStarted,
    )
    from workbench.core.execution.kept import by_hand

    match event:
        case RoundStarted(round=1):
            model.new_turn()
            return "turn"
        case ToolCallStarted():
            if by_hand(event.call_id) and not model.running:  # fitted on its own
                model.new_turn()
            model.started(event)
        case ToolCallFinished():
            model.finished(event)
        case SubagentStarted():
            bar = model.by_id.get(event.call_id)
            if bar is None:
                return ""
            bar.conversation = str(event.transcript) if event.transcript else None
        case _:
            return ""
    return "call"


def for_the_chat(event: CoreEvent) -> bool:
    """Whether the session screen is handed the event: all but the calls run by hand, which
    have no card in the conversation. The screen's own `match` picks what it shows, so the
    kinds of a conversation's events are named in one place."""
    from workbench.core.events import ToolCallFinished, ToolCallStarted
    from workbench.core.execution.kept import by_hand

    match event:
        case ToolCallStarted() | ToolCallFinished():
            return not by_hand(event.call_id)
    return True


def progress_text(event: CallProgress) -> str:
    """`3/4 step three`, `45%`, or `12` when the server gives no total."""
    value, total = event.progress, event.total
    if total and total <= 1000 and total == int(total):
        amount = f"{value:g}/{total:g}"
    elif total:
        amount = f"{100 * value / total:.0f}%"
    else:
        amount = f"{value:g}"
    message = (event.message or "").replace("\n", " ")[:60]
    return f"{amount} {message}".strip()


class WorkbenchApp(App[None]):
    TITLE = "hermes-tui"
    SUB_TITLE = f"tool workbench {__version__}"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("f6", "chat", "Chat", id="app.chat"),
        Binding("f8", "rules", "Approval rules", id="app.rules"),
    ]

    def __init__(self, view: Path | None = None, model_flags: dict[str, str] | None = None) -> None:
        super().__init__()
        self.controller = Controller(self._deliver, model_flags)
        self.asks: AskQueue | None = None  # with the runtime, after the first frame
        self.view_path = view
        self._detach: Callable[[], None] = lambda: None

    @property
    def runtime(self) -> Runtime | None:
        """The core, once loaded (None before)."""
        return self.controller.runtime

    @cached_property
    def timeline_model(self) -> TimelineModel:
        """Every call: the agent's, the run form's, plugins'. Made when first needed, as its
        module (the timeline widget's) is not in the first frame."""
        from workbench.tui.widgets.timeline import TimelineModel

        return TimelineModel()

    @cached_property
    def mcp_ui(self) -> McpSources:
        """A server's resources, prompts and questions. Made when first needed: its module
        loads the MCP layer, which the first frame does without."""
        from workbench.tui.screens.mcp_sources import McpSources

        return McpSources(self)

    def _deliver(self, event: CoreEvent) -> None:
        """The controller's callback, from any thread: on to the app's loop."""
        self.post_message(CoreEventArrived(event))

    def on_mount(self) -> None:
        self.push_screen(MainScreen(self.controller))
        if self.view_path is not None:
            self.open_viewer(self.view_path)
        self.call_after_refresh(self._first_frame)

    # -- the core ----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="runtime")
    def _load_runtime(self) -> None:
        runtime = self.controller.load()
        self.call_from_thread(self._runtime_ready, runtime)

    def _runtime_ready(self, runtime: Runtime) -> None:
        problems = self.controller.start(runtime)
        from workbench.tui.screens.asks import AskQueue

        # from now on the core's asks (approvals, servers' questions, clarify) open modals
        self.asks = AskQueue(self, runtime.asker)
        self._detach = runtime.asker.attach()
        main = self.main
        if main is not None:
            main.runtime_ready()
        if self.controller.wants_mcp:
            self._start_mcp()
        for problem in problems:
            self.notify(problem, severity="warning", timeout=8)
        self._ask_trust()

    @work(exclusive=True, group="trust")
    async def _ask_trust(self) -> None:
        """The project's plugins and rules not as the person last trusted them (first
        sight, or changed, also while the workbench runs): asked, loaded after a yes."""
        import asyncio

        from workbench.core.trust import ask_to_trust

        runtime = self.runtime
        if runtime is None:
            return
        timeout = runtime.broker.timeout if runtime.broker is not None else 60.0
        found = await asyncio.to_thread(runtime.untrusted, self.controller.cwd)
        for trust, changes in found:
            if await ask_to_trust(runtime.asker, trust, timeout):
                await asyncio.to_thread(runtime.trusted_now)
                self.controller.refresh_rows()
                self.notify(f"Trusted {trust.project}/.hermes: its plugins and rules are loaded")
            else:
                self.notify(trust.not_loaded(changes), severity="warning", timeout=10)

    @work(thread=True, group="mcp")
    def _start_mcp(self) -> None:
        """MCP servers start in the background: the tree fills in as each one is ready."""
        self.controller.start_mcp()
        runtime = self.runtime
        if runtime is not None and runtime.mcp is not None:
            self.call_from_thread(self.mcp_ui.attach, runtime.mcp)

    @on(CoreEventArrived)
    def _core_event(self, message: CoreEventArrived) -> None:
        """Every event of the core, the agent's included, arrives here, on the app's loop: the
        app writes the timeline, hands the conversation's events to the session screen (in
        order, as messages), MCP's to their panel, and every event to the main screen."""
        from workbench.core.events import (
            Asked,
            AskSettled,
            CallProgress,
            CatalogChanged,
            PluginChanged,
            ResourceUpdated,
            ServerLog,
            Settled,
        )
        from workbench.core.plugins.manager import HELD

        event = message.event
        changed = write_timeline(self.timeline_model, event)
        session = self._session()
        if changed:
            self._timeline_changed(new_turn=changed == "turn")
        if session is not None and for_the_chat(event):
            session.post_message(CoreEventArrived(event))
        match event:
            case Asked() | Settled():
                self._ask_event(event)
            case CallProgress():
                self._progress(event)
            case ServerLog() | ResourceUpdated() | CatalogChanged() | AskSettled():
                self.mcp_ui.event(event)
            case PluginChanged(status=status) if status == HELD and self.asks is not None:
                self._ask_trust()  # a project plugin changed while it ran: not reloaded unasked
        main = self.main
        if main is not None:
            main.core_event(event)

    def _ask_event(self, event: Asked | Settled) -> None:
        """An ask: its modal queued (or closed), its call's bar marked waiting (or not)."""
        from workbench.core.events import Asked

        if self.asks is not None:
            self.asks.event(event)
        if event.ask.call_id:
            waiting = waiting_for(event.ask) if isinstance(event, Asked) else ""
            self.timeline_model.wait(event.ask.call_id, waiting)
            self._timeline_changed()

    def _progress(self, event: CallProgress) -> None:
        """An MCP call's progress: on its timeline bar and its card in the chat."""
        from workbench.tui.widgets.chat import ChatLog

        bar = self.timeline_model.by_id.get(event.call_id)
        if bar is None:
            return
        bar.progress = progress_text(event)
        self._timeline_changed()
        session = self._session()
        if session is not None:
            card = session.query_one(ChatLog).cards.get(event.call_id)
            if card is not None:
                card.set_progress(bar.progress)

    def _timeline_changed(self, new_turn: bool = False) -> None:
        """The app wrote the timeline: the session screen redraws it."""
        session = self._session()
        if session is not None:
            session.timeline_changed(new_turn)

    def _session(self) -> SessionScreen | None:
        """The session screen, once it has been shown (None before)."""
        from workbench.tui.screens.session import SessionScreen

        try:
            session = self.get_screen("session")
        except KeyError:  # not installed yet: the first frame is still being drawn
            return None
        return session if isinstance(session, SessionScreen) and session.is_mounted else None

    def open_checkpoints(self) -> None:
        """The checkpoints of the working directory the session's calls run in: see, diff,
        restore. A restore is said in the session's conversation too."""
        from workbench.tui.screens.checkpoints import CheckpointsScreen

        store = self.controller.checkpoints()
        if store is None:
            self.notify("Still loading; try again in a moment")
            return
        if isinstance(self.screen, CheckpointsScreen):
            return
        self.push_screen(
            CheckpointsScreen(
                store,
                self.controller.cwd,
                self.controller.session_id,
                self._restored,
                self._turn_running,
            )
        )

    def _turn_running(self) -> bool:
        session = self._session()
        return session is not None and session.busy

    def _restored(self, checkpoint: Checkpoint, result: RestoreResult) -> None:
        session = self._session()
        if session is not None:
            self.call_later(session.restored, checkpoint, result)

    def action_chat(self) -> None:
        """Open the session screen (chat and timeline); F6 there comes back."""
        from workbench.tui.screens.session import SessionScreen

        if not isinstance(self.screen, SessionScreen):
            self.push_screen("session")

    def action_rules(self) -> None:
        """The approval rules: test a call as you type; list, add, edit, delete rules."""
        from workbench.core.policy import RuleBook
        from workbench.tui.screens.rules import RulesScreen

        if isinstance(self.screen, RulesScreen):
            return
        runtime = self.runtime
        if runtime is not None and runtime.broker is not None:
            book = runtime.broker.book  # the running session's rules: changes hold at once
        elif runtime is not None:
            book = RuleBook(runtime.config)
        else:
            self.notify("Still loading; try again in a moment")
            return
        self.push_screen(RulesScreen(self.controller.rule_simulator(), book))

    async def _first_frame(self) -> None:
        """The first frame is on screen: the rest of the screens, then the core (their
        imports, styles and the core's discovery would otherwise hold the interpreter while
        the frame is drawn)."""
        self._record_first_frame()
        main = self.main
        if main is not None:
            await main.after_first_frame()
        from workbench.tui.screens.session import SessionScreen

        # The chat's screen waits for its key (F6) and the core's events, both later.
        self.install_screen(SessionScreen(self.controller, self.timeline_model), name="session")
        self._load_runtime()

    def _record_first_frame(self) -> None:
        """HERMES_TUI_FIRST_FRAME names a file for the frame's time and which of the heavy
        imports had been loaded by then (none should have)."""
        import time

        at = time.time()
        target = os.environ.get("HERMES_TUI_FIRST_FRAME")
        if target:
            import json
            import sys

            from workbench.core.storage.atomic import atomic_write_text

            later = ("openai", "mcp", "yaml", "markdown_it", "workbench.core.runtime")
            heavy = {name: name in sys.modules for name in later}
            atomic_write_text(Path(target), json.dumps({"at": at, "imported": heavy}))

    def on_unmount(self) -> None:
        self._detach()  # anything still waiting is denied, declined or refused
        self.controller.stop()

    @property
    def main(self) -> MainScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    def action_help(self) -> None:
        from workbench.tui.screens.approval import ApprovalScreen
        from workbench.tui.screens.asks import ClarifyScreen
        from workbench.tui.screens.checkpoints import CheckpointsScreen
        from workbench.tui.screens.conversation import ConversationScreen
        from workbench.tui.screens.help import HelpScreen
        from workbench.tui.screens.mcp_asks import (
            ArgumentsScreen,
            ElicitationScreen,
            SamplingScreen,
        )
        from workbench.tui.screens.restore import RestoreScreen
        from workbench.tui.screens.rules import RulesScreen
        from workbench.tui.screens.save_case import SaveCaseScreen
        from workbench.tui.screens.session import SessionScreen
        from workbench.tui.screens.session_search import SessionSearchScreen
        from workbench.tui.screens.trust import TrustScreen
        from workbench.tui.screens.usage import ConfirmChange, UsageScreen
        from workbench.tui.screens.viewer import ViewerScreen
        from workbench.tui.widgets.call_history import CallHistoryList
        from workbench.tui.widgets.chat import PromptArea, ToolCard
        from workbench.tui.widgets.run_form import RunToolForm
        from workbench.tui.widgets.sources import SourcesPanel
        from workbench.tui.widgets.timeline import Timeline

        self.push_screen(
            HelpScreen(
                [
                    ("Everywhere", WorkbenchApp),
                    ("Main screen", MainScreen),
                    ("Tools tree", ToolsTree),
                    ("Run form", RunToolForm),
                    ("A tool's kept calls", CallHistoryList),
                    ("Save a call as a test", SaveCaseScreen),
                    ("Sources", SourcesPanel),
                    ("Tool use", UsageScreen),
                    ("Confirm a suggested change", ConfirmChange),
                    ("Approval", ApprovalScreen),
                    ("Trust a project's plugins and rules", TrustScreen),
                    ("MCP server asks for input", ElicitationScreen),
                    ("MCP server asks for a completion", SamplingScreen),
                    ("The agent asks a question", ClarifyScreen),
                    ("Template or prompt arguments", ArgumentsScreen),
                    ("Result viewer", ViewerScreen),
                    ("Chat", SessionScreen),
                    ("Prompt", PromptArea),
                    ("Tool card", ToolCard),
                    ("Timeline", Timeline),
                    ("Session search", SessionSearchScreen),
                    ("Approval rules", RulesScreen),
                    ("Past conversation", ConversationScreen),
                    ("Checkpoints", CheckpointsScreen),
                    ("Restore a checkpoint", RestoreScreen),
                ]
            )
        )

    # -- command palette ---------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        if main is None or self.runtime is None:
            return
        yield SystemCommand(
            "Toggle a toolset", "Switch a toolset on or off (saved)", self._pick_toolset
        )
        yield SystemCommand(
            "Switch a tool off or on", "One tool, offered or not (saved)", self._pick_tool_switch
        )
        yield SystemCommand("Run a tool", "Open the run form for a tool", self._pick_tool)
        yield SystemCommand("Restart an MCP server", "Reconnect a server", self._pick_server)
        yield SystemCommand("Reload a plugin", "Re-import an enabled plugin", self._pick_plugin)
        yield SystemCommand(
            "Open a spilled result", "View a result saved to disk", self._pick_result
        )
        yield SystemCommand(
            "Show offered tools", "The tools the model is offered now", main.action_show_offered
        )
        yield SystemCommand(
            "Model check",
            "Does the model endpoint return tool calls the agent can use? (doctor model)",
            main.action_check_model,
        )
        yield SystemCommand(
            "Search sessions", "Find past sessions by their words; open one", self._search_sessions
        )
        yield SystemCommand(
            "Memory provider", "Choose which provider keeps memory (saved)", self._pick_memory
        )
        yield SystemCommand(
            "Approval rules", "Test a call; list, add, edit, delete rules", self.action_rules
        )
        yield SystemCommand(
            "Checkpoints",
            "Snapshots of the working directory: what changed since, diff, restore",
            self.open_checkpoints,
        )
        yield SystemCommand("Help", "Every key", self.action_help)

    def _pick_toolset(self) -> None:
        self.search_commands(
            [
                (
                    f"{'Disable' if t['enabled'] else 'Enable'} {t['name']}",
                    lambda t=t: self.set_toolset(t["name"], not t["enabled"]),
                )
                for t in self.controller.rows.toolsets
            ],
            placeholder="Toolset…",
        )

    def _pick_tool_switch(self) -> None:
        self.search_commands(
            [
                (
                    f"{'Switch on' if r['switched_off'] else 'Switch off'} {r['name']}",
                    lambda r=r: self.set_tool(r["name"], bool(r["switched_off"])),
                )
                for r in self.controller.rows.tools
            ],
            placeholder="Tool…",
        )

    def _pick_tool(self) -> None:
        main = self.main
        if main is None:
            return

        def run(name: str) -> None:
            main.select_tool(name)
            main.action_show_tab("run")

        self.search_commands(
            [(r["name"], lambda n=r["name"]: run(n)) for r in self.controller.rows.tools],
            placeholder="Tool…",
        )

    def _pick_server(self) -> None:
        from workbench.core.commands import SourceAction

        runtime = self.runtime
        servers = runtime.mcp.statuses() if runtime is not None and runtime.mcp else []
        restart = SourceAction.RESTART
        self.search_commands(
            [
                (f"Restart {s.name} ({s.state})", lambda n=s.name: self.act_on_source(restart, n))
                for s in servers
            ],
            placeholder="MCP server…",
        )

    def _pick_plugin(self) -> None:
        from workbench.core.commands import SourceAction

        runtime = self.runtime
        plugins = runtime.plugins.list() if runtime is not None and runtime.plugins else []
        reload = SourceAction.RELOAD
        self.search_commands(
            [
                (f"Reload {p.key} ({p.status})", lambda k=p.key: self.act_on_source(reload, k))
                for p in plugins
                if p.enabled
            ],
            placeholder="Plugin…",
        )

    def _pick_result(self) -> None:
        if self.runtime is None:
            return
        root = self.runtime.results_dir()
        files = (
            sorted(root.glob("*/*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
            if root.is_dir()
            else []
        )
        self.search_commands(
            [(f"{p.parent.name}/{p.name}", lambda p=p: self.open_viewer(p)) for p in files[:200]],
            placeholder="Spilled result…",
        )

    def _search_sessions(self) -> None:
        from workbench.core.agent import transcript
        from workbench.tui.screens.session_search import SessionSearchScreen

        runtime = self.runtime
        if runtime is None:
            return

        def opened(session_id: str | None) -> None:
            if session_id:
                self.open_conversation(
                    transcript.sessions_dir(runtime.home) / f"{session_id}.jsonl"
                )

        self.push_screen(SessionSearchScreen(runtime.session_index), opened)

    def _pick_memory(self) -> None:
        from workbench.core.commands import memory_choices

        runtime = self.runtime
        if runtime is None:
            return
        if runtime.plugins is None:
            self.notify("Plugins are off (HERMES_SAFE_MODE): only the built-in memory", timeout=6)
            return
        self.search_commands(
            [
                (
                    f"Use {name}{' (active)' if name == runtime.memory.selected else ''}",
                    lambda n=name: self.select_memory(n),
                )
                for name in memory_choices(runtime)
            ],
            placeholder="Memory provider…",
        )

    # -- commands shared with the command line -----------------------------------------

    @on(ToolsTree.ToolsetToggled)
    def _toolset_toggled(self, event: ToolsTree.ToolsetToggled) -> None:
        self.set_toolset(event.toolset, event.enabled)

    @on(ToolsTree.ToolToggled)
    def _tool_toggled(self, event: ToolsTree.ToolToggled) -> None:
        self.set_tool(event.tool, event.enabled)

    @on(ToolsTree.DeferToggled)
    def _defer_toggled(self, event: ToolsTree.DeferToggled) -> None:
        main = self.main
        deferred = main.controller.deferral_switch(event.tool) if main is not None else None
        if deferred is None:
            self.notify(f"{event.tool} is not offered to the model: nothing to defer")
            return
        self.set_deferred(event.tool, deferred)

    def set_deferred(self, tool: str, deferred: bool) -> None:
        from workbench.core.commands import set_deferred

        self._command("config", lambda runtime: set_deferred(runtime, tool, deferred))

    # The sources panel's messages, handled by name: its module loads after the first frame.
    def on_sources_panel_open(self, event: SourcesPanel.Open) -> None:
        self.mcp_ui.open(event)

    def on_sources_panel_action(self, event: SourcesPanel.Action) -> None:
        from workbench.core.commands import SourceAction

        self.act_on_source(SourceAction(event.action), event.name)

    def set_toolset(self, toolset: str, enabled: bool) -> None:
        from workbench.core.commands import set_toolset

        self._command("config", lambda runtime: set_toolset(runtime, toolset, enabled))

    def set_tool(self, tool: str, enabled: bool) -> None:
        from workbench.core.commands import set_tool

        self._command("config", lambda runtime: set_tool(runtime, tool, enabled))

    def select_memory(self, name: str) -> None:
        from workbench.core.commands import select_memory

        self._command("memory-provider", lambda runtime: select_memory(runtime, name))

    def act_on_source(self, action: SourceAction, name: str) -> None:
        from workbench.core.commands import act_on_source

        self._command("sources", lambda runtime: act_on_source(runtime, action, name))

    def _command(self, group: str, command: Callable[[Runtime], Done]) -> None:
        """One of the core's commands, on a worker thread (they write config.yaml, import
        plugins, restart servers); its sentence is shown and the tools redrawn."""
        runtime = self.runtime
        if runtime is not None:
            self.run_worker(lambda: self._run_command(runtime, command), thread=True, group=group)

    def _run_command(self, runtime: Runtime, command: Callable[[Runtime], Done]) -> None:
        from workbench.core.commands import CommandFailed

        try:
            done = command(runtime)
        except CommandFailed as exc:
            self.call_from_thread(self.notify, exc.message, severity="error")
            return
        self.call_from_thread(self._command_done, done)

    def _command_done(self, done: Done) -> None:
        self.notify(done.message, severity="information" if done.ok else "error")
        main = self.main
        if main is not None:
            main.refresh_tools()

    def open_conversation(self, path: Path | str) -> None:
        """A transcript, read back as the chat shows it."""
        from workbench.tui.screens.conversation import ConversationScreen

        self._open_file(path, ConversationScreen)

    def open_viewer(self, path: Path | str) -> None:
        from workbench.tui.screens.viewer import ViewerScreen

        self._open_file(path, ViewerScreen)

    def _open_file(self, path: Path | str, screen: Callable[[Path], Screen[Any]]) -> None:
        from workbench.tui.widgets.file_view import cannot_view

        path = Path(path)
        why = cannot_view(path)  # a FIFO or a device would hang the screen: said, not opened
        if not why:
            try:
                self.push_screen(screen(path))
                return
            except OSError as exc:  # changed between the look and the open
                why = f"cannot open {path}: {exc.strerror or exc}"
        self.notify(why[:1].upper() + why[1:], severity="error")
