"""The sandbox's network, for real: by default its own namespace reaching out through
slirp4netns, with no way to the host's loopback or its abstract unix sockets; `host` the
host's; `off` none. slirp4netns ends with the command, and a command whose network did not
start never runs. Each command runs the terminal's way (backend, reaper)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.procs import alive, parent_of, wait_until
from tests.support.sandbox import confined
from workbench.builtins.terminal import terminal_tool
from workbench.core.backends import backend_from_config, netns
from workbench.core.backends.handshake import RESOLV_FD
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.config import Config

needs_bwrap = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")
needs_slirp = pytest.mark.skipif(netns.slirp4netns() is None, reason=netns.NO_SLIRP)
MARKER = "served-by-the-host-7f3a1c"


def sandbox(tmp_path: Path, network: str = "on") -> SandboxBackend:
    return SandboxBackend(hermes_home=tmp_path / "hermes", network=network)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


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
        server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        server.close()
        thread.join(timeout=5)


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    with serving(server):
        yield server.getsockname()[1]


@pytest.fixture
def abstract_server() -> Iterator[str]:
    name = f"hermes-tui-test-{os.getpid()}-{threading.get_ident()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen()
    with serving(server):
        yield name


def tcp(host: str, port: int) -> str:
    return f"timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port} && head -1 <&3'"


def abstract(name: str) -> str:
    code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print(s.recv(99).decode().strip())"
    return f'python3 -c "{code}"'


def test_each_mode_gives_bubblewrap_its_part() -> None:
    assert netns.network_args("off") == ["--unshare-net"]
    assert "--unshare-net" not in netns.network_args("host")
    resolv = os.path.realpath("/etc/resolv.conf")
    if os.path.lexists("/etc/resolv.conf"):
        assert netns.network_args("on") == [
            "--unshare-net",
            "--ro-bind-data",
            str(RESOLV_FD),
            resolv,
        ]


@needs_slirp
def test_slirp4netns_is_asked_not_to_reach_the_hosts_loopback() -> None:
    request = netns.network_request("on")
    assert "--disable-host-loopback" in request["slirp4netns"]
    assert request["slirp4netns"][-2:] == ["{netns}", "tap0"]
    assert netns.network_request("host") == {} and netns.network_request("off") == {}


@needs_bwrap
@needs_slirp
def test_by_default_neither_the_hosts_loopback_nor_its_abstract_sockets_are_reached(
    tmp_path: Path, work: Path, loopback_server: int, abstract_server: str
) -> None:
    # Through the sandbox's own 127.0.0.1, and through slirp4netns's way to the host (10.0.2.2).
    for command in (
        tcp("127.0.0.1", loopback_server),
        tcp("10.0.2.2", loopback_server),
        abstract(abstract_server),
    ):
        out = confined(sandbox(tmp_path), command, work)
        assert out["exit_code"] != 0 and MARKER not in out["output"], (command, out)


@needs_bwrap
@needs_slirp
def test_by_default_the_network_reaches_out_and_its_own_loopback_works(
    tmp_path: Path, work: Path
) -> None:
    """Out: a server on the host's own address (not loopback), as the internet would be."""
    address = host_address()
    server = socket.create_server(("0.0.0.0", 0))
    own = (  # a server of its own on 127.0.0.1, and a connection to it
        "python3 -c \"import socket; s = socket.create_server(('127.0.0.1', 0)); "
        "c = socket.create_connection(s.getsockname()); s.accept()[0].sendall(b'own'); "
        'print(c.recv(9).decode())"'
    )
    server = socket.create_server(("0.0.0.0", 0))
    with serving(server):
        command = f"cat /etc/resolv.conf; {tcp(address, server.getsockname()[1])}; {own}"
        out = confined(sandbox(tmp_path), command, work)
    assert out["output"] == f"nameserver {netns.DNS}\n{MARKER}\nown\n", out


@needs_bwrap
def test_the_hosts_network_reaches_its_loopback_and_abstract_sockets(
    tmp_path: Path, work: Path, loopback_server: int, abstract_server: str
) -> None:
    for command in (tcp("127.0.0.1", loopback_server), abstract(abstract_server)):
        out = confined(sandbox(tmp_path, "host"), command, work)
        assert out["output"] == f"{MARKER}\n", (command, out)


@needs_bwrap
def test_off_reaches_nothing_but_its_own_loopback(tmp_path: Path, work: Path) -> None:
    out = confined(sandbox(tmp_path, "off"), "ip -o link | cut -d: -f2", work)
    assert out["output"].split() == ["lo"], out


@needs_bwrap
@needs_slirp
def test_slirp4netns_ends_with_the_command(tmp_path: Path, work: Path) -> None:
    spawn = sandbox(tmp_path).shell(
        "touch started; exec sleep 60", str(work), 60, session=str(work)
    )
    cancel = threading.Event()
    done: list[str] = []
    # an earlier test's slirp4netns may still be ending under the same shared server
    before = set(slirp4netns_processes())
    runner = threading.Thread(
        target=lambda: done.append(terminal_tool.run_spawn(spawn, 60, cancel=cancel))
    )
    runner.start()
    wait_until((work / "started").exists, what="the command started")
    server = terminal_tool._SERVER.pid
    slirps = [
        pid
        for pid in slirp4netns_processes()
        if pid not in before and parent_of(parent_of(pid)) == server
    ]
    assert len(slirps) == 1
    cancel.set()
    runner.join(timeout=30)
    assert done  # the call returned; slirp4netns goes right after (its device's teardown)
    wait_until(lambda: not alive(slirps[0]), what="slirp4netns ended")


@needs_bwrap
def test_a_network_that_does_not_start_runs_nothing(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "slirp4netns"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'cannot join the namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    out = confined(sandbox(tmp_path), "touch ran", work)
    assert not (work / "ran").exists()
    assert out["exit_code"] != 0 and out["output"] == (
        "hermes-tui: the sandbox's network did not start (slirp4netns: cannot join the "
        "namespace); nothing was run\n"
    )


@needs_bwrap
def test_without_slirp4netns_on_is_the_hosts_network_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bwrap", "bash"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or tool)
    monkeypatch.setenv("PATH", str(bin_dir))
    backend = backend_from_config(Config(tmp_path / "config.yaml", {}), tmp_path / "hermes")
    assert isinstance(backend, SandboxBackend) and backend.problems == [
        f"terminal.network is on, but {netns.NO_SLIRP}: sandboxed commands get the host's "
        "network, its loopback and abstract sockets too"
    ]
    assert netns.effective("on") == ("host", netns.NO_SLIRP)
    assert backend.label() == "terminal: sandboxed, host network (no slirp4netns)"
    assert f"network: the HOST's, loopback too ({netns.NO_SLIRP})" in backend.describe()
    spawn = backend.shell("true", str(tmp_path), 10, session=str(tmp_path))
    assert "--unshare-net" not in spawn.argv


def slirp4netns_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "slirp4netns":
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def host_address() -> str:
    """This machine's address on its way out (no packet is sent); skips with none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            pytest.skip("no network interface besides loopback")
        address = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("no network interface besides loopback")
    return str(address)


@needs_bwrap
@needs_slirp
def test_where_there_is_no_tun_device_on_is_the_hosts_network(tmp_path: Path, work: Path) -> None:
    """hermes-tui run inside the sandbox (its own tests, by an agent) has no /dev/net/tun:
    its commands get the network it has, and it says so."""
    code = (
        "from workbench.core.backends.netns import effective, network_label;"
        "print(effective('on')); print(network_label('on'))"
    )
    out = confined(sandbox(tmp_path), f'{sys.executable} -c "{code}"', work)
    assert out["output"] == f"('host', '{netns.NO_TUN}')\nhost network (no /dev/net/tun)\n", out
