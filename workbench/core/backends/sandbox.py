"""The terminal's sandbox: bubblewrap around each command, so a detector's miss is not a disaster.

Inside, the whole filesystem is read-only except the working directory and the directories
of `approvals.write_roots`; /tmp, /var/tmp and /dev/shm are private, empty and of a size;
HERMES_HOME and credential folders and files (~/.ssh, ~/.aws, ...) are covered by empty
ones; /run (where daemons' sockets live) is empty; the network is `terminal.network`'s
(netns.py: by default the internet, not the host's loopback); memory, CPU and processes
are limited (limits.py); the command cannot see our processes. Once built, it never falls
back to running unsandboxed: if bubblewrap stops working, the terminal refuses and says
why (whether to build one at all is `settings.py`'s choice).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from workbench.core.backends.base import Backend, BackendError, LocalBackend, Spawn
from workbench.core.backends.handshake import handshake_args, handshake_request
from workbench.core.backends.limits import (
    DEFAULT,
    NONE,
    Limits,
    limits_line,
    limits_request,
    process_limit_missing,
    tmpfs_args,
)
from workbench.core.backends.netns import (
    effective,
    network_args,
    network_label,
    network_line,
    network_request,
)
from workbench.core.backends.sandbox_cause import failed_output, sandbox_cause

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


def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap works here (user namespaces allowed, etc.), and why not."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap runs on Linux only, not {sys.platform}"
    path = shutil.which("bwrap")
    if path is None:
        return False, "bwrap is not installed (Debian: apt-get install bubblewrap)"
    return _probe(path)


@functools.cache  # per program found: a PATH that names another bwrap is probed again
def _probe(path: str) -> tuple[bool, str]:
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


def inside(path: str, places: list[str]) -> str | None:
    """The first of `places` that `path` is or lies under."""
    for place in places:
        if path == place or path.startswith(place.rstrip("/") + "/"):
            return place
    return None


def writable_roots(roots: tuple[str, ...], cwd: str, hidden: list[str]) -> list[str]:
    """The write roots the sandbox binds writable: those that exist, resolved (a link cannot
    lead the bind elsewhere), never one the sandbox hides, none twice, not the cwd again."""
    found: dict[str, None] = {}
    for root in roots:
        real = os.path.realpath(os.path.expanduser(root))
        if real != cwd and os.path.isdir(real) and inside(real, hidden) is None:
            found.setdefault(real, None)
    return list(found)


def project_state(roots: list[str]) -> list[str]:
    """The `.hermes` folders of the writable places (a project's approval rules and plugins,
    which a trusted project's session obeys and loads), resolved: kept read-only, so a
    command the gate could not read cannot rewrite the rules or plant a plugin."""
    found: dict[str, None] = {}
    for root in roots:
        real = os.path.realpath(os.path.join(root, ".hermes"))
        if os.path.isdir(real):
            found.setdefault(real, None)
    return list(found)


def bwrap_argv(
    bwrap: str,
    cwd: str,
    hidden: list[str],
    *,
    network: str,
    limits: Limits = NONE,
    keep: tuple[str, ...] = (),
    writable: list[str] | tuple[str, ...] = (),
    read_only: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """The bubblewrap command line that runs a command confined to `cwd` (and `writable`),
    less the folders of `read_only` inside them, on `network` (netns.py's modes), its
    /tmp, /var/tmp and /dev/shm of the size `limits` says."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += [*tmpfs_args(limits), "--tmpfs", "/run"]
    argv += network_args(network)
    argv += ["--bind", cwd, cwd]
    for root in writable:
        argv += ["--bind", root, root]
    for place in read_only:
        argv += ["--ro-bind", place, place]
    argv += _cover(hidden, keep)  # after the binds: a hidden place inside one stays hidden
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += [*handshake_args(), "--die-with-parent", "--new-session", "--chdir", cwd, "--"]
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
    network: str = "on"  # terminal.network (netns.py; see bench/bench_sandbox_network.py)
    limits: Limits = DEFAULT  # terminal.bubblewrap_* (limits.py)
    hermes_home: Path = Path()
    write_roots: tuple[str, ...] = ()  # approvals.write_roots: writable besides the cwd

    @property
    def sandboxed(self) -> bool:
        """This command runs in a working sandbox (one that cannot start refuses instead)."""
        return bwrap_status()[0]

    def hidden(self) -> list[str]:
        """The places commands cannot see, as they exist now."""
        return hidden_paths(self.hermes_home, os.path.expanduser("~"))

    def working(self) -> tuple[bool, str]:
        works, why = bwrap_status()
        return works, "" if works else f"terminal.sandbox is on, but {why}: commands are refused"

    def shell(self, command: str, cwd: str, timeout: float) -> Spawn:
        works, bwrap = bwrap_status()
        if not works:
            raise BackendError(f"terminal.sandbox is on, and {bwrap}; nothing was run")
        real = os.path.realpath(cwd)
        hidden = self.hidden()
        place = inside(real, hidden)
        if place is not None:
            raise BackendError(
                f"the working directory {cwd} is inside {place}, which the sandbox hides; "
                "nothing was run"
            )
        writable = writable_roots(self.write_roots, real, hidden)
        network = effective(self.network)[0]
        argv = bwrap_argv(
            bwrap,
            real,
            hidden,
            network=network,
            limits=self.limits,
            keep=(real,),
            writable=writable,
            read_only=project_state([real, *writable]),
        )
        # The home is read-only in here: npm's cache goes to the private /tmp (empty each
        # command) so installs work; one the user set explicitly is kept.
        env = self.env({"TMPDIR": "/tmp"})
        env.setdefault("npm_config_cache", "/tmp/.npm")
        confine = {
            **handshake_request(),
            **limits_request(self.limits),
            **network_request(network),
        }
        return Spawn([*argv, "bash", "-c", command], env, real, confine)

    def describe(self) -> str:
        works, why = bwrap_status()
        if not works:
            return f"sandbox NOT WORKING ({why}): terminal refused"
        roots = " and approvals.write_roots" if self.write_roots else ""
        return (
            f"sandbox (bubblewrap: writes only in the working directory{roots}, "
            f"{network_line(self.network)}; {limits_line(self.limits)})"
        )

    def label(self) -> str:
        if not bwrap_status()[0]:
            return "terminal: sandbox NOT WORKING"
        notes = [
            network_label(self.network),
            "NO process limit" if process_limit_missing(self.limits) else "",
        ]
        return ", ".join(["terminal: sandboxed", *filter(None, notes)])

    def failed_because(self, result: str) -> str | None:
        output = failed_output(result)
        if not output:
            return None
        network = effective(self.network)[0] != "off"
        return sandbox_cause(output, network=network, hidden=self.hidden())

    def outside(self) -> Backend | None:
        return LocalBackend(
            name=self.name, passthrough=self.passthrough, unconfined="let out by the user"
        )
