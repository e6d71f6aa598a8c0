"""A real `hermes-tui serve` for the tests: started on a free loopback port, its address read
from what it prints, and stopped with every workbench it started (its process group)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.cli import BIN
from tests.support.procs import free_port

ADDRESS = re.compile(r"serves the workbench at (http://\S+)")


@dataclass
class Served:
    process: subprocess.Popen[str]
    port: int
    address: str  # with the token

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return self.address.split("token=", 1)[1]

    def children(self) -> list[int]:
        """The workbench processes (and their shells) the server started, one per tab."""
        found, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            try:
                listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            found += [int(child) for child in listed]
            todo += [int(child) for child in listed]
        return found


@contextmanager
def serve(env: dict[str, str], *args: str, timeout: float = 30) -> Iterator[Served]:
    port = free_port()
    command = [str(BIN / "hermes-tui"), "serve", "--port", str(port), *args]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its workbenches too are stopped with its group
    )
    try:
        yield Served(process, port, _address(process, timeout))
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass


def _address(process: subprocess.Popen[str], timeout: float) -> str:
    deadline, said = time.monotonic() + timeout, []
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line:
            said.append(line)
            found = ADDRESS.search(line)
            if found:
                return found.group(1)
        elif process.poll() is not None:
            break
        else:
            time.sleep(0.05)
    raise AssertionError(f"hermes-tui serve never said its address:\n{''.join(said)}")
