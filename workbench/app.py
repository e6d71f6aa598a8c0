"""The hermes-tui application: screens, the approval queue, the command palette, help."""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

# Set before Textual is imported, which reads it once. After a frame longer than its
# period, Textual's frame timer waits for the next period but one: at 60 fps a key typed
# while a reply streams waited up to 33 ms for its frame; at 120 fps, 17 ms. Frames are
# drawn only when something changed, so an idle screen costs nothing more.
os.environ.setdefault("TEXTUAL_FPS", "120")

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from workbench import __version__
from workbench.resources import style
from workbench.screens.main import MainScreen

if TYPE_CHECKING:
    from workbench.core.approval import ApprovalBroker, ApprovalRequest, Choice


class ApprovalQueue:
    """Shows approval requests one at a time (with a count of the rest); the answer goes back."""

    def __init__(self, app: WorkbenchApp, broker: ApprovalBroker) -> None:
        self.app = app
        self.broker = broker
        self.queue: deque[ApprovalRequest] = deque()
        self.showing = False

    def __call__(self, request: ApprovalRequest) -> None:
        if self.app._thread_id == __import__("threading").get_ident():
            self.app.call_later(self._enqueue, request)
        else:
            self.app.call_from_thread(self._enqueue, request)

    def _enqueue(self, request: ApprovalRequest) -> None:
        self.queue.append(request)
        self._next()

    def _next(self) -> None:
        pending = {r.id for r in self.broker.pending()}
        while self.queue and self.queue[0].id not in pending:
            self.queue.popleft()  # timed out or withdrawn while waiting
        if self.showing or not self.queue:
            return
        from workbench.screens.approval import ApprovalScreen

        request = self.queue.popleft()
        self.showing = True
        self.app.bell()
        self.app.push_screen(
            ApprovalScreen(request, len(self.queue)), lambda c: self._answered(request, c)
        )

    def _answered(self, request: ApprovalRequest, choice: Choice | None) -> None:
        from workbench.core.approval import Choice

        self.broker.answer(request.id, choice or Choice.DENY)
        self.showing = False
        self._next()


class WorkbenchApp(App[None]):
    TITLE = "hermes-tui"
    SUB_TITLE = f"tool workbench {__version__}"
    CSS_PATH = [style("app.tcss")]
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("f6", "chat", "Chat", id="app.chat"),
    ]

    def __init__(self, view: Path | None = None, model_flags: dict[str, str] | None = None) -> None:
        super().__init__()
        from workbench.widgets.timeline import TimelineModel

        self.broker: ApprovalBroker | None = None  # made with the runtime, after the first frame
        self._detach = lambda: None
        self.runtime = None  # the core, once MainScreen has loaded it
        self.timeline_model = TimelineModel()  # every call: agent, run form, plugins
        self.view_path = view
        self.model_flags = model_flags or {}  # --model, --base-url, --api-key for the session

    def attach_approvals(self, broker: ApprovalBroker) -> None:
        """Approval requests from now on open the modal, one at a time."""
        self.broker = broker
        self._detach = broker.attach(ApprovalQueue(self, broker))

    def on_mount(self) -> None:
        from workbench.screens.session import SessionScreen

        self.install_screen(SessionScreen(), name="session")
        self.push_screen(MainScreen())
        if self.view_path is not None:
            self.open_viewer(self.view_path)
        self.call_after_refresh(self._first_frame)

    def action_chat(self) -> None:
        """Open the session screen (chat and timeline); F6 there comes back."""
        from workbench.screens.session import SessionScreen

        if not isinstance(self.screen, SessionScreen):
            self.push_screen("session")

    def record_call(self, event: object) -> None:
        """A call made outside the chat (run form, plugin) goes on the timeline too."""
        kind = type(event).__name__
        if kind == "ToolCallStarted":
            if not self.timeline_model.running:  # a call on its own is fitted on its own
                self.timeline_model.new_turn()
            self.timeline_model.started(event)
        elif kind == "ToolCallFinished":
            self.timeline_model.finished(event)
        session = self.get_screen("session")
        if session.is_mounted:
            from workbench.widgets.timeline import Timeline

            session.query_one(Timeline).changed()

    def _first_frame(self) -> None:
        """Record when the first frame was painted (HERMES_TUI_FIRST_FRAME names the file)."""
        import os
        import sys
        import time

        target = os.environ.get("HERMES_TUI_FIRST_FRAME")
        if target:
            heavy = {name: name in sys.modules for name in ("openai", "mcp")}
            from workbench.core.atomic import atomic_write_text

            atomic_write_text(Path(target), json.dumps({"at": time.time(), "imported": heavy}))

    def on_unmount(self) -> None:
        self._detach()  # anything still waiting is denied

    @property
    def main(self) -> MainScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    def action_help(self) -> None:
        from workbench.screens.approval import ApprovalScreen
        from workbench.screens.conversation import ConversationScreen
        from workbench.screens.help import HelpScreen
        from workbench.screens.session import SessionScreen
        from workbench.screens.session_search import SessionSearchScreen
        from workbench.screens.viewer import ViewerScreen
        from workbench.widgets.chat import PromptArea, ToolCard
        from workbench.widgets.run_form import RunToolForm
        from workbench.widgets.sources import SourcesPanel
        from workbench.widgets.timeline import Timeline
        from workbench.widgets.tools_tree import ToolsTree

        self.push_screen(
            HelpScreen(
                [
                    ("Everywhere", WorkbenchApp),
                    ("Main screen", MainScreen),
                    ("Tools tree", ToolsTree),
                    ("Run form", RunToolForm),
                    ("Sources", SourcesPanel),
                    ("Approval", ApprovalScreen),
                    ("Result viewer", ViewerScreen),
                    ("Chat", SessionScreen),
                    ("Prompt", PromptArea),
                    ("Tool card", ToolCard),
                    ("Timeline", Timeline),
                    ("Session search", SessionSearchScreen),
                    ("Past conversation", ConversationScreen),
                ]
            )
        )

    # -- command palette ---------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        if main is None or main.runtime is None:
            return
        yield SystemCommand(
            "Toggle a toolset", "Switch a toolset on or off (saved)", self._pick_toolset
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
            "Search sessions", "Find past sessions by their words; open one", self._search_sessions
        )
        yield SystemCommand(
            "Memory provider", "Choose which provider keeps memory (saved)", self._pick_memory
        )
        yield SystemCommand("Help", "Every key", self.action_help)

    def _pick_toolset(self) -> None:
        main = self.main
        rows = main._toolset_rows
        self.search_commands(
            [
                (
                    f"{'Disable' if t['enabled'] else 'Enable'} {t['name']}",
                    lambda t=t: main.save_toolset(t["name"], not t["enabled"]),
                )
                for t in rows
            ],
            placeholder="Toolset…",
        )

    def _pick_tool(self) -> None:
        main = self.main

        def run(name: str) -> None:
            main.select_tool(name)
            main.action_show_tab("run")

        self.search_commands(
            [(r["name"], lambda n=r["name"]: run(n)) for r in main._rows], placeholder="Tool…"
        )

    def _pick_server(self) -> None:
        main = self.main
        servers = main.runtime.mcp.statuses() if main.runtime.mcp else []
        self.search_commands(
            [
                (f"Restart {s.name} ({s.state})", lambda n=s.name: main.act_on_source("restart", n))
                for s in servers
            ],
            placeholder="MCP server…",
        )

    def _pick_plugin(self) -> None:
        main = self.main
        plugins = main.runtime.plugins.list() if main.runtime.plugins else []
        self.search_commands(
            [
                (f"Reload {p.key} ({p.status})", lambda k=p.key: main.act_on_source("reload", k))
                for p in plugins
                if p.enabled
            ],
            placeholder="Plugin…",
        )

    def _pick_result(self) -> None:
        main = self.main
        root = main.runtime.results_dir()
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
        from workbench.core import transcript
        from workbench.screens.session_search import SessionSearchScreen

        runtime = self.main.runtime

        def opened(session_id: str | None) -> None:
            if session_id:
                self.open_conversation(
                    transcript.sessions_dir(runtime.home) / f"{session_id}.jsonl"
                )

        self.push_screen(SessionSearchScreen(runtime.session_index), opened)

    def _pick_memory(self) -> None:
        runtime = self.main.runtime
        if runtime.plugins is None:
            self.notify("Plugins are off (HERMES_SAFE_MODE): only the built-in memory", timeout=6)
            return
        names = ["builtin", *(s.key for s in runtime.plugins.memory_provider_plugins())]
        self.search_commands(
            [
                (
                    f"Use {name}{' (active)' if name == runtime.memory.selected else ''}",
                    lambda n=name: self._select_memory(n),
                )
                for name in names
            ],
            placeholder="Memory provider…",
        )

    @work(thread=True, group="memory-provider")
    def _select_memory(self, name: str) -> None:
        runtime = self.main.runtime
        try:
            state = runtime.plugins.select_memory_provider(name)
        except Exception as exc:
            self.call_from_thread(self.notify, f"{exc}", severity="error")
            return
        if state is not None and state.status != "loaded":
            self.call_from_thread(self.notify, f"{name}: {state.error}", severity="error")
            return
        tools = ", ".join(t.name for t in runtime.memory.tools())
        self.call_from_thread(
            self.notify, f"Memory provider: {runtime.memory.active_name} ({tools})"
        )

    def open_conversation(self, path: Path | str) -> None:
        """A transcript, read back as the chat shows it."""
        from workbench.screens.conversation import ConversationScreen

        self._open_file(path, ConversationScreen)

    def open_viewer(self, path: Path | str) -> None:
        from workbench.screens.viewer import ViewerScreen

        self._open_file(path, ViewerScreen)

    def _open_file(self, path: Path | str, screen: type[Screen]) -> None:
        path = Path(path)
        if not path.is_file():
            self.notify(f"Cannot open {path}: no such file", severity="error")
            return
        self.push_screen(screen(path))
