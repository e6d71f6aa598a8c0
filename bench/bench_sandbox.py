"""What the terminal's sandbox costs per command: plain vs under bubblewrap, side by side,
with each `terminal.network` (off, host, and on, the default: a network namespace of its
own and slirp4netns) and with its limits (a pids cgroup per command as root).

Each command goes the terminal tool's own way (the backend builds argv, environment and
what the reaper sets up, `run_process` starts it under the reaper and reads its output),
so the difference is what a user pays per call for the sandbox. Target: under 50 ms more
per command, for the default.
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
    from workbench.builtins.terminal.terminal_tool import run_spawn

    def once() -> float:
        start = time.perf_counter()  # laying the sandbox out is part of each command's cost
        run_spawn(backend.shell(command, str(cwd), 30, session=str(cwd)), 30)
        return time.perf_counter() - start

    once()  # warm-up: page cache, bwrap's first start
    return statistics.median(once() for _ in range(RUNS))


def main() -> int:
    from workbench.core.backends import LocalBackend
    from workbench.core.backends.limits import NONE
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
        plain = LocalBackend()
        boxed = {
            "network off": SandboxBackend(hermes_home=home, network="off"),
            "network host": SandboxBackend(hermes_home=home, network="host"),
            "network on, no limits": SandboxBackend(hermes_home=home, limits=NONE),
            "default (network on)": SandboxBackend(hermes_home=home),
        }
        for name, command in COMMANDS.items():
            a = median_seconds(plain, command, cwd)
            print(f"  {name:<20} plain {fmt(a)}")
            for setting, backend in boxed.items():
                b = median_seconds(backend, command, cwd)
                met = b - a < TARGET
                if setting.startswith("default"):
                    ok &= met
                print(
                    f"    {setting:<22} {fmt(b)}  extra {fmt(b - a)}  ratio {b / a:5.2f}x"
                    + (
                        f"  target extra < 50 ms: {'MET' if met else 'MISSED'}"
                        if setting.startswith("default")
                        else ""
                    )
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
