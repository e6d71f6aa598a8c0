"""What the terminal's sandbox costs per command: plain vs under bubblewrap, side by side.

Each command goes the terminal tool's own way (the backend builds argv and environment,
`run_process` starts it under the reaper and reads its output), so the difference is what
a user pays per call for `terminal.sandbox: true`. Target: under 50 ms more per command.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import fmt

RUNS = 15
COMMANDS = {"true": "true", "small pipeline": "seq 1 2000 | grep 7 | sort -r | head -n 3"}
TARGET = 0.050


def median_seconds(backend, command: str, cwd: Path) -> float:
    from workbench.builtins.terminal.terminal_tool import run_process

    def once() -> float:
        start = time.perf_counter()  # laying the sandbox out is part of each command's cost
        spawn = backend.shell(command, str(cwd), 30, session=str(cwd))
        try:
            run_process(spawn.argv, Path(spawn.cwd), 30, env=spawn.env)
        finally:
            if spawn.release is not None:
                spawn.release()
        return time.perf_counter() - start

    once()  # warm-up: page cache, bwrap's first start
    return statistics.median(once() for _ in range(RUNS))


def main() -> int:
    from workbench.core.backends import LocalBackend
    from workbench.core.backends.sandbox import SandboxBackend, bwrap_status

    works, why = bwrap_status()
    print("sandbox: cost per terminal command, plain vs bubblewrap (median of", RUNS, "runs)")
    if not works:
        print(f"  skipped: {why}")
        return 0
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        cwd, home = Path(tmp) / "work", Path(tmp) / "home"
        cwd.mkdir()
        home.mkdir()
        plain, boxed = LocalBackend(), SandboxBackend(hermes_home=home)
        for name, command in COMMANDS.items():
            a, b = median_seconds(plain, command, cwd), median_seconds(boxed, command, cwd)
            met = b - a < TARGET
            ok &= met
            print(
                f"  {name:<20} plain {fmt(a)}  sandboxed {fmt(b)}  extra {fmt(b - a)}  "
                f"ratio {b / a:5.2f}x  target extra < 50 ms: {'MET' if met else 'MISSED'}"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
