"""The processes a plugin starts while it loads: found, listed, and stopped with hermes-tui.

A plugin's `register` may start a daemon (a server it talks to, a watcher). In Hermes it
runs on after the command that loaded it, and one more starts with every command. Here a
process born while a plugin loaded is the plugin's: a child of the thread that ran its
`register`, of a thread the plugin started then, or of the main thread (which a thread's
children go to when it ends), and the children of those; not one of a thread hermes-tui
had running before (Linux keeps each thread's children apart, in
/proc/self/task/TID/children). `hermes-tui plugins` lists
them; they are stopped (SIGTERM, then SIGKILL after a grace) when hermes-tui stops, and
when the plugin is unloaded, reloaded or fails.

Each is held by a pidfd where the kernel has them, so a signal can only reach that one
process, never another that took its number. One that left us (a daemon that forks again
and whose parent exits: it is then init's child) is not found: only our own are.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

GRACE = 2.0  # seconds a process has to end after SIGTERM
MAX_CHILDREN = 256  # held per plugin (each holds a file descriptor)


@dataclass(eq=False)
class Child:
    pid: int
    started: int  # field 22 of /proc/PID/stat: with the pid, this one process
    seen: str  # its command line when last read
    handle: int | None = field(default=None, repr=False)  # a pidfd, when the kernel has them

    @property
    def command(self) -> str:
        """Its command line, read again while it runs: one read while it is in the middle
        of its exec (found right after its fork) is empty, or still its parent's."""
        if self.running and (now := _command(self.pid)):
            self.seen = now
        return self.seen

    @property
    def running(self) -> bool:
        """Alive, and still the process we found (not a zombie, not a new one)."""
        stat = _stat(self.pid)
        return stat is not None and stat[1] == self.started and stat[0] != "Z"

    def signal(self, number: int) -> None:
        with contextlib.suppress(OSError):
            if self.handle is not None:
                signal.pidfd_send_signal(self.handle, number)
            elif self.running:  # no pidfd: the start time says it is still the one
                os.kill(self.pid, number)

    def reap(self) -> None:
        """If it is our own child and has ended, collect it (it leaves no zombie); never
        another process that took its number."""
        with contextlib.suppress(ChildProcessError, OSError):
            if self.handle is not None and hasattr(os, "P_PIDFD"):
                os.waitid(os.P_PIDFD, self.handle, os.WEXITED | os.WNOHANG)
            elif _stat(self.pid) == ("Z", self.started):
                os.waitpid(self.pid, os.WNOHANG)

    def release(self) -> None:
        """Reap it if it has ended; close its pidfd."""
        self.reap()
        if self.handle is not None:
            with contextlib.suppress(OSError):
                os.close(self.handle)
            self.handle = None


def supported() -> bool:
    return os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children")


@contextlib.contextmanager
def watching() -> Iterator[list[Child]]:
    """The processes born inside, of this thread or of the threads started inside: the
    list is filled when the block ends."""
    born: list[Child] = []
    if not supported():
        yield born
        return
    me, main = threading.get_native_id(), threading.main_thread().native_id
    before = _all_children(os.getpid())
    # hermes-tui's other threads (MCP, the executor's) may start processes meanwhile: theirs
    # are not the plugin's. A thread that ends gives its children to the main thread.
    others = {t.native_id for t in threading.enumerate()} - {me, main, None}
    try:
        yield born
    finally:
        new = _all_children(os.getpid()) - before
        for tid in others:
            new -= _children(os.getpid(), tid)  # type: ignore[arg-type]
        born.extend(find(new))


def find(pids: Iterable[int]) -> list[Child]:
    """These processes and their descendants, each held."""
    found: list[Child] = []
    seen: set[int] = set()
    todo = sorted(pids)
    while todo and len(found) < MAX_CHILDREN:
        pid = todo.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        child = _held(pid)
        if child is not None:
            found.append(child)
            todo += sorted(_all_children(pid))
    return found


def stop(children: list[Child], grace: float = GRACE) -> list[Child]:
    """End every one still running, and those they started since: SIGTERM, then SIGKILL
    for what is left after `grace`. Returns the ones that were running."""
    known = {c.pid for c in children}
    later = find(p for c in children if c.running for p in _all_children(c.pid) - known)
    everyone = [*children, *later]
    live = [c for c in everyone if c.running]
    for child in live:
        child.signal(signal.SIGTERM)
    left = _wait_gone(live, grace)
    for child in left:
        child.signal(signal.SIGKILL)
    _wait_gone(left, grace)
    for child in everyone:
        child.release()
    return live


def _wait_gone(children: list[Child], timeout: float) -> list[Child]:
    """Wait until each has ended (a pidfd is readable then; our own children are reaped
    so they leave no zombie) or `timeout` passes; the ones still running."""
    deadline = time.monotonic() + timeout
    left = [c for c in children if c.running]
    while left:
        for child in left:
            child.reap()
        left = [c for c in left if c.running]
        remaining = deadline - time.monotonic()
        if not left or remaining <= 0:
            break
        handles = [c.handle for c in left if c.handle is not None]
        if handles and len(handles) == len(left):
            with selectors.DefaultSelector() as selector:
                for handle in handles:
                    selector.register(handle, selectors.EVENT_READ)
                selector.select(remaining)
        else:  # no pidfds: look again shortly
            time.sleep(min(0.02, remaining))
    return left


def _held(pid: int) -> Child | None:
    stat = _stat(pid)
    if stat is None or stat[0] == "Z":
        return None
    handle = None
    if hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError):
            handle = os.pidfd_open(pid)
    child = Child(pid, stat[1], _command(pid), handle)
    if handle is not None and not child.running:  # it ended, or the number is another's
        child.release()
        return None
    return child


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of a process, or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # the name, in parentheses, may hold spaces
    try:  # field 3 (the state) is the first after the name; the start time is field 22
        return fields[0].decode(), int(fields[19])
    except (IndexError, ValueError):
        return None


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(4096)
    except OSError:
        return ""
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")


def _children(pid: int, tid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{tid}/children") as handle:
            return {int(p) for p in handle.read().split()}
    except (OSError, ValueError):
        return set()


def _all_children(pid: int) -> set[int]:
    """The children of every thread of process `pid`."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return set()
    return {c for tid in tids for c in _children(pid, tid)}
