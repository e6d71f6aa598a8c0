"""Shared benchmark helpers: time a callable or a process, print ours beside the peer's."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path


def per_call(fn: Callable[[], object], number: int, repeat: int = 7) -> float:
    """Best-of-`repeat` seconds per call (the least disturbed run on a shared machine)."""
    fn()  # warm-up
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def process_seconds(
    argv: Sequence[str], runs: int = 10, timeout: float | None = None, **kwargs: object
) -> float:
    """Median wall time of a whole process, start to exit (each run at most `timeout` s)."""
    subprocess.run(argv, capture_output=True, check=True, timeout=timeout, **kwargs)  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, timeout=timeout, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peer_seconds(
    argv: Sequence[str], runs: int = 10, timeout: float = 60.0, **kwargs: object
) -> float | None:
    """`process_seconds` for the peer: None (printed "n/a") when it fails or hangs, with why
    on stderr, so the benchmark still prints our figure."""
    try:
        return process_seconds(argv, runs, timeout, **kwargs)
    except subprocess.CalledProcessError as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        print(f"  peer failed (exit {exc.returncode}): {err.strip()[-300:]}", file=sys.stderr)
    except subprocess.TimeoutExpired:
        print(f"  peer did not end within {timeout:g} s", file=sys.stderr)
    except OSError as exc:
        print(f"  peer did not start: {exc}", file=sys.stderr)
    return None


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def report(name: str, ours: float, peer: float | None, target: str, ok: bool) -> bool:
    """One line: our figure, the peer's, ours/peer, the target and whether it is met."""
    ratio = f"{ours / peer:6.2f}x" if peer else "   n/a "
    peer_text = fmt(peer) if peer else "       n/a"
    print(
        f"  {name:<46} ours {fmt(ours)}  hermes {peer_text}  ours/hermes {ratio}  "
        f"target {target}: {'MET' if ok else 'MISSED'}"
    )
    return ok


def raise_priority(pid: int | str = "self") -> str:
    """Make `nice -n -10` mean what it says. Linux's autogroups (one per session) share the
    CPU fairly among themselves, whatever the nice value of the processes in each: a niced
    benchmark competing with other sessions' work would get its autogroup's share only.
    Given our own nice value, the autogroup gets it too (root may lower it). A process that
    starts a session of its own (a model's server, tmux's server) is given the same."""
    nice = os.nice(0)
    try:
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(nice))
    except OSError:
        return f"nice {nice}"
    return f"nice {nice}, autogroup nice {nice}"


def child_figures(code: str, *args: str) -> object | str:
    """Run `code` in a fresh interpreter from the repository root, with its own temporary
    HERMES_HOME (never ~/.hermes) passed as its last argument; its stdout is JSON. On failure,
    the last line of its stderr (or its exit status) instead."""
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        done = subprocess.run(
            [sys.executable, "-c", code, *args, tmp],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            env={**os.environ, "HERMES_HOME": str(Path(tmp) / "home")},
        )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit {done.returncode}"
    return json.loads(done.stdout)
