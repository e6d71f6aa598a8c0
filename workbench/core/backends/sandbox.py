"""The terminal's sandbox: bubblewrap around each command, so a detector's miss is not a disaster.

Inside, the whole filesystem is read-only except the session's working directory and the
directories of `approvals.write_roots` (fixed for the session: a call's `workdir` is only
where the command starts); each home shows only its non-dot entries and the dot entries
commands need, read-only (`layout.py`); HERMES_HOME and the credential stores are covered;
`.hermes` and the git dir's executable parts stay read-only inside the writable places
(`held.py`); /tmp, /var/tmp and /dev/shm are private, empty and of a size; /run (where
daemons' sockets live) is empty; the network is `terminal.network`'s (netns.py: by default
the internet, not the host's loopback); memory, CPU and processes are limited (limits.py);
the command cannot see our processes. It holds as root too: a user namespace of its own with every
capability dropped (no mount, no clock, no device node), `/proc/sys` and the kernel's other
settings read-only, its memory and keys masked. Once built, it never falls back to running
unsandboxed: if bubblewrap stops working, the terminal refuses and says why (whether to
build one at all is `settings.py`'s choice).
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
from workbench.core.backends.held import HeldError, hold
from workbench.core.backends.layout import LayoutError, cover, homes, lay_out, unseen
from workbench.core.backends.layout import inside as inside  # for confine.py, as before
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
from workbench.core.backends.sandbox_cause import Layout, failed_output, output_suggests
from workbench.core.safety import secrets

PROBE_TIMEOUT = 10.0
# Every command: its own user namespace with no capability (as root too: without one,
# bubblewrap keeps them all, and `umount` undoes what it hides), and its own processes.
CONFINED = (
    "--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try", "--die-with-parent", "--new-session",
)  # fmt: skip
# The kernel's settings stay read-only, what shows its memory, keys and timers is masked
# (euid 0 in a namespace with no capability may still write the host's /proc/sys).
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
PROC_MASKED = ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug")
SYS_MASKED = ("/sys/firmware",)


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
    """Run `true` with the options every command gets: the namespaces, the capabilities
    dropped, /proc's settings read-only, a tmpfs with a link and a file mounted in it, made
    read-only."""
    probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *kernel_argv()]
    probe += ["--tmpfs", "/tmp", "--symlink", "x", "/tmp/l", "--ro-bind", "/dev/null", "/tmp/f"]
    probe += ["--remount-ro", "/tmp", "--unshare-net", *CONFINED, "--chdir", "/", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_TIMEOUT, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap cannot start: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        return False, f"bwrap does not work here: {reason[-1] if reason else done.returncode}"
    return True, path


@functools.cache  # the host's /proc and /sys do not change while we run
def kernel_argv() -> tuple[str, ...]:
    """/proc and /sys as the sandbox mounts them, for those the host has (bubblewrap fails
    on a source that is missing)."""
    argv: list[str] = []
    for place in PROC_READ_ONLY:
        if os.path.exists(place):
            argv += ["--ro-bind", place, place]
    for place in PROC_MASKED:
        if os.path.exists(place):
            argv += ["--ro-bind", "/dev/null", place]
    for place in SYS_MASKED:
        if os.path.isdir(place):
            argv += ["--tmpfs", place, "--remount-ro", place]
    return tuple(argv)


def writable_roots(roots: tuple[str, ...], cwd: str, hidden: list[str]) -> list[str]:
    """The write roots the sandbox binds writable: those that exist, resolved (a link cannot
    lead the bind elsewhere), never one the sandbox hides, none twice, not the cwd again."""
    found: dict[str, None] = {}
    for root in roots:
        real = os.path.realpath(os.path.expanduser(root))
        if real != cwd and os.path.isdir(real) and inside(real, hidden) is None:
            found.setdefault(real, None)
    return list(found)


def bwrap_argv(
    bwrap: str, chdir: str, mounts: list[str], *, network: str, limits: Limits = NONE
) -> list[str]:
    """The bubblewrap command line that runs a command in `chdir`, with `mounts` (the
    writable places, the homes, what is held and covered: see `SandboxBackend.mounts`), on
    `network` (netns.py's modes), its /tmp, /var/tmp and /dev/shm of the size `limits` says."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *kernel_argv()]
    argv += [*tmpfs_args(limits), "--tmpfs", "/run"]
    argv += network_args(network)
    argv += mounts
    argv += [*CONFINED, *handshake_args(), "--chdir", chdir, "--"]
    return argv


def _both(places: list[str]) -> list[str]:
    """Each place as written and resolved, once."""
    found: dict[str, None] = {}
    for place in places:
        written = os.path.abspath(os.path.expanduser(place))
        found.setdefault(written, None)
        found.setdefault(os.path.realpath(written), None)
    return list(found)


@dataclass
class SandboxBackend(Backend):
    name: str = "local"
    network: str = "on"  # terminal.network (netns.py; see bench/bench_sandbox_network.py)
    limits: Limits = DEFAULT  # terminal.bubblewrap_* (limits.py)
    hermes_home: Path = Path()
    write_roots: tuple[str, ...] = ()  # approvals.write_roots: writable besides the cwd
    hide: tuple[str, ...] = ()  # terminal.bubblewrap_hide: covered besides the defaults

    @property
    def sandboxed(self) -> bool:
        """This command runs in a working sandbox (one that cannot start refuses instead)."""
        return bwrap_status()[0]

    def refused(self) -> list[str]:
        """Where no command may work, and no write root may be: HERMES_HOME, the user's
        hides and each home's credential stores, those that exist, written and resolved."""
        stores = [
            os.path.join(home, store) for home in homes() for store in secrets.CREDENTIAL_STORES
        ]
        places = [str(self.hermes_home), *self.hide, *stores]
        return _both([p for p in places if os.path.lexists(os.path.expanduser(p))])

    def covers(self) -> list[str]:
        """What is covered over whatever shows it: the refused places (those inside a shown
        unit, `~/.cargo/credentials.toml`, would show) and where a hidden dot entry links."""
        return self.refused() + unseen()

    def hidden(self) -> list[str]:
        """The places commands cannot see, as they exist now: the covered ones and the
        dot entries of the homes that are not shown."""
        return [p for p in dict.fromkeys(self.covers()) if os.path.lexists(p)]

    def working(self) -> tuple[bool, str]:
        works, why = bwrap_status()
        return works, "" if works else f"terminal.sandbox is on, but {why}: commands are refused"

    def writable(self, session: str) -> list[str]:
        """The places a command of this session may write: its working directory and the
        write roots, resolved. Never what a call names: its `workdir` is where it starts."""
        real, refused = os.path.realpath(session), self.refused()
        if real == "/":
            raise BackendError(
                "the working directory is /, which would make the whole file system writable "
                "in the sandbox; start hermes-tui in a project's folder. Nothing was run"
            )
        place = inside(real, refused)
        if place is not None:
            raise BackendError(
                f"the working directory {session} is inside {place}, which the sandbox hides; "
                "nothing was run"
            )
        return [real, *writable_roots(self.write_roots, real, refused)]

    def shell(self, command: str, cwd: str, timeout: float, *, session: str) -> Spawn:
        works, bwrap = bwrap_status()
        if not works:
            raise BackendError(f"terminal.sandbox is on, and {bwrap}; nothing was run")
        writable = self.writable(session)
        chdir = os.path.realpath(cwd)
        place = inside(chdir, self.hidden()) if inside(chdir, writable) is None else None
        if place is not None:
            raise BackendError(
                f"the working directory {cwd} is inside {place}, which the sandbox hides; "
                "nothing was run"
            )
        try:
            layout = lay_out(writable)
            holding = hold([w for w in writable if w not in homes()])
        except (LayoutError, HeldError) as exc:
            raise BackendError(f"{exc}; nothing was run") from exc
        layout.argv += holding.argv()
        for target in layout.read_only:
            layout.argv += ["--ro-bind", target, target]
        cover(layout, self.covers(), writable)
        network = effective(self.network)[0]
        argv = bwrap_argv(bwrap, chdir, layout.finish(), network=network, limits=self.limits)
        # The home is read-only in here: npm's cache goes to the private /tmp (empty each
        # command) so installs work; one the user set explicitly is kept.
        env = self.env({"TMPDIR": "/tmp"})
        env.setdefault("npm_config_cache", "/tmp/.npm")
        confine = {
            **handshake_request(),
            **limits_request(self.limits),
            **network_request(network),
        }
        argv += ["bash", "-c", command]
        return Spawn(argv, env, chdir, holding.release, confine=confine)

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

    def has_network(self) -> bool:
        """Whether commands reach a network at all (not with `terminal.network: off`)."""
        return effective(self.network)[0] != "off"

    def layout(self, session: str) -> Layout | None:
        """What a command of this session may write, what it cannot see, its network: the
        places `shell` lays out, for telling what the sandbox refused (None: it would run
        nothing there). Inside the writable places, each `.hermes` and the git dir's
        settings and hooks stay read-only (`held.py`), whether they exist yet or not."""
        try:
            writable = self.writable(session)
        except BackendError:
            return None
        read_only = [
            os.path.join(w, part)
            for w in writable
            for part in (".hermes", ".git/config", ".git/hooks")
        ]
        home = os.path.expanduser("~")
        hidden = tuple(self.hidden())
        return Layout(tuple(writable), tuple(read_only), hidden, self.has_network(), home)

    def output_suggests(self, result: str) -> str | None:
        output = failed_output(result)
        if not output:
            return None
        return output_suggests(output, network=self.has_network(), hidden=self.hidden())

    def outside(self) -> Backend | None:
        return LocalBackend(
            name=self.name, passthrough=self.passthrough, unconfined="let out by the user"
        )
