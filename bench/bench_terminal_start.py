"""What the terminal tool costs per command: `true` through the tool, ours beside Hermes's.

Each side runs in a fresh process of its own (both tools start their commands from the
process that calls them), warms up once, then times RUNS calls of `true`; the sides take
turns ROUNDS times so that the machine's load falls on both alike, and each figure is the
median of every call. Ours starts each command under its reaper (tools/reaper.py), which
kills whatever the command leaves behind, even when hermes-tui is killed. Hermes's is its
`terminal_tool`, measured when hermes-agent is installed (as `make bench` does).

Target: within 1.5× of Hermes's figure, or under 25 ms where Hermes is not installed.
"""

from __future__ import annotations

import statistics
import sys

from harness import child_figures, fmt, report

RUNS = 20
ROUNDS = 3
TARGET_RATIO = 1.5
TARGET_ALONE = 0.025

CHILD = r"""
import json, os, sys, time
from pathlib import Path

side, runs, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if side == "ours":
    from workbench.builtins.terminal.terminal_tool import run_command
    once = lambda: run_command("true", Path(tmp), 30)
else:
    from tools.terminal_tool import terminal_tool
    once = lambda: terminal_tool(command="true", timeout=30)
result = json.loads(once())  # warm-up: imports, page cache, a first start
assert result["exit_code"] == 0, result
times = []
for _ in range(runs):
    start = time.perf_counter()
    once()
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def times(side: str) -> list[float] | str:
    return child_figures(CHILD, side, str(RUNS))


def main() -> int:
    print(f"terminal: `true` through the tool (median of {RUNS * ROUNDS} calls a side)")
    ours: list[float] = []
    peer: list[float] | None = []
    why = ""
    for _ in range(ROUNDS):
        got = times("ours")
        if isinstance(got, str):
            print(f"  ours failed: {got}")
            return 1
        ours += got
        if peer is not None:
            got = times("hermes")
            if isinstance(got, str):
                peer, why = None, got
            else:
                peer += got
    mine = statistics.median(ours)
    theirs = statistics.median(peer) if peer else None
    if theirs is None:
        print(f"  (Hermes's terminal not measured: {why})")
        ok = mine < TARGET_ALONE
        target = f"< {fmt(TARGET_ALONE).strip()}"
    else:
        ok = mine < TARGET_RATIO * theirs
        target = f"< {TARGET_RATIO}x hermes"
    return 0 if report("`true` through the terminal tool", mine, theirs, target, ok) else 1


if __name__ == "__main__":
    sys.exit(main())
