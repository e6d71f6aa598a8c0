"""Keep the app's secrets out of what other processes can read of it (Linux; elsewhere a no-op).

Another process reads ours through /proc: `environ` shows the environment block we were
started with, `cmdline` (what `ps` shows) our arguments, `mem` our memory. So at start:

* we are made non-dumpable: processes of the same (non-root) user can read neither our
  `environ` nor our memory (`cmdline` stays readable by everyone);
* the values of every variable the environment allowlist would not give a child (API keys,
  tokens, anything unknown: see env_names.py) are overwritten in the original
  block, which root can still read. Python copied the environment into `os.environ` before;
  each such variable is then set again, so the C library's copy (what `getenv` and a child
  started without `env=` see) points to a fresh string, and nothing but `/proc` changes;
* a secret given as an argument (`--api-key KEY`) is overwritten in the argument block.

The block's bounds are fields arg_start, arg_end, env_start and env_end of
`/proc/self/stat`; it is our own writable memory (the top of the main stack).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterable

from workbench.core.env_names import allowed

PR_SET_DUMPABLE = 4
# Fields of /proc/self/stat (1-based, as proc(5) numbers them).
ARG_START, ARG_END, ENV_START, ENV_END = 48, 49, 50, 51
MIN_SUBSTRING = 6  # a shorter secret is hidden only where it is a whole argument


def linux() -> bool:
    return sys.platform.startswith("linux")


def harden() -> None:
    """At the start of an entry point: hide the environment's secrets, become non-dumpable."""
    if not linux():
        return
    hide_environment()
    set_dumpable(False)


def set_dumpable(on: bool) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done: int = libc.prctl(PR_SET_DUMPABLE, int(on), 0, 0, 0)
        return done == 0
    except (OSError, AttributeError):
        return False


def _bounds(first: int, last: int) -> tuple[int, int] | None:
    """The addresses of our argument or environment block, or None if unknown."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # the name, in parentheses, may hold spaces
    try:  # field 3 (the state) is the first after the name
        start, end = int(fields[first - 3]), int(fields[last - 3])
    except (IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def hide_environment() -> list[str]:
    """Overwrite, in the original environment block, the value of every variable a child
    would not get; returns their names."""
    bounds = _bounds(ENV_START, ENV_END)
    if bounds is None:
        return []
    start, end = bounds
    block = ctypes.string_at(start, end - start)
    hidden = []
    offset = 0
    for entry in block.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        if equals and value and not allowed(name.decode("utf-8", "replace")):
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            hidden.append(name.decode("utf-8", "replace"))
            current = os.environb.get(name)
            if current is not None:  # the C library's copy: now a string of its own
                with contextlib.suppress(OSError, ValueError):
                    os.putenv(name, current)
        offset += len(entry) + 1
    return hidden


def hide_arguments(secrets: Iterable[str]) -> int:
    """Overwrite each secret where it appears in our argument block (a whole argument, or
    inside one: `--api-key=KEY`); returns how many places were overwritten."""
    wanted = [s.encode("utf-8", "surrogateescape") for s in secrets if s]
    bounds = _bounds(ARG_START, ARG_END) if wanted and linux() else None
    if bounds is None:
        return 0
    start, end = bounds
    block = ctypes.string_at(start, end - start)
    count = 0
    offset = 0
    for arg in block.split(b"\0"):
        for secret in wanted:
            for at in _places(arg, secret):
                ctypes.memset(start + offset + at, 0, len(secret))
                count += 1
        offset += len(arg) + 1
    return count


def _places(arg: bytes, secret: bytes) -> list[int]:
    if arg == secret:
        return [0]
    if len(secret) < MIN_SUBSTRING:
        return []
    found, at = [], arg.find(secret)
    while at >= 0:
        found.append(at)
        at = arg.find(secret, at + len(secret))
    return found
