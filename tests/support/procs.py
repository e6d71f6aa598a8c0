"""Processes seen through /proc (Linux): find a program's local model server, wait for it."""

from __future__ import annotations

import os
import secrets
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.support.waiting import PATIENCE

LOCAL_SERVER = b"workbench.core.model.local"


def wait_until(predicate: Callable[[], object], timeout: float = PATIENCE, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not reached in {timeout:g} s: {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Running (a zombie has ended: only its exit status is left)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] not in ("Z", "X")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def local_servers(home: Path) -> list[int]:
    """The local model servers started for this HERMES_HOME: their arguments name a place
    in it (the prompt cache). Their environment says so only for a moment: a server blanks
    its own /proc environ as it starts, so a look there alone misses it on a quiet machine."""
    in_home, in_env = f"{home}/".encode(), f"HERMES_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            if LOCAL_SERVER not in command:
                continue
            ours = in_home in command or in_env in (entry / "environ").read_bytes().split(b"\0")
            if ours and alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:  # ended while we looked
            continue
    return found


def listening_ports(pid: int) -> list[int]:
    """The TCP ports the process listens on."""
    try:
        sockets = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        table = [row.split() for row in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]]
    except OSError:
        return []
    return [
        int(row[1].rsplit(":", 1)[1], 16)
        for row in table
        if row[3] == "0A" and f"socket:[{row[9]}]" in sockets
    ]


def serving(pid: int) -> bool:
    """Whether the process's llama.cpp server has loaded its model (it listens before)."""
    for port in listening_ports(pid):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
                return answer.status == 200
        except OSError:  # 503 while loading, or not up yet
            continue
    return False


def free_port() -> int:
    """A TCP port free on loopback now (bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unique_sleep() -> str:
    """A sleep argument no other process on the machine has: its process can be found."""
    return f"{1000 + secrets.randbelow(1000)}.{secrets.randbelow(10**6):06d}"


def processes_with(arg: str) -> list[int]:
    """The processes whose arguments hold `arg` as one of them."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if arg.encode() in argv:
                found.append(int(name))
    return found
