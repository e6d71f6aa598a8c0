"""What the reaper sets up around a sandboxed command: its limits, its pids cgroup, its network.

The request (made by the core: backends/limits.py, netns.py, handshake.py) may carry:

* `rlimits`: [name, soft, hard] set in the command's process before it execs bubblewrap, so
  they cover everything inside and never the reaper itself;
* `pids_cgroup`: {parent, max}: as root (whom the kernel exempts from RLIMIT_NPROC) a cgroup
  made for this command under `parent`, with pids.max, which the command's process joins
  before it execs; removed once everything in it is dead;
* `handshake`: {info_fd, block_fd}: bubblewrap says on info_fd which process the sandbox
  starts with and waits on block_fd; meanwhile `nproc` is set on that process (inside its
  user namespace the kernel counts only the sandbox's processes) and `slirp4netns` (an argv
  whose {netns}, {userns}, {ready_fd}, {exit_fd} are filled in here) is started on its
  network namespace, and waited for;
* `files`: {fd: text}: a pipe holding the text, at that descriptor in bubblewrap's process.

Anything that cannot be set up stops the command before it runs, with a line saying why
(fail closed). Standard library only: the reaper runs with -I -S.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import select
import signal
import time
from typing import Any

START_TIMEOUT = 10.0  # bubblewrap's first word, slirp4netns's readiness
NS_GET_USERNS = 0xB701  # ioctl: the user namespace that owns a namespace (linux/nsfs.h)


class NotConfined(Exception):
    """The command cannot run as asked; nothing of it ran."""


class Confinement:
    def __init__(self, request: dict[str, Any]) -> None:
        self.rlimits: list[list[Any]] = request.get("rlimits") or []
        self.nproc: int = request.get("nproc") or 0
        self.cgroup_asked: dict[str, Any] | None = request.get("pids_cgroup")
        self.handshake: dict[str, int] | None = request.get("handshake")
        self.slirp: list[str] | None = request.get("slirp4netns")
        self.files: dict[str, str] = request.get("files") or {}
        self.cgroup: str | None = None
        self.slirp_pid = 0
        self._theirs: dict[int, int] = {}  # descriptor in the command's process -> ours
        self._info = self._block = self._exit = -1

    def prepare(self) -> None:
        """Before the fork: the cgroup and the pipes."""
        if self.cgroup_asked:
            self.cgroup = _make_cgroup(self.cgroup_asked["parent"], self.cgroup_asked["max"])
        if self.handshake:
            self._info, self._theirs[self.handshake["info_fd"]] = os.pipe()
            self._theirs[self.handshake["block_fd"]], self._block = os.pipe()
        for fd, text in self.files.items():
            read, write = os.pipe()  # the text is small: the pipe holds it all
            os.write(write, text.encode())
            os.close(write)
            self._theirs[int(fd)] = read

    def in_child(self) -> None:
        """In the command's process, just before it execs bubblewrap."""
        _place(self._theirs)
        if self.cgroup is not None:
            with open(os.path.join(self.cgroup, "cgroup.procs"), "w") as handle:
                handle.write(str(os.getpid()))
        for name, soft, hard in self.rlimits:
            kind = getattr(resource, f"RLIMIT_{name}")
            resource.setrlimit(kind, _within(resource.getrlimit(kind), soft, hard))

    def started(self, group: int) -> None:
        """In the reaper, once the command's process (`group`) exists: the sandbox set up
        from outside, then let go. Raises NotConfined, the command killed before it ran;
        bubblewrap's own failure is not ours (its message is in the output)."""
        for ours in self._theirs.values():
            os.close(ours)
        self._theirs = {}
        if self._info < 0:
            return
        pid = 0
        try:
            info = _first_word(self._info)
            if info is None:
                return  # bwrap failed before it started anything
            pid = int(info["child-pid"])
            if self.nproc:
                _set_nproc(pid, self.nproc)
            if self.slirp and _loopback_set_up(pid):
                self._exit, self.slirp_pid = _start_slirp(self.slirp, pid)
            os.write(self._block, b"go")
        except (BrokenPipeError, ProcessLookupError):
            return  # bwrap ended while it set the sandbox up: its message says why
        except BaseException:
            # Before the block ends: bwrap reads its end closing as "go" too.
            for target, kill in ((pid, os.kill), (group, os.killpg)):
                if target:
                    try:
                        kill(target, signal.SIGKILL)
                    except OSError:
                        pass
            raise
        finally:
            os.close(self._info)
            os.close(self._block)

    def ended(self) -> None:
        """Once everything the command started is dead, before its status is sent: its
        cgroup goes (the status means nothing of it is left)."""
        if self.cgroup is not None:
            try:
                os.rmdir(self.cgroup)
            except OSError:
                pass
            self.cgroup = None

    def close(self) -> None:
        """After the status: slirp4netns goes (its end takes its device down, tens of ms)."""
        self.ended()
        if self.slirp_pid:
            try:
                os.kill(self.slirp_pid, signal.SIGKILL)
                os.waitpid(self.slirp_pid, 0)
            except (OSError, ChildProcessError):
                pass  # it ended, and was reaped with the command's processes
            self.slirp_pid = 0
        if self._exit >= 0:
            os.close(self._exit)
            self._exit = -1


def _make_cgroup(parent: str, most: int) -> str:
    place = os.path.join(parent, f"hermes-tui-{os.getpid()}")
    try:
        try:
            os.mkdir(place)
        except FileExistsError:  # a reaper of this pid was killed before it cleaned up
            os.rmdir(place)
            os.mkdir(place)
        with open(os.path.join(place, "pids.max"), "w") as handle:
            handle.write(str(most))
    except OSError as exc:
        raise NotConfined(
            f"the process limit cannot be held: no pids cgroup in {parent} ({exc.strerror or exc})"
        ) from exc
    return place


def _place(fds: dict[int, int]) -> None:
    """Our descriptors at the numbers the command's argv names (moved out of the way first:
    one may already sit at another's number)."""
    high = {target: fcntl.fcntl(ours, fcntl.F_DUPFD_CLOEXEC, 64) for target, ours in fds.items()}
    for target, fd in high.items():
        os.dup2(fd, target)  # inheritable
        os.close(fd)


def _first_word(fd: int) -> dict[str, Any] | None:
    """bubblewrap's --info-fd JSON (written in pieces); None if it ends without one."""
    data = b""
    while True:
        if not select.select([fd], [], [], START_TIMEOUT)[0]:
            raise NotConfined(f"bubblewrap did not start in {START_TIMEOUT:g} s")
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
        try:
            found = json.loads(data)
        except ValueError:
            continue
        return found if isinstance(found, dict) else None


def _within(now: tuple[int, int], soft: int, hard: int) -> tuple[int, int]:
    """The limit asked for, or the one already set where that is lower (hermes-tui run in a
    sandbox: its commands keep the outer limits, which cannot be raised)."""
    if now[1] != resource.RLIM_INFINITY:
        hard = min(hard, now[1])
    return min(soft, hard), hard


def _set_nproc(pid: int, most: int) -> None:
    try:
        now = resource.prlimit(pid, resource.RLIMIT_NPROC)
        resource.prlimit(pid, resource.RLIMIT_NPROC, _within(now, most, most))
    except ProcessLookupError:
        raise  # it ended: nothing will run
    except OSError as exc:
        raise NotConfined(
            f"the process limit cannot be set on the sandbox ({exc.strerror or exc})"
        ) from exc


def _loopback_set_up(pid: int) -> bool:
    """Wait until bubblewrap has given the sandbox's loopback its address (False: it ended
    first). slirp4netns brings `lo` up as it starts, and the kernel then gives it
    127.0.0.1 itself: bubblewrap adding the address after that fails ("loopback: Failed
    RTM_NEWADDR"). The address is in the namespace's routes once bwrap has also set it up."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/net/fib_trie", "rb") as handle:
                if b"127.0.0.1" in handle.read():
                    return True
        except OSError:
            return False  # it ended: its message says why
        time.sleep(0.001)
    raise NotConfined(f"the sandbox's loopback was not set up in {START_TIMEOUT:g} s")


def _namespaces(pid: int) -> tuple[int, int]:
    """The sandbox's network namespace and the user namespace that owns it. Not the
    process's own user namespace: bubblewrap may move into one nested in it (to map the
    user's uid back), and from there the network namespace cannot be joined."""
    try:
        net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError as exc:
        raise NotConfined(f"the sandbox's network namespace is gone ({exc.strerror})") from exc
    try:
        return net, fcntl.ioctl(net, NS_GET_USERNS)
    except OSError as exc:
        os.close(net)
        raise NotConfined(f"the sandbox's user namespace is unknown ({exc.strerror})") from exc


def _start_slirp(template: list[str], pid: int) -> tuple[int, int]:
    """slirp4netns on the sandbox's network namespace, once it says it is ready; returns
    the descriptor whose closing ends it (should the reaper die) and its pid."""
    net, user = _namespaces(pid)
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    log = _log_file()
    given = {"netns": net, "userns": user, "ready_fd": ready_w, "exit_fd": exit_r}
    values = {k: str(fd) if k.endswith("_fd") else f"/proc/self/fd/{fd}" for k, fd in given.items()}
    argv = [arg.format(**values) for arg in template]
    try:
        for fd in given.values():
            os.set_inheritable(fd, True)
        actions = [(os.POSIX_SPAWN_DUP2, log, 2)] if log >= 0 else []
        slirp = os.posix_spawn(argv[0], argv, {}, file_actions=actions, setsigdef=(signal.SIGPIPE,))
    except OSError as exc:
        for fd in (ready_r, exit_w, log):
            _close(fd)
        raise NotConfined(f"slirp4netns cannot start ({exc.strerror or exc})") from exc
    finally:
        for fd in (net, user, ready_w, exit_r):
            os.close(fd)
    try:
        ready = select.select([ready_r], [], [], START_TIMEOUT)[0] and os.read(ready_r, 1)
    finally:
        os.close(ready_r)
    if not ready:
        os.close(exit_w)
        raise NotConfined(f"the sandbox's network did not start (slirp4netns: {_tail(log)})")
    _close(log)
    return exit_w, slirp


def _log_file() -> int:
    """Where slirp4netns's messages go: a file no one else sees, read only if it fails."""
    try:
        return os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    except (OSError, AttributeError):
        return -1


def _tail(log: int) -> str:
    if log < 0:
        return "it said nothing"
    try:
        os.lseek(log, 0, os.SEEK_SET)
        lines = os.read(log, 1 << 16).decode(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    finally:
        os.close(log)
    return "; ".join(lines[-3:]) if lines else f"not ready in {START_TIMEOUT:g} s"


def _close(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
