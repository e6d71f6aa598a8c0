"""hermes-tui's stdout is its own: what plugin code prints goes to the log and to that
plugin's output, never into a command's JSON or a tool's result.

Plugin code runs inside hermes-tui: while a plugin loads, in its hooks, middleware and tool
handlers (on the agent's and the executor's threads), in threads it starts. It may print
with `print()` (sys.stdout), to `sys.__stdout__`, or to file descriptor 1 (`os.write`).

* `sys.stdout` becomes a switch: text written by plugin code goes to that plugin's output,
  everything else to the stream it replaced. Plugin code is found, in this order, by a
  `speaking(key)` block on the writing thread (the manager, the dispatcher and the hooks
  open one around every call into a plugin), by a frame of a plugin's modules on the
  writer's stack (`claim` names them), or by a thread whose target is a plugin's.
* `take_fd()` points fd 1 at a pipe a thread of ours reads, and gives the switch a copy of
  the fd it was; `sys.__stdout__` becomes the switch too (so what measures the terminal
  through it, as Textual does, still measures the terminal). `os.write(1, ...)` and the
  processes a plugin starts reach the pipe. A write to fd 1 says nothing of who wrote it:
  what comes through while plugins speak is theirs (each `speaking` block reads the pipe
  before it ends, so its own writes are its own); what comes at other times is logged as
  of no known plugin. Headless commands take fd 1 for their whole life (`always`); the
  workbench only while plugin code runs (a program it lets use the terminal gets the real
  one), and a browser tab's workbench not at all (Textual's web driver writes its frames
  to fd 1).

Each plugin's last lines are kept (`lines(key)`) for `hermes-tui plugins` and the
workbench's plugin details; every line goes to hermes-tui's log up to a bound per plugin.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import io
import logging
import os
import selectors
import sys
import threading
import types
from collections import Counter, deque
from collections.abc import Iterator
from typing import Any, TextIO

logger = logging.getLogger(__name__)

TAIL = 50  # lines kept per plugin for the front ends
LOG_LINES = 2000  # lines of one plugin written to the log, then one line saying so
LINE_CHARS = 2000  # a longer line is cut
MAX_DEPTH = 64  # frames looked at on a writer's stack
_NONE = ""  # the key of output from no known plugin

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("plugin", default=None)


class Outputs:
    """Every plugin's output: its last lines, its line being written, the log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tails: dict[str, deque[str]] = {}
        self._partial: dict[str, str] = {}
        self._logged: Counter[str] = Counter()
        self._owners: dict[str, str] = {}  # a module name (or its package's) -> plugin key

    def claim(self, key: str, module: str) -> None:
        """Code of `module` (and of the modules under it) is plugin `key`'s."""
        if module and module.partition(".")[0] not in _NEVER_PLUGINS:
            with self._lock:
                self._owners = {**self._owners, module: key}

    @property
    def claimed(self) -> bool:
        return bool(self._owners)

    def owner(self, module: str) -> str | None:
        owners = self._owners  # replaced, never changed: read without the lock
        while module and owners:
            key = owners.get(module)
            if key is not None:
                return key
            module = module.rpartition(".")[0]
        return None

    def add(self, key: str, text: str) -> None:
        """Text plugin `key` wrote; each line it completes is kept and logged."""
        with self._lock:
            pending = self._partial.pop(key, "") + text
            *done, rest = pending.split("\n")
            if rest:  # held no longer than a line is kept (the line is cut there anyway)
                self._partial[key] = rest[: LINE_CHARS + 1]
            for line in done:
                self._line(key, line)

    def flush(self, key: str) -> None:
        """The line plugin `key` left unfinished counts as a line (its code returned)."""
        with self._lock:
            rest = self._partial.pop(key, "")
            if rest:
                self._line(key, rest)

    def lines(self, key: str) -> list[str]:
        with self._lock:
            return list(self._tails.get(key, ()))

    def forget(self, key: str) -> None:
        with self._lock:
            self._tails.pop(key, None)
            self._partial.pop(key, None)
            self._logged.pop(key, None)

    def _line(self, key: str, line: str) -> None:
        line = line.rstrip("\r")
        if len(line) > LINE_CHARS:
            line = line[:LINE_CHARS] + "…"
        self._tails.setdefault(key, deque(maxlen=TAIL)).append(line)
        self._logged[key] += 1
        who = f"plugin {key}" if key else "no known plugin (fd 1)"
        if self._logged[key] <= LOG_LINES:
            logger.info("%s printed: %s", who, line)
        elif self._logged[key] == LOG_LINES + 1:
            logger.info("%s printed more than %d lines: the rest is not logged", who, LOG_LINES)


outputs = Outputs()

# The packages whose code is hermes-tui's or Python's, whatever a plugin's entry point says.
_NEVER_PLUGINS = frozenset({"workbench", "__main__", *sys.stdlib_module_names})


def claim(key: str, module: str) -> None:
    outputs.claim(key, module)


def lines(key: str) -> list[str]:
    return outputs.lines(key)


def forget(key: str) -> None:
    outputs.forget(key)


def speaker() -> str | None:
    """The plugin whose code is writing now, or None: hermes-tui's own."""
    key = _current.get()
    if key is not None or not outputs.claimed:
        return key
    frame: types.FrameType | None = sys._getframe(1)
    depth = 0
    while frame is not None and depth < MAX_DEPTH:
        key = outputs.owner(str(frame.f_globals.get("__name__") or ""))
        if key is not None:
            return key
        frame, depth = frame.f_back, depth + 1
    thread = threading.current_thread()
    target = getattr(thread, "_target", None) or type(thread).run
    return outputs.owner(str(getattr(target, "__module__", "") or ""))


# -- speaking: plugin code runs ---------------------------------------------------------


_active: Counter[str] = Counter()  # the plugins whose code runs now, on some thread
_active_lock = threading.RLock()


@contextlib.contextmanager
def speaking(key: str) -> Iterator[None]:
    """Plugin `key`'s code runs inside, on this thread: what it prints is its own."""
    token = _current.set(key)
    with _active_lock:
        _active[key] += 1
        _fd.enter()
    try:
        yield
    finally:
        _fd.drain()  # its writes to fd 1 are read while it still speaks
        outputs.flush(key)
        with _active_lock:
            _active[key] -= 1
            if not _active[key]:
                del _active[key]
            _fd.leave()
        _current.reset(token)


def speaking_now() -> list[str]:
    with _active_lock:
        return sorted(_active)


# -- sys.stdout --------------------------------------------------------------------------


class _Switch(io.TextIOBase):
    """sys.stdout: plugin code's text to its output, the rest to the stream it replaced."""

    def __init__(self, own: TextIO) -> None:
        super().__init__()
        self.own = own

    def write(self, text: str) -> int:
        key = speaker()
        if key is None:
            return self.own.write(text)
        outputs.add(key, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        key = speaker()
        if key is None:
            self.own.flush()
        else:
            outputs.flush(key)

    @property
    def buffer(self) -> Any:
        """Bytes: hermes-tui's own go to the stream's buffer, a plugin's to its output."""
        key = speaker()
        return self.own.buffer if key is None else _Bytes(key)

    def fileno(self) -> int:
        return 1 if _fd.taken and speaker() is not None else self.own.fileno()

    def isatty(self) -> bool:
        return self.own.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.own, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.own, "errors", None)

    @property
    def line_buffering(self) -> bool:
        return bool(getattr(self.own, "line_buffering", False))

    def __getattr__(self, name: str) -> Any:
        if name == "own":  # not set yet (a copy being made): never look it up in itself
            raise AttributeError(name)
        return getattr(self.own, name)


class _Bytes(io.RawIOBase):
    """A plugin's `sys.stdout.buffer`."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        outputs.add(self.key, chunk.decode("utf-8", "replace"))
        return len(chunk)


def route_stdout() -> None:
    """sys.stdout sends plugin code's text aside (wrapping the stream it is now: the
    terminal, a pipe, Textual's capture while the workbench runs)."""
    if not isinstance(sys.stdout, _Switch) and sys.stdout is not None:
        sys.stdout = _Switch(sys.stdout)


# -- file descriptor 1 -------------------------------------------------------------------


class _Fd:
    """fd 1 pointed at a pipe of ours, for good or while plugin code runs."""

    def __init__(self) -> None:
        self.taken = False
        self.always = False
        self._real = -1  # the fd 1 hermes-tui started with, kept (a copy)
        self._read = self._write = -1
        self._users = 0  # speaking blocks running now (guarded by _active_lock)
        self._lock = threading.Lock()  # one reader of the pipe at a time
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.original: list[TextIO | None] = []  # the streams on fd 1 before, kept open

    def take(self, always: bool) -> None:
        with contextlib.suppress(AttributeError, OSError, ValueError):
            sys.stdout.flush()
        if sys.__stdout__ is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.__stdout__.flush()
        self._real = os.dup(1)  # not inherited (os.dup's copies are not)
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self.taken, self.always = True, always
        if always:
            os.dup2(self._write, 1)
        threading.Thread(target=self._follow, name="plugin-stdout", daemon=True).start()

    def real_stream(self, like: TextIO | None) -> TextIO:
        """A text stream on the fd 1 hermes-tui started with, set as `like` was."""
        raw = io.FileIO(os.dup(self._real), "w")
        return io.TextIOWrapper(
            io.BufferedWriter(raw),
            encoding=getattr(like, "encoding", None) or "utf-8",
            errors=getattr(like, "errors", None) or "strict",
            line_buffering=bool(getattr(like, "line_buffering", False)) or raw.isatty(),
        )

    def enter(self) -> None:
        """A speaking block starts (under _active_lock)."""
        self._users += 1
        if self.taken and not self.always and self._users == 1:
            _flush_dunder()
            os.dup2(self._write, 1)

    def leave(self) -> None:
        """A speaking block ended, its output drained (under _active_lock)."""
        self._users -= 1
        if self.taken and not self.always and self._users == 0:
            os.dup2(self._real, 1)

    def drain(self) -> None:
        """Read what the pipe holds now: it is of the plugins speaking now."""
        if not self.taken:
            return
        _flush_dunder()
        with self._lock:
            chunks = []
            while True:
                try:
                    chunk = os.read(self._read, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            if chunks:
                text = self._decoder.decode(b"".join(chunks))
                speakers = speaking_now() or [_NONE]
                for key in speakers:
                    outputs.add(key, text)

    def _follow(self) -> None:
        """What comes through when no one drains it: a daemon's, a plugin thread's."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._read, selectors.EVENT_READ)
            while True:
                selector.select()
                self.drain()
                outputs.flush(_NONE)


def _flush_dunder() -> None:
    """The stream Python opened on fd 1 writes there when flushed: what plugin code put in
    it (having kept it before fd 1 was taken) is its own only while it speaks."""
    for stream in _fd.original:
        if stream is not None and not isinstance(stream, _Switch):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()


_fd = _Fd()


def take_fd(always: bool = True) -> None:
    """Point fd 1 at our pipe (for good with `always`, else while plugin code runs), and
    make sys.stdout a switch over a copy of the fd 1 hermes-tui started with. Once a
    process; a process that is hermes-tui (never a test calling its main in-process)."""
    if _fd.taken:
        return
    like = sys.stdout
    _fd.take(always)
    _fd.original = [sys.stdout, sys.__stdout__]  # a stream collected would close fd 1
    switch = _Switch(_fd.real_stream(like))
    sys.stdout = switch
    sys.__stdout__ = switch  # type: ignore[misc,assignment]  # Python's "original": ours now
