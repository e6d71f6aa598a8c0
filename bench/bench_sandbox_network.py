"""What the sandbox's network setting breaks: what agents run most, plain and under bubblewrap
with each `terminal.network` (on, the default: a network namespace of its own reaching out
through slirp4netns, not the host's loopback; host: the host's; off: none), side by side.

Each command goes the terminal tool's own way (the backend builds argv and environment,
`run_process` starts it under the reaper), in a scratch working directory, with HOME a
fake home (in the real one, not under /tmp, which the sandbox replaces) whose ~/.ssh holds
the key and config for a real sshd on 127.0.0.1 (hidden by the sandbox whatever the
network setting; ssh is pointed at it with -F, since ssh finds ~ from the password
database, not HOME), and git servers on 127.0.0.1 (the host's loopback: reached only with
`host`). The registry commands reach the real PyPI and npm registry. It prints, for each
command and setting, whether it works and, if not, the line that says why; the default of
`terminal.network` follows from this table.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from harness import fmt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the sshd helper lives in tests
from tests.support.procs import free_port
from tests.support.sshd import Sshd, running_sshd, sshd_missing

TIMEOUT = 120
GIT = "git -c user.name=bench -c user.email=bench@example.invalid"
# This machine's pip.conf adds local file mirrors that answer without any network: measure
# the registry itself (with the CA bundle that pip.conf names, which reaching it needs here).
CA = "/etc/ssl/certs/ca-certificates.crt"
PIP = "PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1" + (
    f" PIP_CERT={CA}" if os.path.exists(CA) else ""
)
WHY = re.compile(
    r"error|fatal|denied|failed|refused|unreachable|no such|read-only|could not|can't", re.I
)


def commands(http_port: int, daemon_port: int, sshd: Sshd | None, remote: Path) -> dict:
    """What an agent runs, by name: package installs, registry look-ups, git's transports."""
    found = {
        "pip download six (PyPI)": f"{PIP} pip download --no-deps --no-cache-dir -d dl six",
        "pip install six into a venv": (
            f"python3 -m venv venv && {PIP} venv/bin/pip install --no-cache-dir six"
        ),
        "npm view is-number version": "npm view is-number version",
        "  the same, npm cache in /tmp": "npm view --cache /tmp/npm is-number version",
        "git clone http://127.0.0.1": f"git clone -q http://127.0.0.1:{http_port}/repo.git c",
        "git push git://127.0.0.1 (daemon)": (
            f"{GIT} push -q git://127.0.0.1:{daemon_port}/repo.git HEAD:refs/heads/b-$RANDOM"
        ),
    }
    if sshd is not None:
        found["git push over ssh (127.0.0.1)"] = (
            f'GIT_SSH_COMMAND="ssh -F $HOME/.ssh/config" {GIT} push -q '
            f"ssh://bench-sshd{remote}/repo.git HEAD:refs/heads/b-$RANDOM"
        )
    return found


@contextlib.contextmanager
def http_git(root: Path) -> Iterator[int]:
    """git's dumb HTTP transport: the files of a bare repository, served on 127.0.0.1."""
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def git_daemon(root: Path) -> Iterator[int]:
    """`git daemon` on 127.0.0.1 that accepts pushes; stopped on exit."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={root}",
            "--export-all",
            "--enable=receive-pack",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_listening(port: int, deadline: float = 20.0) -> None:
    import socket

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def make_remote(root: Path) -> Path:
    """A bare repository with one commit, served by every git server here."""
    seed = root / "seed"
    subprocess.run(["git", "init", "-q", str(seed)], check=True)
    (seed / "README").write_text("bench\n")
    subprocess.run(
        f"{GIT} -C {seed} add README && {GIT} -C {seed} commit -qm seed", shell=True, check=True
    )
    remote = root / "remote"
    remote.mkdir()
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(seed), str(remote / "repo.git")], check=True
    )
    subprocess.run(
        ["git", "-C", str(remote / "repo.git"), "config", "http.receivepack", "true"], check=True
    )
    subprocess.run(["git", "-C", str(remote / "repo.git"), "update-server-info"], check=True)
    return remote


def fake_home(root: Path, sshd: Sshd | None) -> Path:
    """A user home whose ~/.ssh reaches the sshd as ~/.ssh usually does: key and config."""
    home = root / "user-home"
    ssh = home / ".ssh"
    ssh.mkdir(parents=True)
    if sshd is not None:
        (ssh / "id_ed25519").write_bytes(sshd.key.read_bytes())
        (ssh / "id_ed25519").chmod(0o600)
        (ssh / "config").write_text(
            f"Host bench-sshd\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
            f"  IdentityFile {ssh / 'id_ed25519'}\n  UserKnownHostsFile {ssh / 'known_hosts'}\n"
            "  StrictHostKeyChecking accept-new\n  BatchMode yes\n"
        )
    return home


def run_one(backend, command: str, cwd: Path) -> tuple[bool, float, str]:
    """Whether it worked, how long it took, and the last line it printed."""
    from workbench.builtins.terminal.terminal_tool import run_spawn

    cwd.mkdir(parents=True)
    if " push " in command:  # a project to push from: a clone made outside, as a user has
        source = cwd.parent.parent / "remote" / "repo.git"
        subprocess.run(["git", "clone", "-q", str(source), str(cwd / "repo")], check=True)
        cwd = cwd / "repo"
    spawn = backend.shell(command, str(cwd), TIMEOUT, session=str(cwd))
    start = time.perf_counter()
    result = json.loads(run_spawn(spawn, TIMEOUT))
    took = time.perf_counter() - start
    lines = [line for line in (result.get("output") or "").splitlines() if line.strip()]
    telling = [line for line in lines if WHY.search(line)] or lines[-1:]
    why = result.get("error") or (telling[0] if telling else "")
    return result.get("exit_code") == 0, took, why


def main() -> int:
    from workbench.core.backends import LocalBackend
    from workbench.core.backends.sandbox import SandboxBackend, bwrap_status

    works, why = bwrap_status()
    print("sandbox network: what agents run, plain vs bubblewrap with each terminal.network")
    if not works:
        print(f"  skipped: {why}")
        return 0
    # Not under /tmp: the sandbox's /tmp is its own, so a home there would not be the home.
    scratch = tempfile.TemporaryDirectory(prefix="bench-sandbox-network-", dir=Path.home())
    with scratch as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        remote = make_remote(root)
        missing = sshd_missing()
        sshd = None if missing else stack.enter_context(running_sshd(_mkdir(root / "sshd")))
        home = fake_home(root, sshd)
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = str(home)  # the sandbox hides this home's ~/.ssh
        stack.callback(_restore_home, old_home)
        http_port = stack.enter_context(http_git(remote))
        daemon_port = stack.enter_context(git_daemon(remote))
        hermes = _mkdir(root / "hermes-home")
        backends = {
            "plain": LocalBackend(unconfined="bench"),
            "on (default)": SandboxBackend(network="on", hermes_home=hermes),
            "host": SandboxBackend(network="host", hermes_home=hermes),
            "off": SandboxBackend(network="off", hermes_home=hermes),
        }
        if missing:
            print(f"  (no git push over ssh: {missing})")
        tally = dict.fromkeys(backends, 0)
        for n, (name, command) in enumerate(commands(http_port, daemon_port, sshd, remote).items()):
            print(f"  {name}")
            for setting, backend in backends.items():
                ok, took, last = run_one(
                    backend, command, root / "work" / f"{n}-{setting.replace(' ', '-')}"
                )
                tally[setting] += ok
                shown = "works" if ok else f"FAILS: {last[:110]}"
                print(f"    {setting:<12} {fmt(took)}  {shown}")
        total = len(commands(http_port, daemon_port, sshd, remote))
        print("  works: " + ", ".join(f"{s} {tally[s]}/{total}" for s in backends))
    return 0


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _restore_home(old: str | None) -> None:
    if old is None:
        os.environ.pop("HOME", None)
    else:
        os.environ["HOME"] = old


if __name__ == "__main__":
    sys.exit(main())
