"""Peak memory of the process running the terminal tool, for 1 GB of output.

Each figure comes from a fresh process that runs one command and reports how much its peak
resident memory (VmHWM) grew over what it held before the call. Ours streams the output:
memory keeps its head and tail, the whole of it goes to the session's spill file. The peer
holds the whole output before cutting it, as hermes-tui did before; Hermes's terminal
(measured when hermes-agent is installed, as `make bench` does) keeps its memory bounded by
dropping the middle of the output for good. Each line also says what is left of the output.

Target: growth under 300 MB for any output size (the bound the README states).
"""

from __future__ import annotations

import sys

from harness import child_figures

GB_OUTPUT = "yes | head -c 1000000000"
ENDLESS = "cat /dev/zero"
TARGET_MB = 300

CHILD = r"""
import json, os, sys, time
from pathlib import Path

def vm(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)

mode, command, timeout, tmp = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
if mode == "ours":
    from workbench.core.execution.budget import SpillSlot, SpillStore
    from workbench.builtins.terminal.terminal_tool import run_command
    slot = SpillSlot(SpillStore(Path(tmp), "bench"), "call")
    run = lambda: run_command(command, Path(tmp), timeout, spill=slot)
elif mode == "held":
    import subprocess
    def run():
        proc = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
        head, tail = out[:25000].decode(errors="replace"), out[-25000:].decode(errors="replace")
        return json.dumps({"output": head + tail, "bytes": len(out)})
else:
    from tools.terminal_tool import terminal_tool
    run = lambda: terminal_tool(command=command, timeout=int(timeout))
before = vm("VmRSS")
start = time.perf_counter()
result = run()
took = time.perf_counter() - start
saved = slot.path.stat().st_size if mode == "ours" and slot.path else 0
print(json.dumps({"growth_mb": vm("VmHWM") - before, "seconds": took,
                  "result_chars": len(result), "saved_bytes": saved}))
"""


def measure(mode: str, command: str, timeout: float) -> dict | str:
    return child_figures(CHILD, mode, command, str(timeout))


def line(name: str, ours: dict | str, peer: dict | str | None, peer_name: str) -> bool:
    if isinstance(ours, str):
        print(f"  {name:<44} ours failed: {ours}")
        return False
    ok = ours["growth_mb"] < TARGET_MB
    if isinstance(peer, dict):
        peer_text = f"{peer['growth_mb']:8.1f} MB ({peer['seconds']:.1f} s, {_kept(peer)})"
        ratio = f"{ours['growth_mb'] / peer['growth_mb']:6.3f}x" if peer["growth_mb"] else "n/a"
    else:
        peer_text, ratio = f"n/a ({peer})" if peer else "n/a", "n/a"
    print(
        f"  {name:<44} ours {ours['growth_mb']:8.1f} MB ({ours['seconds']:.1f} s, {_kept(ours)})  "
        f"{peer_name} {peer_text}  ours/{peer_name} {ratio}  "
        f"target < {TARGET_MB} MB: {'MET' if ok else 'MISSED'}"
    )
    return ok


def _kept(figures: dict) -> str:
    """What is left of the output: the model's text, and the file holding all of it."""
    saved = figures.get("saved_bytes") or 0
    kept = f"{figures['result_chars']:,} chars"
    return f"{kept} + {saved:,} B saved" if saved else f"{kept}, rest lost"


def main() -> int:
    print("terminal: peak memory growth of the process running the tool")
    ours = measure("ours", GB_OUTPUT, 300)
    ok = line("1 GB of output (yes | head -c 1e9)", ours, measure("held", GB_OUTPUT, 300), "held")
    hermes = measure("hermes", GB_OUTPUT, 300)
    ok &= line("1 GB of output, against Hermes's terminal", ours, hermes, "hermes")
    # The peer is not run here: holding an endless output grows until the machine runs out.
    ok &= line("cat /dev/zero until a 4 s timeout", measure("ours", ENDLESS, 4), None, "held")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
