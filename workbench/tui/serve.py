"""`hermes-tui serve`: the same workbench in a web browser, through textual-serve.

Each browser tab runs its own `hermes-tui` process, which runs commands as the user: an
open port is a shell. So the server listens on loopback unless told otherwise, and every
HTTP and websocket request must carry a secret token (random unless the user gives one),
from the address printed at start or from the cookie that address sets. Beyond loopback it
refuses to start without a token. The websocket must come from a page of this server (its
Origin), so another site open in the same browser cannot drive the workbench, and on
loopback the Host must be a loopback name, so a DNS name rebound to 127.0.0.1 is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import re
import secrets
import shlex
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

TOKEN_ENV = "HERMES_TUI_SERVE_TOKEN"
MIN_TOKEN = 16  # characters of a token the user gives
TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+")  # safe in a URL as it is
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SHUTDOWN_WAIT = 3.0  # seconds open tabs get on Ctrl+C before their websockets are closed


class ServeRefused(Exception):
    """The server will not start as asked; the message says why and what to do."""


@dataclass(frozen=True)
class ServeSettings:
    host: str
    port: int
    token: str | None  # None: no token (loopback only)
    public_url: str

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def address(self) -> str:
        """What the user opens: the public URL, with the token."""
        return f"{self.public_url}/" + (f"?token={self.token}" if self.token else "")


def is_loopback(host: str) -> bool:
    """Only loopback addresses and `localhost`; any other name may resolve anywhere."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings(
    host: str,
    port: int,
    token: str | None,
    no_token: bool,
    public_url: str | None,
    environ: Mapping[str, str] | None = None,
) -> ServeSettings:
    """What to serve, or ServeRefused: the checks happen before anything listens."""
    env = os.environ if environ is None else environ
    if not 0 < port < 65536:
        raise ServeRefused(f"--port {port} is not a TCP port (1-65535)")
    given = token if token is not None else env.get(TOKEN_ENV) or None
    if no_token and given:
        raise ServeRefused(f"--no-token and a token (--token or {TOKEN_ENV}) contradict")
    if no_token and not is_loopback(host):
        raise ServeRefused(
            f"refusing to serve on {host} without a token: the workbench runs commands as "
            "you, so anyone who can reach the port would have a shell. Drop --no-token (a "
            f"random token is made), give one with --token or {TOKEN_ENV}, or serve on "
            "127.0.0.1 and reach it through an SSH tunnel (ssh -L)"
        )
    if given is not None and (len(given) < MIN_TOKEN or not TOKEN_CHARS.fullmatch(given)):
        raise ServeRefused(
            f"the token must be at least {MIN_TOKEN} characters of A-Z, a-z, 0-9, "
            "'.', '_', '~' and '-'"
        )
    chosen = None if no_token else given or secrets.token_urlsafe(24)
    return ServeSettings(host, port, chosen, public_url or default_public_url(host, port))


def default_public_url(host: str, port: int) -> str:
    """Where a browser finds the server: the host, or this machine's name for a wildcard."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.getfqdn()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def app_command() -> str:
    """The command each browser tab runs (through a shell): this same hermes-tui, with this
    Python, in place of the shell."""
    return "exec " + shlex.join([sys.executable, "-m", "workbench"])


class GuardedServer(Server):
    """textual-serve's server with every request checked first (see the module's doc)."""

    def __init__(self, chosen: ServeSettings, command: str) -> None:
        super().__init__(
            command,
            host=chosen.host,
            port=chosen.port,
            title="hermes-tui",
            public_url=chosen.public_url,
        )
        self.settings = chosen
        self.cookie = f"hermes_tui_{chosen.port}"  # cookies are shared across ports

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        refusal = self.refusal(request)
        if refusal:
            return web.Response(status=403, text=f"hermes-tui: {refusal}\n")
        token = self.settings.token
        if token and request.query.get("token") and request.path == "/":
            # the token moves into a cookie, and out of the address bar and the history
            response = web.HTTPSeeOther("/")
            response.set_cookie(self.cookie, token, httponly=True, samesite="Strict", path="/")
            return response
        return await handler(request)

    def refusal(self, request: web.Request) -> str:
        """Why this request gets no app ("" when it may go on)."""
        if self.settings.loopback and not self._known_host(request.host):
            return f"this server answers only to {', '.join(LOOPBACK_NAMES)} (Host header)"
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
            return "a page of another site may not use this server"
        token = self.settings.token
        if token is None:
            return ""
        offered = request.query.get("token") or request.cookies.get(self.cookie) or ""
        if not hmac.compare_digest(offered.encode(), token.encode()):
            return "a valid token is needed: open the address printed when the server started"
        return ""

    def _known_host(self, host: str) -> bool:
        names = {f"{name}:{self.settings.port}" for name in LOOPBACK_NAMES}
        names.add(urlsplit(self.settings.public_url).netloc.lower())
        return host.lower() in names

    def initialize_logging(self) -> None:
        super().initialize_logging()
        # each request's line would carry the token from its address into the log
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def on_startup(self, app: web.Application) -> None:
        print(describe(self.settings), flush=True)

    def run(self) -> None:
        self.initialize_logging()
        try:
            self._run()
        finally:  # a tab's workbench outlives a server stopped under it: never left running
            stop_children()

    def _run(self) -> None:
        web.run_app(
            self._make_app(),
            host=self.settings.host.strip("[]"),
            port=self.settings.port,
            print=None,
            access_log=None,
            # open tabs would hold the server for a minute; their workbenches are told to quit
            shutdown_timeout=SHUTDOWN_WAIT,
        )


def describe(chosen: ServeSettings) -> str:
    lines = [f"hermes-tui serves the workbench at {chosen.address}"]
    if chosen.token is None:
        lines.append(
            "No token: anyone on this machine who can reach the port can run commands as you."
        )
    else:
        lines.append("Anyone with this address can run commands as you: keep it secret.")
    if not chosen.loopback:
        lines.append(
            "The address travels unencrypted over the network; an SSH tunnel to a server on "
            "127.0.0.1 is safer."
        )
    lines.append("Ctrl+C stops the server (and every workbench it started).")
    return "\n".join(lines)


def children(pid: int | None = None) -> list[int]:
    """This process's children (Linux: read from /proc; elsewhere none are found)."""
    pid = os.getpid() if pid is None else pid
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found += [int(child) for child in listed.read().split()]
    except OSError:
        return found
    return found


def stop_children(wait: float = SHUTDOWN_WAIT) -> None:
    """SIGTERM to every workbench this server started, SIGKILL to those still there later."""
    import signal
    import time

    started = children()
    for pid in started:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(_running(pid) for pid in started):
        time.sleep(0.05)
    for pid in started:
        if _running(pid):
            _signal(pid, signal.SIGKILL)
            _reap(pid)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _running(pid: int) -> bool:
    """Still running: a child that ended is reaped here (asyncio's loop is gone by now)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already
        return False
    return done == 0


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def serve(chosen: ServeSettings) -> None:
    GuardedServer(chosen, app_command()).run()
