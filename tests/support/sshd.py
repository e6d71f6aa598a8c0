"""A real OpenSSH server on 127.0.0.1 for the ssh backend's tests: its own host key, a client
key authorised for the current user, and a known-hosts file, all in a temporary directory."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.procs import free_port

SSHD = "/usr/sbin/sshd"
START_DEADLINE = 20.0


@dataclass
class Sshd:
    port: int
    user: str
    key: Path
    known_hosts: Path

    def terminal_config(self, cwd: Path | None = None) -> str:
        """The `terminal:` section of a config.yaml that uses this server."""
        lines = [
            "terminal:",
            "  backend: ssh",
            "  ssh_host: 127.0.0.1",
            f"  ssh_port: {self.port}",
            f"  ssh_user: {self.user}",
            f"  ssh_key: {self.key}",
            f"  ssh_options: [UserKnownHostsFile={self.known_hosts}]",
        ]
        if cwd is not None:
            lines.append(f"  cwd: {cwd}")
        return "\n".join(lines) + "\n"


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def running_sshd(root: Path) -> Iterator[Sshd]:
    """An sshd on 127.0.0.1 with its keys in `root`, stopped on exit (no pytest needed: the
    benchmarks use it too). Raises RuntimeError when it does not start."""
    _keygen(root / "host_key")
    _keygen(root / "client_key")
    shutil.copy(root / "client_key.pub", root / "authorized_keys")
    (root / "sshd_config").write_text(
        f"HostKey {root / 'host_key'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nUseDNS no\n"
        "PidFile none\nListenAddress 127.0.0.1\n"
    )
    if not os.path.isdir("/run/sshd") and os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    port = free_port()
    log = open(root / "sshd.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(root / "sshd_config"), "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_DEADLINE
        while not _listening(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start: {(root / 'sshd.log').read_text()}")
            time.sleep(0.05)
        user = pwd.getpwuid(os.geteuid()).pw_name
        yield Sshd(port, user, root / "client_key", root / "known_hosts")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def sshd_missing() -> str:
    """Why no sshd can be started here ("" when one can)."""
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        return "openssh-server and openssh-client are needed (make system-deps)"
    return ""
