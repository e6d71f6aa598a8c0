"""Shared benchmark helpers: time a callable or a process, print ours beside the peer's."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
import timeit
from collections.abc import Callable, Sequence


def per_call(fn: Callable[[], object], number: int, repeat: int = 7) -> float:
    """Best-of-`repeat` seconds per call (the least disturbed run on a shared machine)."""
    fn()  # warm-up
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def process_seconds(argv: Sequence[str], runs: int = 10, **kwargs: object) -> float:
    """Median wall time of a whole process, start to exit."""
    subprocess.run(argv, capture_output=True, check=True, **kwargs)  # warm the page cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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
