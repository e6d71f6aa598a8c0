"""terminal: run a shell command with a timeout, a working directory and an output cap.

Output is read as it comes, in bounded memory: the model gets its head and tail, and the
whole of it is streamed to the session's spill file (see capture.py). The command
runs under a reaper (reaper.py), so the call returns when bash exits, whatever its
background jobs hold, and none of them outlives the call. One reaper server is started per
process, on the first command, and forks a reaper for each: a Python interpreter's start
per command was most of what `true` cost.

Destructive commands need the user's approval. The executor asks (see core/policy/gate.py)
and passes the approved command text in `approved_command`; a dangerous command that reaches
this handler any other way is refused unrun, and a hardline one is refused always.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import json
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.builtins.api import (
    BackendError,
    Spawn,
    SpillSlot,
    TerminalOutputHook,
    analyze_command,
    backend_for,
    registry,
    resolve_path,
    scrubbed_env,
    tool_error,
    tool_result,
)
from workbench.builtins.terminal.capture import OutputCapture

DEFAULT_TIMEOUT = 180
MAX_TIMEOUT = 600
MAX_OUTPUT_BYTES = 50_000  # head and tail the model reads; the whole output is saved
READ_CHUNK = 1 << 20
READS_PER_WAKE = 16
DRAIN_GRACE = 1.0  # after the command's exit, how long a pipe still held open may keep us
STOP_GRACE = 3.0
SEND_TIMEOUT = 30.0
CANCEL_POLL = 0.1  # how soon a cancelled call notices
F_SETPIPE_SZ = 1031
REAPER = str(Path(__file__).with_name("reaper.py"))

TERMINAL_SCHEMA = {
    "description": (
        "Run a shell command (bash) and return its combined output and exit code. "
        f"Output over {MAX_OUTPUT_BYTES:,} bytes shows its head and tail, and the whole output "
        "is saved to a file named in the result. The command returns when bash exits; "
        "background jobs it started are then killed. Commands that change files or state "
        "need the user's approval."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {
                "type": "integer",
                "description": (
                    f"Seconds to wait (default: the user's terminal.timeout, else "
                    f"{DEFAULT_TIMEOUT}; max {MAX_TIMEOUT})"
                ),
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
            },
            "workdir": {
                "type": "string",
                "description": "Working directory (default: the session's)",
            },
        },
        "required": ["command"],
    },
}


def terminal(args: dict[str, Any], **kw: Any) -> str:
    command = args["command"]
    # the session's working directory is where a sandbox lets the command write; a
    # `workdir` only says where it starts
    session = str(kw.get("cwd") or os.getcwd())
    cwd = resolve_path(args["workdir"], session) if args.get("workdir") else Path(session)
    verdict = analyze_command(command, cwd=cwd)
    if verdict.hardline:
        return _blocked(f"blocked (hardline): {'; '.join(verdict.reasons)}", "blocked")
    if verdict.dangerous and kw.get("approved_command") != command:
        return _blocked(
            f"needs the user's approval ({'; '.join(verdict.reasons)})", "approval_required"
        )
    backend = backend_for(kw)  # where it runs: here, in the sandbox or over ssh; never elsewhere
    # the model's timeout is capped; the user's own (terminal.timeout) is not
    asked = args.get("timeout")
    timeout = min(int(asked), MAX_TIMEOUT) if asked else backend.command_timeout
    place = backend.place(args.get("workdir"), str(cwd))
    try:
        spawn = backend.shell(command, place, timeout, session=session)
    except BackendError as exc:
        return _blocked(str(exc), "refused")
    if spawn.cwd is not None and not Path(spawn.cwd).is_dir():
        if spawn.release is not None:
            spawn.release()
        return tool_error(f"Working directory does not exist: {cwd}")
    hook: TerminalOutputHook | None = kw.get("output_hook")  # plugins' transform_terminal_output
    transform = None if hook is None else functools.partial(hook, command)
    return run_spawn(
        spawn, timeout, spill=kw.get("spill"), cancel=kw.get("cancel_event"), transform=transform
    )


def run_spawn(
    spawn: Spawn,
    timeout: float,
    *,
    spill: SpillSlot | None = None,
    cancel: threading.Event | None = None,
    transform: Callable[[str, int | None], str] | None = None,
) -> str:
    """Run what a backend's `shell` made (its argv, environment, directory and what the
    reaper sets up), and let go of what it held once the command has ended."""
    try:
        cwd = Path(spawn.cwd) if spawn.cwd is not None else None
        env, confine = spawn.env, spawn.confine
        return run_process(
            spawn.argv, cwd, timeout, spill=spill, env=env, cancel=cancel, confine=confine,
            transform=transform,
        )  # fmt: skip
    finally:
        if spawn.release is not None:
            spawn.release()


def _blocked(reason: str, status: str) -> str:
    return tool_result(output="", exit_code=-1, error=f"Command not run: {reason}", status=status)


def shell_argv(command: str) -> list[str]:
    return ["bash", "-c", command]


def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    spill: SpillSlot | None = None,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> str:
    """Run a bash command; its result as the model reads it."""
    return run_process(shell_argv(command), cwd, timeout, spill=spill, env=env, cancel=cancel)


def run_process(
    argv: list[str],
    cwd: Path | None,
    timeout: float,
    *,
    spill: SpillSlot | None = None,
    env: dict[str, str] | None = None,
    limit: int = MAX_OUTPUT_BYTES,
    cancel: threading.Event | None = None,
    confine: dict[str, Any] | None = None,
    transform: Callable[[str, int | None], str] | None = None,
) -> str:
    """Run `argv` under the reaper; returns when it exits, with nothing it started left alive.

    The only place a command's process is made: a sandbox or a remote backend changes
    `argv` and `env`, and `confine` what the reaper sets up around it (`Spawn.confine`).
    `transform`: (output, exit code) -> the output, for a command that ran to its end (the
    plugins' transform_terminal_output); what it gives is cut to `limit` as the output is.
    """
    capture = OutputCapture(limit, spill)
    try:
        proc = Reaped.start(argv, cwd, env, confine)
    except OSError as exc:
        return tool_error(f"Cannot start {argv[0]}: {exc.strerror or exc}")
    try:
        ended = _pump(proc, capture, timeout, cancel)
    except BaseException:
        _stop(proc)
        capture.finish()  # closes the spill file
        raise
    finally:
        proc.close()
    captured = capture.finish()
    extra: dict[str, Any] = {}
    if captured.saved_to:
        extra["output_file"] = captured.saved_to
    if captured.total_bytes > limit:
        extra["output_bytes"] = captured.total_bytes
    if ended == "cancelled":
        return tool_result(
            output=captured.text,
            exit_code=None,
            error="Command cancelled by the user; it and everything it started were killed",
            status="cancelled",
            **extra,
        )
    if ended == "timeout":
        return tool_result(
            output=captured.text,
            exit_code=None,
            error=f"Command timed out after {timeout:g}s and was killed",
            status="timeout",
            **extra,
        )
    text = captured.text
    if transform is not None:
        text = _within(transform(text, proc.returncode), limit)
    return tool_result(output=text, exit_code=proc.returncode, error=None, **extra)


def _within(text: str, limit: int) -> str:
    """A plugin's replacement output, cut to the head and tail the model reads."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    half = limit // 2
    head = data[:half].decode("utf-8", errors="ignore")
    tail = data[len(data) - half :].decode("utf-8", errors="ignore") if half else ""
    omitted = len(data) - 2 * half
    return (
        f"{head}\n\n[... {omitted:,} bytes of the output a plugin gave omitted here ...]\n\n{tail}"
    )


def _pump(
    proc: Reaped,
    capture: OutputCapture,
    timeout: float,
    cancel: threading.Event | None,
) -> str | None:
    """Read output until the reaper says the command is over, then what is left; "timeout"
    or "cancelled" when it was stopped."""
    out = proc.output
    os.set_blocking(out, False)
    with contextlib.suppress(OSError):
        fcntl.fcntl(out, F_SETPIPE_SZ, 1 << 20)  # fewer, larger reads
    deadline = time.monotonic() + timeout
    ended, eof, drain_until = None, False, None
    with selectors.DefaultSelector() as selector:
        selector.register(out, selectors.EVENT_READ)
        selector.register(proc, selectors.EVENT_READ)  # readable once its status comes
        while True:
            if drain_until is None and proc.poll() is not None:
                # Its status means every writer it knew of is gone: read what is
                # buffered, but a pipe an escaped process holds open does not keep us.
                drain_until = time.monotonic() + DRAIN_GRACE
                selector.unregister(proc)
            now = time.monotonic()
            if drain_until is None and (now >= deadline or (cancel and cancel.is_set())):
                ended = "timeout" if now >= deadline else "cancelled"
                _stop(proc)
                continue
            end = deadline if drain_until is None else drain_until
            if (eof and drain_until is not None) or now >= end:
                break
            wait = end - now
            if cancel is not None and drain_until is None:
                wait = min(wait, CANCEL_POLL)
            for key, _ in selector.select(wait):
                if key.fd == out and _read_available(out, capture):
                    eof = True
                    selector.unregister(out)
    proc.wait()
    return ended


def _read_available(fd: int, capture: OutputCapture) -> bool:
    """Read what the pipe holds now, up to a few chunks; True at end of file."""
    for _ in range(READS_PER_WAKE):  # a writer faster than us must not keep us from the clock
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        capture.feed(chunk)
    return False


def _stop(proc: Reaped) -> None:
    """Ask the reaper to kill the command and all it started, and wait for it to say so. One
    that does not answer in time is given up on (the call must end); it has seen the
    socket's end all the same."""
    proc.stop()
    if proc.wait(timeout=STOP_GRACE) is None:
        proc.returncode = -1


class Reaped:
    """A command run by a reaper that the reaper server forked: its output pipe, and the
    call's socket, which carries the command to the reaper and its status back once it and
    everything it started are dead. Closing the socket (or our dying) stops it."""

    def __init__(self, call: socket.socket, output: int) -> None:
        self.call, self.output = call, output
        self.returncode: int | None = None
        self._status = b""

    @classmethod
    def start(
        cls,
        argv: list[str],
        cwd: Path | None,
        env: dict[str, str] | None,
        confine: dict[str, Any] | None = None,
    ) -> Reaped:
        call, theirs = socket.socketpair()
        output, write = os.pipe()
        request = {
            **(confine or {}),
            "argv": argv,
            "cwd": str(cwd) if cwd is not None else os.getcwd(),
            "env": dict(os.environ) if env is None else env,
        }
        try:
            _SERVER.send(theirs, write)
            call.settimeout(SEND_TIMEOUT)  # a server that stopped reading must not hold us
            call.sendall(json.dumps(request).encode() + b"\n")
        except BaseException:
            call.close()
            os.close(output)
            raise
        finally:
            theirs.close()
            os.close(write)  # the command holds the only writer: its end is our EOF
        return cls(call, output)

    def fileno(self) -> int:
        return self.call.fileno()

    def poll(self) -> int | None:
        self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        self._read(timeout)
        return self.returncode

    def _read(self, timeout: float | None) -> None:
        if self.returncode is not None:
            return
        self.call.settimeout(timeout)
        try:
            while b"\n" not in self._status:
                chunk = self.call.recv(64)
                if not chunk:  # the reaper ended without a word: killed, or it failed
                    self.returncode = -1
                    return
                self._status += chunk
        except (BlockingIOError, TimeoutError):
            return
        self.returncode = int(self._status.split(b"\n")[0])

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.call.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.call.close()
        os.close(self.output)


class ReaperServer:
    """The one reaper server of this process, started on the first command and again if it
    ever dies. It ends by itself when this process does (its socket closes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None

    def send(self, call: socket.socket, output: int) -> None:
        """Hand a call's socket and its output pipe to the server, which forks its reaper."""
        with self._lock:
            for attempt in range(2):
                if (
                    self._socket is None
                    or self._process is None
                    or self._process.poll() is not None
                ):
                    self._start()
                assert self._socket is not None
                try:
                    socket.send_fds(self._socket, [b"r"], [call.fileno(), output])
                    return
                except OSError:
                    self._socket.close()
                    self._socket = None
                    if attempt:
                        raise

    def _start(self) -> None:
        if self._socket is not None:
            self._socket.close()  # an old server reads its end, and goes
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", REAPER, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                cwd="/",  # holds no directory of the user's busy
                env=server_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # the screen is the app's
                start_new_session=True,  # never in our group: a signal meant for it misses us
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """At exit: the server reads its socket's end and goes (as it would if we died)."""
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=STOP_GRACE)


def server_env() -> dict[str, str]:
    """The reaper server's own environment: the allowlist, never the app's secrets. Every
    command is its child (`/proc/$PPID/environ` is the server's, as forked), and gets its
    own environment with each call."""
    return scrubbed_env()


_SERVER = ReaperServer()
atexit.register(_SERVER.close)


registry.register(
    "terminal", "terminal", TERMINAL_SCHEMA, terminal, emoji="💻", max_result_size_chars=100_000
)
