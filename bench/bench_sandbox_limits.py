"""What the sandbox's limits must leave room for: what agents run most, each in the sandbox
the terminal's way (backend, reaper), with the smallest memory limit it works under, counted
as RLIMIT_DATA (what hermes-tui sets) and as RLIMIT_AS (what Hermes sets), the fewest
processes and threads it works with, the smallest /tmp, its CPU time; then whether
the defaults hold it, and whether a 1.5 GB allocation fails under them, as it must.

Each smallest value is found by halving (16 MB, 4 processes, 8 MB of /tmp apart) between a value it fails
under and one it works under. The defaults of limits.py follow from this table. Workloads
whose program is missing are left out; those that fetch reach PyPI and the npm registry.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness import fmt

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 300
MB = 1 << 20
PIP = "PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CERT=/etc/ssl/certs/ca-certificates.crt"
HELLO_C = '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n'
HELLO_CPP = (
    "#include <iostream>\n#include <map>\n#include <regex>\n#include <string>\n"
    'int main() { std::map<std::string, int> m{{"a", 1}}; std::regex r("a+b*");\n'
    '  std::cout << m.size() << std::regex_match("aab", r) << "\\n"; }\n'
)
# name -> (program it needs, the command); each runs in a fresh copy of the project below
WORKLOADS = {
    "pip install requests (PyPI)": (
        "python3",
        f"python3 -m venv v && {PIP} v/bin/pip install -q requests",
    ),
    "npm install is-number": ("npm", "npm install --silent --no-audit --no-fund is-number"),
    "node -e": ("node", "node -e 'console.log(1)'"),
    "cargo build (hello)": ("cargo", "cd hello && cargo build -q --offline"),
    "rustc -O": ("rustc", "rustc -O -o hr hello/src/main.rs"),
    "gcc -O2": ("gcc", "gcc -O2 -o hc hello.c"),
    "g++ -O2 (iostream, regex)": ("g++", "g++ -O2 -o hx hello.cpp"),
    "pytest (tests/core/safety, one process)": (
        "python3",
        f"cd {REPO} && {sys.executable} -m pytest -q -x -p no:cacheprovider -p no:xdist "
        "-o addopts= tests/core/safety",
    ),
    "java -version": ("java", "java -version"),
}
ALLOCATE = 'python3 -c "b = bytearray(1500 << 20)"'


def project(root: Path) -> Path:
    """A scratch project: a cargo crate, a C and a C++ file (not under /tmp: the sandbox's
    /tmp is its own)."""
    work = Path(tempfile.mkdtemp(dir=root))
    (work / "hello.c").write_text(HELLO_C)
    (work / "hello.cpp").write_text(HELLO_CPP)
    crate = work / "hello" / "src"
    crate.mkdir(parents=True)
    (work / "hello" / "Cargo.toml").write_text(
        '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (crate / "main.rs").write_text('fn main() { println!("hi"); }\n')
    return work


def run(
    backend: Any, command: str, root: Path, rlimits: list[list[int | str]] | None = None
) -> dict:
    """The result of `command` in a fresh project, with `rlimits` instead of the backend's."""
    from workbench.builtins.terminal.terminal_tool import run_spawn

    work = project(root)
    try:
        spawn = backend.shell(command, str(work), TIMEOUT, session=str(work))
        if rlimits is not None:
            spawn = dataclasses.replace(spawn, confine={**spawn.confine, "rlimits": rlimits})
        started = time.perf_counter()
        out = json.loads(run_spawn(spawn, TIMEOUT))
        out["seconds"] = time.perf_counter() - started
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def smallest(works: Callable[[int], bool], low: int, high: int, step: int) -> int | None:
    """The smallest value in (low, high] it works with; None if not even `high`."""
    if not works(high):
        return None
    while high - low > step:
        middle = (low + high) // 2
        if works(middle):
            high = middle
        else:
            low = middle
    return high


def main() -> int:
    from workbench.core.backends.limits import DEFAULT, NONE
    from workbench.core.backends.sandbox import SandboxBackend, bwrap_status

    works, why = bwrap_status()
    print("sandbox limits: what agents run needs, in the sandbox (smallest limit it works under)")
    if not works:
        print(f"  skipped: {why}")
        return 0
    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-limits-", dir=Path.home()))
    hermes = root / "hermes-home"
    hermes.mkdir()
    free = SandboxBackend(hermes_home=hermes, limits=replace(NONE, tmp_mb=DEFAULT.tmp_mb))
    default = SandboxBackend(hermes_home=hermes)
    ok = True
    try:
        print(f"  defaults: {default.describe().split('; ')[-1].rstrip(')')}")
        head = f"  {'workload':<42} {'DATA':>8} {'AS':>8} {'procs':>6} {'CPU s':>7} {'/tmp':>8} {'wall':>11}  defaults"
        print(head)
        only = sys.argv[1:]  # words a workload's name holds, to measure only those
        for name, (program, command) in WORKLOADS.items():
            if only and not any(word in name for word in only):
                continue
            if shutil.which(program) is None:
                print(f"  {name:<42} skipped: {program} is not installed")
                continue
            ok &= measure(name, command, free, default, hermes, root)
        out = run(default, ALLOCATE, root)
        failed = out["exit_code"] != 0 and "MemoryError" in out["output"]
        ok &= failed
        print(
            f"  a 1.5 GB allocation under the defaults: {'fails (MET)' if failed else 'RUNS (MISSED)'}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


def measure(name: str, command: str, free: Any, default: Any, hermes: Path, root: Path) -> bool:
    from workbench.core.backends.limits import NONE
    from workbench.core.backends.sandbox import SandboxBackend

    # CPU time of the command's processes: bash's `times`, its second line (children)
    base = run(free, f"{command}; s=$?; times; exit $s", root)
    if base["exit_code"] != 0:
        print(f"  {name:<42} FAILS without limits: {(base.get('output') or '').strip()[-120:]}")
        return False
    cpu = sum(_seconds(t) for t in base["output"].strip().splitlines()[-1].split())

    def under(kind: str) -> Callable[[int], bool]:
        return lambda mb: run(free, command, root, [[kind, mb * MB, mb * MB]])["exit_code"] == 0

    def boxed(**limits: int) -> bool:
        backend = SandboxBackend(hermes_home=hermes, limits=replace(NONE, **limits))
        return bool(run(backend, command, root)["exit_code"] == 0)

    data = smallest(under("DATA"), 16, 8192, 16)
    space = smallest(under("AS"), 16, 16384, 16)
    procs = smallest(lambda n: boxed(max_procs=n, tmp_mb=1024), 2, 1024, 4)
    tmp = smallest(lambda mb: boxed(tmp_mb=mb), 0, 1024, 8)
    walls = [run(default, command, root) for _ in range(3)]
    held = all(w["exit_code"] == 0 for w in walls)
    wall = statistics.median(w["seconds"] for w in walls)
    print(
        f"  {name:<42} {_mb(data):>8} {_mb(space):>8} {procs or '>1024':>6} {cpu:7.1f} "
        f"{_mb(tmp):>8} {fmt(wall)}  {'works' if held else 'FAILS'}"
    )
    return held


def _mb(value: int | None) -> str:
    return f"{value} MB" if value is not None else "> max"


def _seconds(text: str) -> float:
    """bash's `times`: 1m2.345s."""
    minutes, _, seconds = text.rstrip("s").partition("m")
    return float(minutes) * 60 + float(seconds)


if __name__ == "__main__":
    sys.exit(main())
