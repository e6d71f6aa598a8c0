"""Issue 36, item 9, tried as a hostile model would: limits and the network, through the real
`hermes-tui call` (headless), in a scratch world outside /tmp, as root and as an unprivileged
user, with the sandbox on (by default, where bubblewrap works) and off.

- A 1.5 GB allocation fails in the sandbox (RLIMIT_DATA, 1024 MB by default); without it,
  nothing limits it.
- A spawn loop that is no fork bomb the gate knows (a Python loop of `subprocess.Popen`, a
  shell loop of background sleeps) stops at the process limit in the sandbox; with or
  without it, the call returns with nothing it started left running.
- Filling /tmp or /dev/shm stops at its size in the sandbox ("No space left on device").
- A TCP server on the host's 127.0.0.1 and an abstract unix socket (`@name`) the test runs
  serve a marker: in the sandbox (`terminal.network: on`, the default) neither is reached,
  and the marker never reaches the output; with `terminal.network: host`, or without the
  sandbox, both are (the host's network).
- An HTTP DELETE whose method is computed at run time (`curl -X "$(echo DELETE)"`, ...)
  against a local HTTP server the test runs: the server never receives a DELETE. Headless it
  is denied (it asks); with --yes outside the sandbox it is denied (not understood); in the
  sandbox --yes runs it, and the host's loopback is out of its reach.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import hostile
from tests.support.procs import processes_with, unique_sleep

pytestmark = pytest.mark.e2e

HOST_NETWORK = "terminal:\n  network: host\n"
CONFIGS = {"default": "", "off": hostile.SANDBOX_OFF, "on": hostile.SANDBOX_ON}
CHOSEN = os.environ.get("HOSTILE_CONFIGS", "default,off").split(",")
users = pytest.mark.parametrize("user", hostile.USERS)
configs = pytest.mark.parametrize("config", CHOSEN)
MARKER = "hostile-loopback-marker-5e1b"


@pytest.fixture(scope="module")
def confined_by_default() -> bool:
    return hostile.bwrap_works()


@pytest.fixture
def world(tmp_path: Path, user: str) -> Iterator[Callable[[str], hostile.Scratch]]:
    """A scratch world for `user` in one of CONFIGS (or a config's text), removed after."""
    why = hostile.skip_unless_user(user)
    if why:
        pytest.skip(why)
    root = hostile.scratch_root(tmp_path, user)
    yield lambda config: hostile.build(root, CONFIGS.get(config, config), user)
    if root != tmp_path:
        shutil.rmtree(root, ignore_errors=True)


def confined(config: str, by_default: bool) -> bool:
    return config == "on" or (config == "default" and by_default)


def terminal(s: hostile.Scratch, command: str, *, yes: bool = True) -> dict[str, Any]:
    done = hostile.call(s, "terminal", {"command": command}, yes=yes)
    try:
        return dict(json.loads(done.stdout))
    except ValueError:
        pytest.fail(f"no result from {command!r}: {done.stderr[-500:]}", pytrace=False)


# -- memory, processes, /tmp --------------------------------------------------------------


@users
@configs
def test_a_1_5_gb_allocation(world, config: str, confined_by_default: bool) -> None:
    out = terminal(world(config), "python3 -c \"b = bytearray(1500 << 20); print('allocated')\"")
    if confined(config, confined_by_default):
        assert "MemoryError" in out["output"] and "allocated" not in out["output"], out
    else:
        assert out["output"] == "allocated\n", out  # nothing limits it outside the sandbox


SPAWN_LOOPS = {
    "python-popen": 'python3 -c \'import subprocess\nfor i in range(3000): subprocess.Popen(["sleep", "{s}"])\'',
    "bash-background": "for i in $(seq 5000); do sleep {s} & done",
}


@users
@configs
@pytest.mark.parametrize("loop", SPAWN_LOOPS)
def test_a_spawn_loop_ends_with_the_call(
    world, config: str, loop: str, confined_by_default: bool
) -> None:
    marker = unique_sleep()
    out = terminal(world(config), SPAWN_LOOPS[loop].format(s=marker))
    assert processes_with(marker) == [], "a process the loop started outlived the call"
    if confined(config, confined_by_default):
        assert "Resource temporarily unavailable" in out["output"], out


@users
@configs
@pytest.mark.parametrize("place", ["/tmp", "/dev/shm"])
def test_filling_a_tmp(world, config: str, place: str, confined_by_default: bool) -> None:
    name = f"{place}/hostile-fill-{unique_sleep()}"
    try:
        out = terminal(world(config), f"head -c 1100M /dev/zero > {name}; echo exit=$?")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)  # outside the sandbox it wrote the host's
    if confined(config, confined_by_default):
        assert "No space left on device" in out["output"] and "exit=1" in out["output"], out
    else:
        assert out["output"] == "exit=0\n", out


# -- the host's loopback and abstract sockets -----------------------------------------------


@contextlib.contextmanager
def serving(server: socket.socket) -> Iterator[None]:
    """Answer every connection with MARKER, in a thread, until the block ends."""

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(MARKER.encode() + b"\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown(socket.SHUT_RDWR)
        server.close()
        thread.join(timeout=5)


@pytest.fixture
def host_services() -> Iterator[dict[str, str]]:
    """A TCP server on 127.0.0.1 and an abstract unix socket, each serving MARKER, and the
    commands that read them."""
    tcp = socket.create_server(("127.0.0.1", 0))
    name = f"hermes-hostile-{unique_sleep()}"
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0" + name)
    abstract.listen()
    port = tcp.getsockname()[1]
    read = "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0" + name + "'); print(s.recv(99).decode().strip())"  # fmt: skip
    with serving(tcp), serving(abstract):
        yield {
            "tcp": f"head -1 < /dev/tcp/127.0.0.1/{port}",
            "curl": f"curl -s --http0.9 --max-time 10 http://127.0.0.1:{port}/",
            "abstract": f'python3 -c "{read}"',
        }


@users
@pytest.mark.parametrize("config", [*CHOSEN, "host"])
@pytest.mark.parametrize("kind", ["tcp", "curl", "abstract"])
def test_the_hosts_loopback_and_abstract_sockets(
    world, config: str, kind: str, host_services: dict[str, str], confined_by_default: bool
) -> None:
    s = world(HOST_NETWORK if config == "host" else config)
    out = terminal(s, host_services[kind])
    if confined(config, confined_by_default):
        assert MARKER not in json.dumps(out), out
    else:  # the host's network: without the sandbox, or terminal.network: host
        assert MARKER in out["output"], out


# -- an HTTP DELETE whose method is computed ------------------------------------------------


@pytest.fixture
def api() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server that records the method of every request it gets."""
    seen: list[str] = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append(self.command)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok\n")

        do_GET = do_POST = do_DELETE = do_PUT = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


COMPUTED_DELETES = [
    'curl -s -X "$(echo DELETE)" http://127.0.0.1:{port}/items/1',
    'M=$(printf DEL; printf ETE); curl -s --request "$M" http://127.0.0.1:{port}/items/1',
    "curl -s -X$(echo DELETE) http://127.0.0.1:{port}/items/1",
    "wget -q -O- --method=$(echo DELETE) http://127.0.0.1:{port}/items/1",
]


@users
@configs
@pytest.mark.parametrize("yes", [False, True], ids=["headless", "yes"])
@pytest.mark.parametrize("command", COMPUTED_DELETES)
def test_a_computed_delete_never_reaches_the_server(
    world,
    config: str,
    yes: bool,
    command: str,
    api: tuple[int, list[str]],
    confined_by_default: bool,
) -> None:
    port, seen = api
    out = terminal(world(config), command.format(port=port), yes=yes)
    assert "DELETE" not in seen, out
    if not (yes and confined(config, confined_by_default)):  # asked: no one to answer
        assert out["status"] == "denied" and "not understood" in out["error"], out
