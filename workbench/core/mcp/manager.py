"""The MCP manager: every configured server on one background event loop, in its own thread.

All servers start at once, each bounded by its connect timeout, so the UI and the built-in
tools never wait for MCP. Tools register as `mcp__<server>__<tool>` in toolset
`mcp-<server>` (with the server's name as an alias), source `mcp`, owner the server; a
refresh registers only what was added and removes only what was removed, and says so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from workbench.core import requirements
from workbench.core.mcp import catalog as cat
from workbench.core.mcp import utilities
from workbench.core.mcp.asks import ServerAsks
from workbench.core.mcp.config import ServerConfig, parse_servers
from workbench.core.mcp.events import (
    CallProgress,
    ToolsChanged,
)
from workbench.core.mcp.names import tool_name, toolset
from workbench.core.mcp.server import NotReady, ServerHandle, ServerStatus, root_cause
from workbench.core.mcp.trust import annotations_of, mark_untrusted, read_only
from workbench.core.schema import mcp_parameters
from workbench.core.tools.events import ToolSource
from workbench.core.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

STOP_GRACE = 0.5  # seconds a server that never became ready gets to go by itself on stop
ASK_TIMEOUT = 30.0  # seconds a request to a server (read a resource, get a prompt) may take
T = TypeVar("T")


class UnknownServer(KeyError):
    """No server of that name is configured."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown MCP server"


class MCPManager:
    def __init__(
        self,
        registry: ToolRegistry,
        configs: list[ServerConfig],
        *,
        log_dir: Path,
        on_event: Callable[[object], None] | None = None,
        asks: ServerAsks | None = None,
        documents: Path | None = None,
        sdk_problem: Callable[[], str] = requirements.installed_sdk_problem,
    ) -> None:
        self.registry = registry
        self.configs = configs
        self.log_dir = log_dir
        # where a binary resource the model reads is saved (log_dir is HERMES_HOME/logs)
        self.documents = documents or log_dir.parent / "cache" / "documents"
        self.on_event = on_event
        self.handles: dict[str, ServerHandle] = {}
        self.original_names: dict[str, tuple[str, str]] = {}  # registry name -> (server, tool)
        self.utilities: dict[str, tuple[str, str]] = {}  # list_resources & co -> (server, tool)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: dict[str, asyncio.Future[Any]] = {}  # each server's owner task
        # roots, elicitation and sampling: with no front end attached, declined and refused
        self.asks = asks or ServerAsks()
        self.asks.emit = self._emit  # how each question ended goes out with the other events
        # why the installed MCP SDK cannot work ("" when it can): every server fails with it
        self.sdk_problem = sdk_problem

    @classmethod
    def from_config(
        cls, registry: ToolRegistry, section: Any, *, log_dir: Path, **kw: Any
    ) -> MCPManager:
        return cls(registry, parse_servers(section), log_dir=log_dir, **kw)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop thread and every enabled, valid server (returns at once)."""
        if self._thread is not None:
            return
        # Made here, run by the thread: what is handed to it before it runs waits its turn.
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, args=(loop,), name="mcp", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start_all(), loop).result()

    def _serve(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    async def _start_all(self) -> None:
        # An SDK a plugin's install replaced fails every server on an import; say why instead.
        sdk = self.sdk_problem() if self.configs else ""
        for config in self.configs:
            handle = ServerHandle(
                config, self.log_dir, self._publish, self._state_changed, self.asks
            )
            self.handles[config.name] = handle
            if handle.state == "new" and sdk:
                handle.fail(sdk)
                logger.warning("MCP server %s not started: %s", config.name, sdk)
            elif handle.state == "new":
                self._tasks[config.name] = asyncio.ensure_future(handle.run())
            else:
                handle.settled.set()
                if handle.state == "invalid":
                    logger.warning("MCP server %s not started: %s", config.name, handle.error)

    def wait_settled(self, timeout: float, names: list[str] | None = None) -> bool:
        """Wait until every server (or those named) has finished its first connect attempt,
        or `timeout`; True if they all have."""
        if self._loop is None:
            return True
        handles = [h for n, h in self.handles.items() if names is None or n in names]

        async def settled() -> None:
            await asyncio.gather(*(h.settled.wait() for h in handles))

        future = asyncio.run_coroutine_threadsafe(settled(), self._loop)
        try:
            future.result(timeout)
            return True
        except TimeoutError:
            future.cancel()
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every server (no process left behind) and the loop."""
        if self._loop is None or self._thread is None:
            return

        async def stop_all() -> None:
            for handle in self.handles.values():
                handle.stop()
            ready = [t for n, t in self._tasks.items() if self.handles[n].state == "ready"]
            others = [t for t in self._tasks.values() if t not in ready]
            for task in others:  # connecting, or waiting to: nothing it owes is worth a wait
                task.cancel()
            if ready:  # a session that works is closed properly
                await asyncio.wait(ready, timeout=timeout)
            if others:
                # The SDK's own shutdown of a server that never answered takes seconds
                # (grace, SIGTERM, SIGKILL); ending this loop's thread below kills it at
                # once instead (each stdio server dies with the thread that started it).
                await asyncio.wait(others, timeout=STOP_GRACE)
            # What the handles started for themselves (a reconnect's wait, a watcher) ends
            # here too: a task still pending when the loop goes is printed at exit.
            rest = asyncio.all_tasks() - {asyncio.current_task()}
            for task in rest:
                task.cancel()
            if rest:
                await asyncio.wait(rest, timeout=STOP_GRACE)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), self._loop).result(timeout + 1)
        except Exception:
            logger.exception("stopping MCP servers")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        for handle in self.handles.values():
            self.registry.replace_owner(ToolSource.MCP, handle.name, [])
        self._thread = None

    def restart(self, name: str) -> None:
        handle = self.handles[name]
        if self._loop is not None:  # always, once there are handles: start() made it
            self._loop.call_soon_threadsafe(handle.restart)

    def statuses(self) -> list[ServerStatus]:
        if not self.handles:  # not started: what the config says
            return [
                ServerHandle(c, self.log_dir, self._publish, self._emit).status()
                for c in self.configs
            ]
        return [h.status() for h in self.handles.values()]

    # -- resources and prompts (from any thread but the MCP loop's) ----------------------

    def handle(self, name: str) -> ServerHandle:
        handle = self.handles.get(name)
        if handle is None:
            known = ", ".join(sorted(c.name for c in self.configs)) or "none configured"
            raise UnknownServer(f"no MCP server named {name!r} (servers: {known})")
        return handle

    def run_on_loop(self, coroutine: Coroutine[Any, Any, T], timeout: float = ASK_TIMEOUT) -> T:
        """Run a coroutine on the MCP loop and wait for it; TimeoutError after `timeout`."""
        future = self._submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Hand a coroutine to the MCP loop; NotReady (the coroutine closed) before start()."""
        if self._loop is None:
            coroutine.close()
            raise NotReady("the MCP servers are not started")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def read_resource(self, server: str, uri: str, timeout: float = ASK_TIMEOUT) -> list[Any]:
        return self.run_on_loop(self.handle(server).read_resource(uri), timeout)

    def get_prompt(
        self, server: str, name: str, arguments: dict[str, str], timeout: float = ASK_TIMEOUT
    ) -> Any:
        return self.run_on_loop(self.handle(server).get_prompt(name, arguments), timeout)

    def subscribe(self, server: str, uri: str, on: bool = True) -> None:
        handle = self.handle(server)
        self.run_on_loop(handle.subscribe(uri) if on else handle.unsubscribe(uri))

    def catalog(self, server: str) -> cat.Catalog:
        return self.handle(server).catalog

    # -- registration ------------------------------------------------------------------

    def _publish(self, handle: ServerHandle, tools: list[Any]) -> None:
        """Register the server's current tool list (only the differences change)."""
        registrations = [self._registration(handle, tool) for tool in tools]
        registrations += self._utility_registrations(handle, {r["name"] for r in registrations})
        swap = self.registry.replace_owner(ToolSource.MCP, handle.name, registrations)
        handle.refused = list(swap.refused)
        for name, reason in swap.refused:
            logger.warning("MCP server %s: tool %s refused: %s", handle.name, name, reason)
        if registrations and self.registry.get_toolset_alias_target(handle.name) != toolset(
            handle.name
        ):
            self.registry.register_toolset_alias(handle.name, toolset(handle.name))
        self.registry.invalidate_check_fn_cache()  # a state change shows at once
        if swap.added or swap.removed:
            self._emit(ToolsChanged(handle.name, swap.added, swap.removed))

    def _registration(self, handle: ServerHandle, tool: Any) -> dict[str, Any]:
        name = tool_name(handle.name, tool.name)
        self.original_names[name] = (handle.name, tool.name)
        description = tool.description or f"MCP tool {tool.name} from {handle.name}"
        hints = annotations_of(tool)
        return {
            "name": name,
            "toolset": toolset(handle.name),
            "schema": {
                "description": description,
                "parameters": mcp_parameters(tool.input_schema),
            },
            "handler": self._handler(handle, tool.name),
            "is_async": True,
            "check_fn": handle.available,
            # a tool that says it only reads may run beside others
            "parallel_safe": handle.config.parallel or read_only(hints),
            "annotations": hints,
            "untrusted": handle.config.untrusted,
        }

    def _utility_registrations(self, handle: ServerHandle, taken: set[str]) -> list[dict[str, Any]]:
        """Its resources and prompts tools; one of the server's own tools keeps its name."""
        for name in [n for n, (server, _) in self.utilities.items() if server == handle.name]:
            del self.utilities[name]
        out = []
        for tool in utilities.offered(handle.info, handle.config):
            name = tool_name(handle.name, tool)
            if name in taken:
                logger.warning(
                    "MCP server %s: its own tool %s is kept over Hermes's", handle.name, name
                )
                continue
            self.utilities[name] = (handle.name, tool)
            out.append(self._utility_registration(handle, tool, name))
        handle.helpers = [r["name"] for r in out]
        return out

    def _utility_registration(self, handle: ServerHandle, tool: str, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "toolset": toolset(handle.name),
            "schema": utilities.schema(handle.name, tool),
            "handler": self._utility_handler(handle, tool),
            "is_async": True,
            "check_fn": handle.available,
            "parallel_safe": True,
            "annotations": {"readOnlyHint": True},  # they only read, trusted server or not
            "untrusted": handle.config.untrusted,
        }

    def _utility_handler(self, handle: ServerHandle, tool: str) -> Callable[..., Any]:
        async def call(args: dict[str, Any], **kw: Any) -> str:
            future = self._submit(self._ask(handle, tool, args))
            try:
                result = await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                future.cancel()
                raise
            if handle.config.untrusted:  # what the server wrote is data, as its tools' results
                return str(mark_untrusted(result, tool_name(handle.name, tool)))
            return result

        return call

    async def _ask(self, handle: ServerHandle, tool: str, args: dict[str, Any]) -> str:
        """One utility tool's request, on the MCP loop; a failure is the tool's error result."""
        try:
            async with asyncio.timeout(handle.config.timeout):
                return await self._answer(handle, tool, args)
        except NotReady as exc:
            return utilities.error(str(exc))
        except TimeoutError:  # the words handle.call uses for its tools
            return utilities.error(
                f"MCP call failed: TimeoutError: MCP call timed out after {handle.config.timeout:g}s"
            )
        except Exception as exc:
            return utilities.failure(root_cause(exc))

    async def _answer(self, handle: ServerHandle, tool: str, args: dict[str, Any]) -> str:
        if tool == "list_resources":
            return utilities.resources_result(await handle.list_all("resources"))
        if tool == "list_prompts":
            return utilities.prompts_result(await handle.list_all("prompts"))
        if tool == "read_resource":
            uri = args.get("uri")
            if not uri or not isinstance(uri, str):
                return utilities.error("Missing required parameter 'uri'")
            result = await handle.read(uri)
            return await asyncio.to_thread(utilities.read_result, result, self.documents)
        name, arguments = args.get("name"), args.get("arguments") or {}
        if not name or not isinstance(name, str):
            return utilities.error("Missing required parameter 'name'")
        if not isinstance(arguments, dict):
            return utilities.error("'arguments' must be an object")
        strings = {  # a prompt's arguments are strings on the wire
            str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            for k, v in arguments.items()
            if v is not None
        }
        return utilities.prompt_result(await handle.get_prompt(name, strings))

    def _handler(self, handle: ServerHandle, tool: str) -> Callable[..., Any]:
        async def call(args: dict[str, Any], **kw: Any) -> str | dict[str, Any]:
            call_id = str(kw.get("tool_call_id") or "")

            async def progress(value: float, total: float | None, message: str | None) -> None:
                self._emit(CallProgress(handle.name, tool, call_id, value, total, message))

            async def run() -> str | dict[str, Any]:
                with self.asks.calling(handle.name, call_id):  # its questions hold this call
                    return await handle.call(tool, args, progress=progress)

            future = self._submit(run())
            try:
                result = await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                future.cancel()  # the call is cancelled on the server too
                raise
            if handle.config.untrusted:
                return mark_untrusted(result, tool_name(handle.name, tool))
            return result

        return call

    def _state_changed(self, event: object) -> None:
        self.registry.invalidate_check_fn_cache()  # availability follows the state at once
        self._emit(event)

    def _emit(self, event: object) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                logger.exception("MCP event listener failed")
