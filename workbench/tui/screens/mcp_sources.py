"""The workbench side of MCP beyond tools: opening a server's resources, templates and
prompts, subscriptions, live logs and progress, and the server's questions to the user.

The app owns one of these beside its controller; the slow work (reading from a server)
runs in worker threads and never blocks the screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.mcp import catalog as cat

if TYPE_CHECKING:
    from workbench.core.events import AskSettled, CatalogChanged, ResourceUpdated, ServerLog
    from workbench.core.mcp import MCPManager
    from workbench.core.mcp.asks import SamplingRequest
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.sources import SourcesPanel


class McpSources:
    def __init__(self, app: WorkbenchApp) -> None:
        self.app = app
        self.opened: dict[Path, tuple[str, str]] = {}  # a viewer's file -> (server, uri)

    @property
    def manager(self) -> MCPManager | None:
        return self.app.controller.mcp

    def _refresh_sources(self) -> None:
        main = self.app.main
        if main is not None:
            main.refresh_sources()

    # -- the server's questions ----------------------------------------------------------

    def attach(self, manager: MCPManager) -> None:
        """An approved sampling request goes to the session's model. (A server's questions
        are asks: the app's queue shows them.)"""
        manager.asks.sampler = self.sample

    async def sample(self, request: SamplingRequest) -> tuple[str, str]:
        """An approved sampling request goes to the session's model: the running chat's
        endpoint, else the configured one. The bundled model runs only with a chat."""
        from workbench.core.mcp.sampling import endpoint_sampler

        endpoint = self.app.controller.endpoint()
        if endpoint.local:
            raise RuntimeError(
                "the bundled model is not running: open the chat (F6) and send a prompt first"
            )
        return await endpoint_sampler(endpoint.base_url, endpoint.api_key, endpoint.model)(request)

    # -- live events ---------------------------------------------------------------------

    def event(self, event: ServerLog | ResourceUpdated | CatalogChanged | AskSettled) -> None:
        """A server's log line, a changed catalog or resource, how a question ended."""
        from workbench.core.events import AskSettled, ResourceUpdated

        match event:
            case AskSettled(why=why) if why in ("", "the user chose it", "the user denied it"):
                return  # the user's own answer needs no toast
            case AskSettled():
                self.app.notify(
                    f"{event.kind}: {event.outcome} ({event.why})",
                    title=f"MCP server {event.server}",
                    severity="warning",
                )
                return
            case ResourceUpdated():
                self._updated(event.server, event.uri)
        self._refresh_sources()

    def _updated(self, server: str, uri: str) -> None:
        path = next((p for p, key in self.opened.items() if key == (server, uri)), None)
        if path is not None:  # else its row's count says it (no toast every few seconds)
            self.read(server, uri, reopen=True)

    # -- opening what a server offers ------------------------------------------------------

    def open(self, message: SourcesPanel.Open) -> None:
        from workbench.tui.screens.mcp_asks import ArgumentsScreen

        manager = self.manager
        if manager is None:
            return
        server, kind, key = message.server, message.kind, message.key
        if message.subscribe:
            self.toggle_subscription(server, key)
        elif kind == "resource":
            self.read(server, key)
        elif kind == "template":
            template = next(
                (t for t in manager.catalog(server).templates if t.uri_template == key), None
            )
            if template is not None:
                self.app.push_screen(
                    ArgumentsScreen(
                        f"{template.name or key}  ({key})", cat.template_schema(template)
                    ),
                    lambda values: self._read_template(server, key, values),
                )
        elif kind == "prompt":
            prompt = manager.catalog(server).prompt(key)
            if prompt is None:
                return
            if not prompt.arguments:
                self.get_prompt(server, key, {})
                return
            self.app.push_screen(
                ArgumentsScreen(f"prompt {key}", cat.prompt_schema(prompt)),
                lambda values: self._get_prompt_with(server, key, values),
            )

    def _read_template(self, server: str, key: str, values: dict[str, Any] | None) -> None:
        if values is not None:  # None: the form was closed
            self.read(server, cat.expand_template(key, values))

    def _get_prompt_with(self, server: str, name: str, values: dict[str, Any] | None) -> None:
        if values is not None:  # None: the form was closed
            self.get_prompt(server, name, values)

    def read(self, server: str, uri: str, reopen: bool = False) -> None:
        self.app.run_worker(lambda: self._read(server, uri, reopen), thread=True, group="mcp-read")

    def _read(self, server: str, uri: str, reopen: bool) -> None:
        manager = self.manager
        if manager is None:  # MCP stopped since: nothing to ask
            return
        try:
            text = cat.render_contents(manager.read_resource(server, uri))
        except Exception as exc:
            self._failed(server, f"cannot read {uri}", exc)
            return
        header = f"# {uri}  (MCP server {server})\n"
        self._show(server, uri, header + text, reopen)

    def get_prompt(self, server: str, name: str, values: dict[str, Any]) -> None:
        self.app.run_worker(
            lambda: self._get_prompt(server, name, values), thread=True, group="mcp-read"
        )

    def _get_prompt(self, server: str, name: str, values: dict[str, Any]) -> None:
        manager = self.manager
        if manager is None:  # MCP stopped since: nothing to ask
            return
        try:
            prompt = manager.catalog(server).prompt(name)
            arguments = cat.prompt_arguments(prompt, values) if prompt else values
            text = cat.render_prompt(manager.get_prompt(server, name, arguments))
        except Exception as exc:
            self._failed(server, f"cannot get prompt {name}", exc)
            return
        self._show(server, f"prompt:{name}", f"# prompt {name}  (MCP server {server})\n{text}")

    def _show(self, server: str, key: str, text: str, reopen: bool = False) -> None:
        from workbench.core.storage.atomic import atomic_write_text

        home = self.app.controller.home
        assert home is not None  # a server answered: the core is loaded
        path = cat.reading_path(home, server, key)
        atomic_write_text(path, text if text.endswith("\n") else text + "\n")
        self.app.call_from_thread(self._open_viewer, path, server, key, reopen)

    def _open_viewer(self, path: Path, server: str, key: str, reopen: bool) -> None:
        from workbench.tui.screens.viewer import ViewerScreen

        self.opened[path] = (server, key)
        showing = isinstance(self.app.screen, ViewerScreen) and self.app.screen.path == path
        if reopen and not showing:
            return  # updated while not on screen: the next open reads it afresh
        if showing:
            self.app.pop_screen()
            self.app.notify(f"{key} updated", title=f"MCP server {server}")
        self.app.open_viewer(path)

    def toggle_subscription(self, server: str, uri: str) -> None:
        def work() -> None:
            manager = self.manager
            if manager is None:  # MCP stopped since: nothing to ask
                return
            try:  # the server may have gone since (config reloaded): said, not a crash
                on = uri not in manager.handle(server).subscriptions
                manager.subscribe(server, uri, on)
            except Exception as exc:
                self._failed(server, f"cannot subscribe to {uri}", exc)
                return
            what = "subscribed to" if on else "unsubscribed from"
            self.app.call_from_thread(
                self.app.notify, f"{what} {uri}", title=f"MCP server {server}"
            )
            self.app.call_from_thread(self._refresh_sources)

        self.app.run_worker(work, thread=True, group="mcp-subscribe")

    def _failed(self, server: str, what: str, exc: Exception) -> None:
        self.app.call_from_thread(
            self.app.notify,
            f"{what}: {exc}",
            title=f"MCP server {server}",
            severity="error",
            timeout=10,
        )
