"""Runs the terminal's commands and, when each exits, kills every process it left behind.

Usage: python -I -S reaper.py FD  (FD: a Unix socket from the terminal tool)

The terminal tool starts this server once, on its first command, rather than a Python
interpreter per command (that start was most of what `true` cost). Each request is one
message on FD carrying two descriptors: the call's own socket and the pipe the command's
output goes to. The server forks a reaper for it, which reads the command (argv, working
directory, environment: one line of JSON) from the call's socket and runs it in a process
group of its own, with what the request asks set up around it (confine.py: a sandbox's
limits, its pids cgroup, its network). The reaper marks itself a child subreaper, so a background job that
outlives the shell, even one that left the group (`setsid`) or daemonised itself, becomes
its child instead of init's. When the command exits, or when the call's socket closes (the
tool asks it to stop; or the tool's process died, however: even SIGKILL closes it), it
kills the command's group, then every process still below it, until none is left, and only
then writes the command's status on the call's socket. So the status means the command is
over and nothing it started still holds the output pipe.

The server ends when FD closes (the tool's process is gone); reapers still running each see
their own call's socket close. It runs with -S (no site packages), so it imports only the
standard library (and confine.py beside it, which does too), and it stays single-threaded
so that forking it is safe.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

try:
    from workbench.builtins.terminal.confine import Confinement, NotConfined
except ImportError:  # run as a script (-I -S): the module sits beside this file
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from confine import Confinement, NotConfined  # type: ignore[import-not-found,no-redef]

if TYPE_CHECKING:
    import ctypes

PR_SET_CHILD_SUBREAPER = 36
KILL_ON = (signal.SIGTERM, signal.SIGHUP)  # the reaper's own polite ends: clean up first


_libc: ctypes.CDLL | None = None


def _prctl(option: int, value: int) -> bool:
    global _libc
    try:
        if _libc is None:  # loaded by the server, once: each forked reaper has it
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        done: int = _libc.prctl(option, value, 0, 0, 0)
        return done == 0
    except (OSError, AttributeError):
        return False


def serve(fd: int) -> int:
    control = socket.socket(fileno=fd)
    os.set_inheritable(fd, False)  # never into a command
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # reapers are reaped by the kernel
    _prctl(PR_SET_CHILD_SUBREAPER, 0)  # loads the C library here, once
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 2)
        except OSError:
            return 0
        if not message:
            return 0  # the tool's process is gone
        for each in fds:  # recv_fds drops its flags (MSG_CMSG_CLOEXEC): never into a command
            os.set_inheritable(each, False)
        if len(fds) == 2 and _fork(fds[1]) == 0:
            code = 70
            try:
                control.close()  # a request sent to a dead server must fail, not wait here
                code = reap(*fds)
            finally:
                os._exit(code)
        for each in fds:
            os.close(each)  # the call's socket closing with no status: the tool is told


def _fork(out: int) -> int:
    """Fork a reaper; where the system refuses (too many processes), say so in the output."""
    try:
        return os.fork()
    except OSError as exc:
        try:
            os.write(out, f"cannot start the command: {exc.strerror or exc}\n".encode())
        except OSError:
            pass
        return -1


def reap(call_fd: int, out: int) -> int:
    """Run the command the call's socket names; write its status there once all is dead."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this process waits for its children
    call = socket.socket(fileno=call_fd)
    request = json.loads(_line(call) or "null")
    if not request:
        return 0  # the call was given up before it was sent
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    confinement = Confinement(request)
    try:
        confinement.prepare()
    except (NotConfined, OSError) as exc:
        _say(out, f"hermes-tui: {exc}; nothing was run")
        os.close(out)
        confinement.close()
        _send(call, 126)  # as a shell says of a command it cannot run
        return 0
    group = _start(request, out, confinement)
    try:
        confinement.started(group)  # the sandbox's set-up from outside; killed if it fails
    except (NotConfined, OSError) as exc:
        _say(out, f"hermes-tui: {exc}; nothing was run")
    os.close(out)

    def stop(*_: object) -> None:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass

    for sig in KILL_ON:
        signal.signal(sig, stop)
    status = _wait(group, call, stop)
    _kill_everything_below(os.getpid(), group, spare=confinement.slirp_pid)
    confinement.ended()
    code = os.waitstatus_to_exitcode(status)
    _send(call, code if code >= 0 else 128 - code)
    confinement.close()
    return 0


def _send(call: socket.socket, code: int) -> None:
    try:
        call.sendall(b"%d\n" % code)
    except OSError:
        pass  # nobody is waiting any more


def _say(out: int, line: str) -> None:
    try:
        os.write(out, f"{line}\n".encode(errors="replace"))
    except OSError:
        pass


def _line(call: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = call.recv(1 << 16)
        if not chunk:
            return ""
        data += chunk
    return data.decode()


def _wait(group: int, call: socket.socket, stop: Callable[[], None]) -> int:
    """The command's wait status. The tool sends nothing more on the call's socket: its end
    means stop (asked for, or the tool's process died). One thread, watching both the
    socket and the command's exit (a pidfd; where there is none, a look every 50 ms)."""
    try:
        exited: int | None = os.pidfd_open(group)
    except (AttributeError, OSError):
        exited = None
    watched: list = [call] if exited is None else [call, exited]
    try:
        while True:
            reaped, status = os.waitpid(group, os.WNOHANG)
            if reaped:
                return status
            ready = select.select(watched, [], [], None if exited is not None else 0.05)[0]
            if call in ready and not _still_open(call):
                watched.remove(call)
                stop()
    finally:
        if exited is not None:
            os.close(exited)


def _still_open(call: socket.socket) -> bool:
    try:
        return bool(call.recv(64))
    except OSError:
        return False


def _start(request: dict, out: int, confinement: Confinement) -> int:
    argv, cwd, env = request["argv"], request.get("cwd"), request["env"]
    pid = os.fork()
    if pid == 0:
        doing = f"cannot run {argv[0]}"
        try:
            os.setpgid(0, 0)  # its own group, so killing it never kills this process
            # Python ignores SIGPIPE and SIGXFSZ; the command must get the defaults (`yes |
            # head` ends quietly on SIGPIPE, as in a shell).
            for sig in (*KILL_ON, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            nothing = os.open(os.devnull, os.O_RDONLY)
            os.dup2(nothing, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            if cwd is not None:
                doing = f"cannot enter {cwd}"
                os.chdir(cwd)
            doing = "cannot confine the command"
            confinement.in_child()  # last: its memory limit is the command's
            doing = f"cannot run {argv[0]}"
            os.execvpe(argv[0], argv, env)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
            message = exc.strerror if isinstance(exc, OSError) else None
            os.write(2, f"{doing}: {message or exc}\n".encode(errors="replace"))
        os._exit(127)
    try:
        os.setpgid(pid, pid)  # also here: whichever runs first, the group exists
    except OSError:
        pass
    return pid


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


def _kill_everything_below(me: int, group: int, spare: int = 0) -> None:
    """Kill and reap all below us but `spare` (the sandbox's slirp4netns: ours, not the
    command's; its end, which takes its network device down, can come after the status)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0]:
                continue  # one reaped: look again
        except ChildProcessError:
            return  # no child, so nothing below: every orphan comes to us, the subreaper
        below = [pid for pid in _children(me) if pid != spare]
        if not below:
            return
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            # Each reaped child may leave orphans; as the subreaper they come to us.
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: reaper.py FD", file=sys.stderr)
        sys.exit(2)
    sys.exit(serve(int(sys.argv[1])))
