"""Runs one command and, when it exits, kills every process it left behind.

Usage: python -I -S reaper.py -- ARGV...

The terminal tool starts its commands through this small process. It marks itself a child
subreaper, so a background job that outlives the shell, even one that left the process
group (`setsid`) or daemonised itself, becomes its child instead of init's. When the
command exits, or on SIGTERM (the tool's timeout), it kills the command's process group,
then every process still below it, until none is left, and exits with the command's
status. The tool waits for this process: its exit means the command is over and nothing it
started is still holding the output pipe.

It runs with -S (no site packages), so it imports only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children(me: int) -> list[int]:
    """Processes whose parent is `me` (read from /proc: no helper library needed)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _kill_everything_below(me: int, group: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGKILL)
    while True:
        for pid in _children(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            # Each reaped child may leave orphans; as the subreaper they come to us.
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--" or len(argv) < 2:
        print("usage: reaper.py -- ARGV...", file=sys.stderr)
        return 2
    command = argv[1:]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    parent = os.getppid()
    started: list[int] = []
    stopping: list[bool] = []

    def stop(_signum: int, _frame: object) -> None:
        stopping.append(True)
        for pid in started:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)  # armed before the fork: no moment without it
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the tool's process died: clean up too
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)  # its own group, so killing it never kills this process
            # Python ignores SIGPIPE and SIGXFSZ; the command must get the defaults (`yes |
            # head` ends quietly on SIGPIPE, as in a shell).
            for sig in (signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"cannot run {command[0]}: {exc.strerror or exc}\n".encode())
        os._exit(127)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also here: whichever runs first, the group exists
    started.append(pid)
    if stopping or os.getppid() != parent:  # stopped, or the tool died, before we knew pid
        stop(signal.SIGTERM, None)
    status = 0
    while True:
        try:
            reaped, status = os.waitpid(pid, 0)
        except ChildProcessError:
            break
        if reaped == pid:
            break
    _kill_everything_below(os.getpid(), pid)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
