"""`hermes-tui serve`: when it refuses to start, and that no request without the token (or
from another site, or through a rebound DNS name) gets a workbench. Against the real server."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import time

import aiohttp
import pytest

from tests.support.cli import BIN
from tests.support.procs import alive, free_port
from tests.support.serve import serve
from workbench.tui import serve as served_module
from workbench.tui.serve import ServeRefused, is_loopback, settings


def test_loopback_is_only_loopback() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"))
    assert not any(
        is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.2", "example.com", "localhost.evil")
    )


def test_a_token_is_made_unless_given_and_beyond_loopback_none_is_refused() -> None:
    made = settings("127.0.0.1", 8000, None, False, None, environ={})
    assert made.token and len(made.token) >= 24
    assert made.address == f"http://127.0.0.1:8000/?token={made.token}"
    assert settings("127.0.0.1", 8000, None, False, None, environ={}).token != made.token
    env = {served_module.TOKEN_ENV: "from-the-environment-123"}
    assert (
        settings("127.0.0.1", 8000, None, False, None, environ=env).token
        == env[served_module.TOKEN_ENV]
    )
    assert settings("127.0.0.1", 8000, None, True, None, environ={}).token is None  # loopback
    with pytest.raises(ServeRefused, match=r"refusing to serve on 0\.0\.0\.0 without a token"):
        settings("0.0.0.0", 8000, None, True, None, environ={})
    with pytest.raises(ServeRefused, match="at least 16 characters"):
        settings("0.0.0.0", 8000, "short", False, None, environ={})
    with pytest.raises(ServeRefused, match="at least 16 characters"):
        settings("127.0.0.1", 8000, "sixteen chars but spaces", False, None, environ={})
    with pytest.raises(ServeRefused, match="contradict"):
        settings("127.0.0.1", 8000, "x" * 20, True, None, environ={})
    with pytest.raises(ServeRefused, match="not a TCP port"):
        settings("127.0.0.1", 0, None, False, None, environ={})
    assert settings("::1", 8000, None, False, None, environ={}).public_url == "http://[::1]:8000"


def test_beyond_loopback_without_a_token_it_refuses_and_never_listens(cli_env) -> None:
    port = free_port()
    result = subprocess.run(
        [str(BIN / "hermes-tui"), "serve", "--host", "0.0.0.0", "--port", str(port), "--no-token"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "refusing to serve on 0.0.0.0 without a token" in result.stderr
    assert "ssh -L" in result.stderr  # and says what to do instead
    with pytest.raises(ConnectionRefusedError):  # nothing listens there
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_a_port_in_use_is_said(cli_env) -> None:
    with serve(cli_env) as first:
        result = subprocess.run(
            [str(BIN / "hermes-tui"), "serve", "--port", str(first.port)],
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{first.port}" in result.stderr


async def test_without_the_right_token_no_request_gets_a_workbench(cli_env) -> None:
    with serve(cli_env) as server:
        base = server.base
        # unsafe: the cookie of an IP address (127.0.0.1) is kept, as a browser keeps it
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            for path in ("/", "/?token=wrong-token-wrong-token", "/static/js/textual.js"):
                async with http.get(base + path, allow_redirects=False) as answer:
                    assert answer.status == 403, path
                    assert "a valid token is needed" in await answer.text()
            refused = [
                (f"{base}/ws?token=wrong-token-wrong-token", {}),
                (f"{base}/ws", {"Cookie": f"hermes_tui_{server.port}=wrong-token-wrong"}),
                # the right token, but from a page of another site, or a rebound DNS name
                (f"{base}/ws?token={server.token}", {"Origin": "http://evil.example"}),
                (f"{base}/ws?token={server.token}", {"Host": f"evil.example:{server.port}"}),
            ]
            for url, headers in refused:
                with pytest.raises(aiohttp.WSServerHandshakeError) as raised:
                    await http.ws_connect(url, headers=headers)
                assert raised.value.status == 403, (url, headers)
            assert server.children() == []  # no workbench was started for any of them

            # the right token: the page, the cookie it sets, and a workbench for the websocket
            async with http.get(server.address, allow_redirects=False) as answer:
                assert answer.status == 303 and answer.headers["Location"] == "/"
                cookie = answer.cookies[f"hermes_tui_{server.port}"]
                assert cookie.value == server.token and cookie["httponly"]
                assert cookie["samesite"] == "Strict"
            async with http.get(base + "/") as answer:  # the cookie is enough now
                assert answer.status == 200 and "textual-terminal" in await answer.text()
            async with http.ws_connect(f"{base}/ws?width=80&height=24"):
                deadline = time.monotonic() + 60
                while not server.children():
                    assert time.monotonic() < deadline, "no workbench started"
                    await asyncio.sleep(0.05)


@pytest.mark.e2e  # the installed command as a process: stopped by a signal
async def test_ctrl_c_stops_the_server_and_every_workbench_it_started(cli_env) -> None:
    with serve(cli_env) as server:
        async with aiohttp.ClientSession() as http:
            tab = await http.ws_connect(f"{server.base}/ws?token={server.token}")
            deadline = time.monotonic() + 60
            while not server.children():
                assert time.monotonic() < deadline, "no workbench started"
                await asyncio.sleep(0.05)
            started = server.children()
            server.process.send_signal(signal.SIGINT)  # the tab still open
            deadline = time.monotonic() + 60
            while server.process.poll() is None:
                assert time.monotonic() < deadline, "the server did not stop"
                await asyncio.sleep(0.05)
            assert server.process.returncode == 0
            assert not any(alive(pid) for pid in started)
            await tab.close()
