"""The terminal's sandbox: bubblewrap around each command, so a detector's miss is not a disaster.

Inside, the whole filesystem is read-only except the working directory; /tmp and /var/tmp
are private and empty; HERMES_HOME and credential folders and files (~/.ssh, ~/.aws, ...)
are covered by empty ones; /run (where daemons' sockets live) is empty; there is no network
unless `terminal.sandbox_network` allows it; the command cannot see our processes. It
never falls back to running unsandboxed: if bubblewrap does not work here, the terminal
refuses and says why.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from workbench.core.backends.base import Backend, BackendError, LocalBackend, Spawn

# Relative to the user's home: hidden from every sandboxed command, whether read or written.
HIDDEN_IN_HOME = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".password-store",
    ".local/share/keyrings",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    ".hermes",
)
PROBE_TIMEOUT = 10.0


@functools.cache
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap works here (user namespaces allowed, etc.), and why not."""
    path = shutil.which("bwrap")
    if path is None:
        return False, "bwrap is not installed (Debian: apt-get install bubblewrap)"
    probe = [path, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_TIMEOUT, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap cannot start: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        return False, f"bwrap does not work here: {reason[-1] if reason else done.returncode}"
    return True, path


def hidden_paths(hermes_home: Path, user_home: str) -> list[str]:
    """What exists and must be covered: HERMES_HOME (also through a link) and credentials."""
    found: dict[str, None] = {}
    for place in (str(hermes_home), os.path.realpath(hermes_home)):
        found.setdefault(os.path.abspath(place), None)
    for rest in HIDDEN_IN_HOME:
        place = os.path.join(user_home, rest)
        found.setdefault(place, None)
        found.setdefault(os.path.realpath(place), None)
    return [p for p in found if os.path.lexists(p)]


def bwrap_argv(
    bwrap: str, cwd: str, hidden: list[str], *, network: bool, keep: tuple[str, ...] = ()
) -> list[str]:
    """The bubblewrap command line that runs a command confined to `cwd`."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    if network:
        for resolver in ("/run/systemd/resolve", "/run/resolvconf"):
            if os.path.isdir(resolver):  # /etc/resolv.conf often points in here
                argv += ["--ro-bind", resolver, resolver]
    else:
        argv.append("--unshare-net")
    argv += ["--bind", cwd, cwd, *_cover(hidden, keep)]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += ["--die-with-parent", "--new-session", "--chdir", cwd, "--"]
    return argv


def _cover(hidden: list[str], keep: tuple[str, ...]) -> list[str]:
    """Empty folders over hidden folders, /dev/null over hidden files (after the binds)."""
    argv: list[str] = []
    for place in hidden:
        if any(place == k or k.startswith(place + "/") for k in keep):
            continue  # the working directory itself is inside: refused before we get here
        if os.path.isdir(place):
            argv += ["--tmpfs", place, "--remount-ro", place]
        else:
            argv += ["--ro-bind", "/dev/null", place]
    return argv


@dataclass
class SandboxBackend(Backend):
    name: str = "local"
    network: bool = False
    hermes_home: Path = Path()

    @property
    def sandboxed(self) -> bool:
        return True

    def working(self) -> tuple[bool, str]:
        works, why = bwrap_status()
        return works, "" if works else f"terminal.sandbox is on, but {why}: commands are refused"

    def shell(self, command: str, cwd: str, timeout: float) -> Spawn:
        works, bwrap = bwrap_status()
        if not works:
            raise BackendError(f"terminal.sandbox is on, and {bwrap}; nothing was run")
        real = os.path.realpath(cwd)
        hidden = hidden_paths(self.hermes_home, os.path.expanduser("~"))
        for place in hidden:
            if real == place or real.startswith(place.rstrip("/") + "/"):
                raise BackendError(
                    f"the working directory {cwd} is inside {place}, which the sandbox hides; "
                    "nothing was run"
                )
        argv = bwrap_argv(bwrap, real, hidden, network=self.network, keep=(real,))
        env = self.env({"TMPDIR": "/tmp"})
        return Spawn([*argv, "bash", "-c", command], env, real)

    def describe(self) -> str:
        works, why = bwrap_status()
        network = "network on" if self.network else "network off"
        if not works:
            return f"sandbox NOT WORKING ({why}): terminal refused"
        return f"sandbox (bubblewrap: writes only in the working directory, {network})"

    def label(self) -> str:
        if not bwrap_status()[0]:
            return "terminal: sandbox NOT WORKING"
        return "terminal: sandboxed" + (", network on" if self.network else "")

    def outside(self) -> Backend | None:
        return LocalBackend(name=self.name, passthrough=self.passthrough)
