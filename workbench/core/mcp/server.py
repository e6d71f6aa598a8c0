"""One MCP server: an owner task that connects, lists, refreshes, notices death and restarts.

The task that enters `async with Client(...)` is the one that leaves it (the anyio rule);
calls come from any task, concurrently (the 2.x session multiplexes them, where Hermes
serialises calls to one server behind a lock). A stdio server's death is seen the moment
its output ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import shutil
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.mcp import catalog as cat
from workbench.core.mcp import stdio
from workbench.core.mcp.config import ServerConfig
from workbench.core.mcp.events import CatalogChanged, ResourceUpdated, ServerChanged, ServerLog
from workbench.core.mcp.results import convert
from workbench.core.storage.private import open_private

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from workbench.core.mcp.asks import ServerAsks

logger = logging.getLogger(__name__)
T = TypeVar("T")

MAX_ATTEMPTS = 4  # then the server is parked until someone restarts it
BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
REFRESH_DEBOUNCE = 0.2
MAX_PAGES = 50
STDERR_TAIL = 12
LOG_LINES = 200  # a server's log messages kept for showing


@dataclass
class ServerStatus:
    name: str
    state: str  # disabled, invalid, starting, ready, reconnecting, parked, stopped
    transport: str
    tools: int = 0
    protocol: str = ""
    restarts: int = 0
    error: str = ""
    stderr_tail: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    info: cat.ServerInfo = field(default_factory=cat.ServerInfo)
    catalog: cat.Catalog = field(default_factory=cat.Catalog)
    logs: list[str] = field(default_factory=list)  # its log messages, newest last
    subscriptions: dict[str, int] = field(default_factory=dict)  # uri -> updates seen


class NotReady(Exception):
    """The server cannot be asked now (not connected); the message says why."""


def root_cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        real = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (real or list(exc.exceptions))[0]
    return exc


class ServerHandle:
    def __init__(
        self,
        config: ServerConfig,
        log_dir: Path,
        publish: Callable[[ServerHandle, list[Any]], None],
        notify: Callable[[object], None],
        asks: ServerAsks | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.log_path = log_dir / f"mcp-{_file_safe(config.name)}.log"
        self._publish = publish
        self._notify = notify
        self.state = "disabled" if not config.enabled else "invalid" if config.problems else "new"
        self.error = "; ".join(config.problems)
        self.protocol = ""
        self.restarts = 0
        self.tools: list[Any] = []
        self.helpers: list[str] = []  # Hermes's resources and prompts tools it was given
        self.refused: list[tuple[str, str]] = []
        self.client: Any = None
        self._stop = asyncio.Event()
        self._restart = asyncio.Event()
        self._dead: asyncio.Event | None = None
        self.settled = asyncio.Event()  # the first connect attempt ended (ready or not)
        self.phase = ""  # what a connect in progress waits for (initialize, tools/list)
        self._phase_since = 0.0  # time.monotonic() when it began waiting for it
        self.noise = 0  # lines of its output that were not JSON-RPC messages
        self._first_noise = ""
        self.asks = asks
        self.info = cat.ServerInfo()
        self.catalog = cat.Catalog()
        self.logs: deque[str] = deque(maxlen=LOG_LINES)
        self.subscriptions: dict[str, int] = {}  # kept over reconnects
        self._relist = asyncio.Event()  # resources or prompts changed: list them again

    # -- status ------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        transport = self.config.transport if self.config.url else "stdio"
        tail = self.stderr_tail() if self.state not in ("ready", "disabled") else []
        warnings = list(self.config.warnings)
        if self.noise:
            warnings.append(
                f"{self.noise} line(s) of its output were not JSON-RPC messages "
                f"(ignored; the first: {self._first_noise})"
            )
        return ServerStatus(
            self.name,
            self.state,
            transport,
            self.tool_count,
            self.protocol,
            self.restarts,
            "; again: ".join(filter(None, (self.error, self.waiting()))),
            tail,
            list(self.refused),
            warnings,
            self.info,
            self.catalog,
            list(self.logs),
            dict(self.subscriptions),
        )

    def waiting(self) -> str:
        """What a connect in progress waits for, and how long: why it is still starting."""
        if self.state not in ("starting", "reconnecting") or not self.phase:
            return ""
        waited = time.monotonic() - self._phase_since
        return (
            f"no answer to {self.phase} after {waited:.0f} s "
            f"(gives up after connect_timeout, {self.config.connect_timeout:g} s)"
        )

    def _waiting_for(self, phase: str) -> None:
        self.phase, self._phase_since = phase, time.monotonic()

    def stderr_tail(self) -> list[str]:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        return [line for line in lines if line.strip()][-STDERR_TAIL:]

    def _set(self, state: str, error: str | None = None) -> None:
        self.state = state
        if error is not None:
            self.error = error
        self._notify(ServerChanged(self.name, state, self.tool_count, self.error))

    @property
    def tool_count(self) -> int:
        """The tools it gives the model: its own and the resources and prompts ones."""
        return len(self.tools) + len(self.helpers)

    def fail(self, error: str) -> None:
        """Not started, for a reason a retry cannot mend (the installed MCP SDK is wrong)."""
        self._set("failed", error)
        self.settled.set()

    # -- the owner task ----------------------------------------------------------------

    async def run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self._set("starting" if attempt == 0 and not self.restarts else "reconnecting")
            reached_ready = False
            try:
                reached_ready = await self._session()
                error = "" if self._stop.is_set() else "the server closed the connection"
            except Exception as exc:
                error = self._describe(root_cause(exc))
            self.phase = ""  # the attempt is over: its error says what happened
            self.settled.set()
            if self._stop.is_set():
                break
            self.client = (
                None  # its tools stay listed, unavailable with the reason, until it is back
            )
            attempt = 0 if reached_ready else attempt + 1
            self.restarts += 1
            if attempt >= MAX_ATTEMPTS:
                self._set(
                    "parked",
                    f"{error} (parked after {attempt} failed attempts; restart it to retry)",
                )
                await self._wait_for(self._restart, None)
                attempt = 0
                continue
            self._set("reconnecting", error)
            await self._wait_for(self._restart, BACKOFF[min(attempt, len(BACKOFF) - 1)])
        self.client = None
        self._set("stopped", "")
        self.settled.set()

    async def _wait_for(self, event: asyncio.Event, timeout: float | None) -> None:
        stop = asyncio.ensure_future(self._stop.wait())
        other = asyncio.ensure_future(event.wait())
        await asyncio.wait({stop, other}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for task in (stop, other):
            task.cancel()
        event.clear()

    async def _session(self) -> bool:
        dead = self._dead = asyncio.Event()
        refresh = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            # a stdio server is spawned first: it starts while the SDK is imported
            transport = await self._transport(stack, dead)
            from mcp import Client

            client = Client(
                transport,
                mode=self.config.mode,
                read_timeout_seconds=self.config.connect_timeout,
                message_handler=functools.partial(self._on_message, refresh=refresh),
                logging_callback=self._on_log,
                **self._client_capabilities(),
            )
            async with asyncio.timeout(self.config.connect_timeout):
                self._waiting_for("initialize")
                await stack.enter_async_context(client)
                self._waiting_for("tools/list")
                tools = await self._list(client)
            self.phase = ""
            self.client, self.protocol = client, str(getattr(client, "protocol_version", "") or "")
            self.info = cat.server_info(client)
            self.tools = tools
            self._publish(self, tools)
            self.error = ""
            self._set("ready")
            self.settled.set()
            helpers = {asyncio.ensure_future(self._refresher(client, refresh))}
            self._relist.set()  # the first listing of resources and prompts
            helpers.add(asyncio.ensure_future(self._cataloguer(client)))
            if self.protocol.startswith("2026"):
                helpers.add(asyncio.ensure_future(self._listen(client, refresh)))
            waits = {
                asyncio.ensure_future(self._stop.wait()),
                asyncio.ensure_future(dead.wait()),
                *helpers,
            }
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()
                self.client = None
        return True

    async def _transport(self, stack: contextlib.AsyncExitStack, dead: asyncio.Event) -> Any:
        config = self.config
        if config.url and config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(
                config.url, headers=config.headers or None, timeout=config.connect_timeout
            )
        if config.url:
            return _http_transport(config)
        if shutil.which(config.command) is None:
            raise FileNotFoundError(config.command)
        command, args = config.command, list(config.args)
        if sys.platform.startswith("linux") and shutil.which("setpriv"):
            command, args = (
                "setpriv",
                ["--pdeathsig", "KILL", "--", config.command, *args],
            )  # no orphans
        errlog = stack.enter_context(open_private(self.log_path))
        cwd = str(config.cwd) if config.cwd else None
        env = stdio.environment(config.child_env())
        process = await stdio.spawn([command, *args], env, cwd, errlog)
        stack.push_async_callback(stdio.stop, process)  # also when the SDK fails to load
        return _watched(stdio.streams(process), dead)

    async def _list(self, client: Any) -> list[Any]:
        tools, cursor = [], None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools  # all registered: core.mcp.filters says which are switched off

    async def _on_message(self, message: Any, refresh: asyncio.Event) -> None:
        import mcp.types as types

        if isinstance(message, types.ToolListChangedNotification):
            refresh.set()  # never re-list here: the refresher coalesces bursts
        elif isinstance(
            message,
            types.ResourceListChangedNotification | types.PromptListChangedNotification,
        ):
            self._relist.set()
        elif isinstance(message, types.ResourceUpdatedNotification):
            uri = str(message.params.uri)
            if uri in self.subscriptions:  # an update we did not ask for is not news
                self.subscriptions[uri] += 1
                self._notify(ResourceUpdated(self.name, uri))
        elif isinstance(message, Exception):  # a line that is not JSON-RPC: counted, said once
            self.noise += 1
            if self.noise == 1:
                self._first_noise = _noise_text(message)
                logger.warning(
                    "MCP server %s: its output has a line that is not JSON-RPC (ignored): %s",
                    self.name,
                    self._first_noise,
                )

    async def _refresher(self, client: Any, refresh: asyncio.Event) -> None:
        while True:
            await refresh.wait()
            await asyncio.sleep(REFRESH_DEBOUNCE)
            refresh.clear()
            try:
                tools = await self._list(client)
            except Exception as exc:
                logger.warning("MCP server %s: refresh failed: %s", self.name, root_cause(exc))
                continue
            self.tools = tools
            self._publish(self, tools)

    def _client_capabilities(self) -> dict[str, Any]:
        """Roots, elicitation and sampling, answered by the manager's ServerAsks (none
        without one: the SDK then says the client does not support them)."""
        if self.asks is None:
            return {}
        callbacks = {
            "list_roots_callback": self.asks.roots_callback(self.config.roots),
            "elicitation_callback": self.asks.elicitation_callback(self.name),
            "sampling_callback": self.asks.sampling_callback(self.name),
        }
        if self.config.roots == []:  # `roots: false`: the capability is not offered
            del callbacks["list_roots_callback"]
        return callbacks

    async def _on_log(self, params: Any) -> None:
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        where = f" {params.logger}" if params.logger else ""
        line = f"{time.strftime('%H:%M:%S')} {params.level}{where}: {text}"[:2000]
        self.logs.append(line)
        self._notify(ServerLog(self.name, str(params.level), line))

    async def _cataloguer(self, client: Any) -> None:
        """Resources, templates and prompts, listed after connect and whenever they change;
        subscriptions are renewed on a new session."""
        for uri in list(self.subscriptions):
            with contextlib.suppress(Exception), _legacy_ok():
                await client.subscribe_resource(uri)
        while True:
            await self._relist.wait()
            await asyncio.sleep(REFRESH_DEBOUNCE)
            self._relist.clear()
            self.catalog = await self._list_catalog(client)
            self._notify(CatalogChanged(self.name))

    async def _list_catalog(self, client: Any) -> cat.Catalog:
        found = cat.Catalog(listed=True)
        await self._list_kind(
            found, "resources", client.list_resources, cat.resource, found.resources
        )
        await self._list_kind(
            found, "templates", client.list_resource_templates, cat.template, found.templates
        )
        await self._list_kind(found, "prompts", client.list_prompts, cat.prompt, found.prompts)
        return found

    async def _list_kind(
        self,
        found: cat.Catalog,
        kind: str,
        lister: Callable[..., Any],
        convert_one: Callable[[Any], T],
        into: list[T],
    ) -> None:
        """One kind of the catalog, page by page, into `into`; a failure is kept in `found`."""
        # templates come with the resources capability
        if not self.info.can("prompts" if kind == "prompts" else "resources"):
            return
        try:
            into.extend(convert_one(item) for item in await self._pages(lister, kind))
        except Exception as exc:
            found.errors[kind] = _short_error(root_cause(exc))

    async def _pages(self, lister: Callable[..., Any], kind: str) -> list[Any]:
        attribute = {"templates": "resource_templates"}.get(kind, kind)
        items: list[Any] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await lister(cursor=cursor, cache_mode="bypass")
            items.extend(getattr(page, attribute) or [])
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    def _ready_client(self) -> Any:
        client = self.client
        if client is None or self.state != "ready":
            raise NotReady(
                f"MCP server '{self.name}' is {self.state}"
                + (f": {self.error}" if self.error else "")
            )
        return client

    async def read_resource(self, uri: str) -> list[cat.Content]:
        return cat.contents(await self.read(uri))

    async def read(self, uri: str) -> Any:
        """The server's `resources/read` result as the SDK gives it (blobs still base64)."""
        return await self._ready_client().read_resource(uri, cache_mode="bypass")

    async def list_all(self, kind: str) -> list[Any]:
        """Every resource or prompt (`kind`) the server lists now, page by page."""
        client = self._ready_client()
        lister = client.list_prompts if kind == "prompts" else client.list_resources
        return await self._pages(lister, kind)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return await self._ready_client().get_prompt(name, arguments)

    async def subscribe(self, uri: str) -> None:
        client = self._ready_client()
        if not self.info.capabilities.get("resources", {}).get("subscribe"):
            raise NotReady(f"MCP server '{self.name}' does not offer subscriptions")
        with _legacy_ok():
            await client.subscribe_resource(uri)
        self.subscriptions.setdefault(uri, 0)

    async def unsubscribe(self, uri: str) -> None:
        self.subscriptions.pop(uri, None)
        client = self.client
        if client is not None and self.state == "ready":
            with _legacy_ok():
                await client.unsubscribe_resource(uri)

    async def _listen(self, client: Any, refresh: asyncio.Event) -> None:
        with contextlib.suppress(Exception):
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as subscription:
                async for _event in subscription:
                    refresh.set()
                    self._relist.set()

    # -- calls ---------------------------------------------------------------------------

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        progress: Callable[[float, float | None, str | None], Any] | None = None,
    ) -> str | dict[str, Any]:
        import mcp.types as types
        from mcp import MCPError

        client = self.client
        if client is None or self.state != "ready":
            return json.dumps(
                {
                    "error": f"MCP server '{self.name}' is {self.state}"
                    + (f": {self.error}" if self.error else "")
                }
            )
        try:
            result = await client.call_tool(
                tool, args, read_timeout_seconds=self.config.timeout, progress_callback=progress
            )
        except MCPError as exc:
            code = getattr(getattr(exc, "error", None), "code", None) or getattr(exc, "code", None)
            if code == types.CONNECTION_CLOSED and self._dead is not None:
                self._dead.set()
            if code == -32001:
                return json.dumps(
                    {
                        "error": f"MCP call failed: TimeoutError: MCP call timed out after "
                        f"{self.config.timeout:g}s"
                    }
                )
            return json.dumps({"error": f"MCP server '{self.name}' failed: {exc}"})
        return convert(result)

    # -- control -----------------------------------------------------------------------

    def stop(self) -> None:
        self._stop.set()

    def restart(self) -> None:
        self._restart.set()
        if self._dead is not None:
            self._dead.set()

    def available(self) -> bool:
        if self.state == "ready":
            return True
        from workbench.core.tools.registry import ToolUnavailable

        reason = f"MCP server '{self.name}' is {self.state}" + (
            f": {self.error}" if self.error else ""
        )
        raise ToolUnavailable(reason)

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, TimeoutError):
            text = (
                f"no answer to {self.phase or 'the connection'} within "
                f"{self.config.connect_timeout:g} s (connect_timeout)"
            )
        elif isinstance(exc, FileNotFoundError):
            text = f"command not found: {self.config.command}"
        else:
            text = f"{type(exc).__name__}: {exc}"
        tail = self.stderr_tail()[-3:] if not self.config.url else []
        return text + (f" — stderr: {' | '.join(tail)}" if tail else "")


def _noise_text(exc: Exception) -> str:
    """The offending line, short, from the SDK's parse error."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            value = errors()[0].get("input")
        except Exception:
            value = None
        if isinstance(value, str | bytes):
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            return repr(text[:120] + ("…" if len(text) > 120 else ""))
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"


@contextlib.contextmanager
def _legacy_ok() -> Any:
    """resources/subscribe is the way on the sessions we open (legacy mode); the SDK warns
    that 2026 sessions replace it, which is not news to the user."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="resources/(un)?subscribe")
        yield


def _short_error(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


@contextlib.asynccontextmanager
async def _watched(transport: Any, dead: asyncio.Event) -> AsyncIterator[Any]:
    """Pass a stdio transport through, setting `dead` the moment the server's output ends."""
    import anyio

    async with transport as (read, write):
        send: MemoryObjectSendStream[SessionMessage | Exception]
        receive: MemoryObjectReceiveStream[SessionMessage | Exception]
        send, receive = anyio.create_memory_object_stream(max_buffer_size=float("inf"))

        async def pump() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            finally:
                dead.set()

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def _http_transport(config: ServerConfig) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(config.connect_timeout, read=max(config.timeout, 300))
    async with (
        httpx2.AsyncClient(headers=config.headers, timeout=timeout) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams
