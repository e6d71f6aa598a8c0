"""Running `hermes-tui COMMAND ...` as a user would, in this process or as a process.

In this process by default: the same entry point (`workbench.__main__.main`) with the
test's environment, working directory, an empty stdin that is not a terminal and captured
stdout and stderr, so each run does not pay for a new interpreter, its imports and its
tokenizer's table (about a second each, which made the CLI's tests most of `make check`).
What a process would not carry over from one run to the next is undone after each run: the
log handlers it added, signal handlers, the environment and the working directory.

As a process (`process=True`, or every run when HERMES_TUI_TEST_CLI=process, which
`make test` sets for one pass over these tests) it is the installed `hermes-tui` itself:
its own interpreter, exit status and streams.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

BIN = Path(sys.executable).parent
PROCESS = os.environ.get("HERMES_TUI_TEST_CLI") == "process"
_LOGGERS = ("workbench", "mcp")  # the loggers a command gives handlers (core.runtime)
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)


def run(
    env: dict[str, str], *args: str, cwd: Path | None = None, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """`hermes-tui ARGS` with `env` as its whole environment, in `cwd`, stdin at its end."""
    if process or PROCESS:
        return _as_process(env, args, cwd)
    return _in_process(env, args, cwd)


def _as_process(
    env: dict[str, str], args: tuple[str, ...], cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "hermes-tui"), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _in_process(
    env: dict[str, str], args: tuple[str, ...], cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    from workbench.__main__ import main

    out, err = _stream(), _stream()
    with _as_if_started(env, cwd), _streams(out, err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse's errors and --version, as the process exits
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if isinstance(stop.code, str):
                print(stop.code, file=sys.stderr)
        except Exception:  # what the process would print as it died
            traceback.print_exc()
            code = 1
    return subprocess.CompletedProcess(["hermes-tui", *args], code, _text(out), _text(err))


def _stream() -> io.TextIOWrapper:
    """A text stream with a `.buffer`, as sys.stdout has (binary output is written there)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return raw.decode("utf-8", "replace").replace("\r\n", "\n")  # as text=True reads it


@contextlib.contextmanager
def _streams(out: io.TextIOWrapper, err: io.TextIOWrapper) -> Iterator[None]:
    stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # at its end, not a terminal
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _as_if_started(env: dict[str, str], cwd: Path | None) -> Iterator[None]:
    """The environment and directory a process would start with; afterwards, this test's
    own back, and nothing the run set up for itself left behind."""
    environ, here = dict(os.environ), os.getcwd()
    handlers = {name: list(logging.getLogger(name).handlers) for name in _LOGGERS}
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    signals = {number: signal.getsignal(number) for number in _SIGNALS}
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        for number, handler in signals.items():
            signal.signal(number, handler)
        for name in _LOGGERS:
            _restore_logger(logging.getLogger(name), handlers[name], levels[name])


def _restore_logger(logger: logging.Logger, handlers: list[logging.Handler], level: int) -> None:
    for handler in logger.handlers:
        if handler not in handlers:
            logger.removeHandler(handler)
            with contextlib.suppress(OSError, ValueError):  # a full disk: as a process's exit
                handler.close()
    logger.setLevel(level)
