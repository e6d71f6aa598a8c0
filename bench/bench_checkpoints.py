"""Checkpoints: what a turn pays for its snapshot, and what the store costs on disk.

A generated 5,000-file project (mostly small text files, some medium, a few large ones, as
a source tree with some data is) is snapshotted as the executor does before a turn's first
change. Targets (issue 23): a snapshot after a small edit (what a turn pays) ≤ 300 ms, a
snapshot of an unchanged tree ≤ 50 ms, restoring one file ≤ 200 ms (its backup snapshot
included), the store after 50 turns of small edits ≤ 1.2× the project's size.

Beside ours, Hermes's CheckpointManager (hermes-agent 0.19, `tools/checkpoint_manager.py`)
on a copy of the same project, in its own process and HERMES_HOME, when it can be imported
(`make bench` installs it in .venv-bench; HERMES_AGENT_SRC may name an unpacked wheel).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import child_figures, fmt, raise_priority

FILES = 5_000
TURNS = 50
RUNS = 15
TARGETS = {"edit": 0.300, "same": 0.050, "restore": 0.200, "size": 1.2}
WORDS = (  # noqa: SIM905 (a word list reads best as words)
    "def return import class self value result error path file line count index data "
    "config token model agent tool call turn store commit tree blob write read cache "
    "for while if else try except with as yield async await lambda none true false"
).split()


def make_project(root: Path, seed: int = 23) -> int:
    """5,000 files in nested folders: ~92% small (100 B–8 KB), ~7.6% medium (16–128 KB),
    20 large (1–4 MB) text files. Returns the total size in bytes."""
    rng = random.Random(seed)
    total = 0
    for n in range(FILES):
        if n < 20:
            size = rng.randint(1 << 20, 4 << 20)
        elif n < 400:
            size = rng.randint(16 << 10, 128 << 10)
        else:
            size = rng.randint(100, 8 << 10)
        folder = root / f"pkg{n % 40}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = (".py", ".md", ".json", ".txt", ".ts")[n % 5]
        (folder / f"file{n}{suffix}").write_text(_text(rng, size))
        total += size
    return total


def _text(rng: random.Random, size: int) -> str:
    lines, length = [], 0
    while length < size:
        line = " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + f" {rng.randint(0, 99999)}\n"
        lines.append(line)
        length += len(line)
    return "".join(lines)[:size]


def small_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.stat().st_size < 8 << 10)


def edit(path: Path, turn: int) -> None:
    with path.open("a") as handle:
        handle.write(f"edited in turn {turn}\n")


def disk_bytes(path: Path) -> tuple[int, int]:
    """(apparent size, bytes allocated on disk) of everything under `path`."""
    apparent = allocated = 0
    for folder, _, names in os.walk(path):
        for name in names:
            info = os.lstat(os.path.join(folder, name))
            apparent += info.st_size
            allocated += info.st_blocks * 512
    return apparent, allocated


def ours(project: Path, home: Path) -> dict[str, float]:
    from workbench.core.checkpoints import CheckpointStore
    from workbench.core.checkpoints.prune import maintain
    from workbench.core.config import Config

    store = CheckpointStore(home, Config(home / "config.yaml", {}))
    figures: dict[str, float] = {}
    start = time.perf_counter()
    first = store.snapshot(project, reason="first")
    figures["first"] = time.perf_counter() - start
    assert first.checkpoint is not None, first.note
    smalls = small_files(project)
    edits, same = [], []
    for turn in range(1, TURNS + 1):
        for path in smalls[turn * 3 : turn * 3 + 3]:
            edit(path, turn)
        start = time.perf_counter()
        snap = store.snapshot(project, reason=f"turn {turn}", turn=turn)
        edits.append(time.perf_counter() - start)
        assert snap.checkpoint is not None, snap.note
        start = time.perf_counter()
        snap = store.snapshot(project, reason=f"turn {turn} again", turn=turn)
        same.append(time.perf_counter() - start)
        assert snap.checkpoint is None, snap.note
    figures["edit"] = statistics.median(edits)
    figures["same"] = statistics.median(same)
    figures["size_before_gc"] = disk_bytes(store.root)[1]
    maintain(store.root, store.settings)  # the daily maintenance: gc packs the store
    figures["size"] = disk_bytes(store.root)[1]
    restores = []
    target, latest = smalls[3], store.get(project).id
    for n in range(RUNS):
        target.write_text(f"broken {n}\n")
        start = time.perf_counter()
        plan = store.plan_restore(project, latest, files=[str(target)])
        store.restore(plan, overwrite=plan.hand_edited)
        restores.append(time.perf_counter() - start)
    figures["restore"] = statistics.median(restores)
    return figures


HERMES = """
import json, os, statistics, sys, time
from pathlib import Path
project = Path(sys.argv[1])
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from bench_checkpoints import TURNS, RUNS, disk_bytes, edit, small_files
from tools import checkpoint_manager as m
manager = m.CheckpointManager(enabled=True)
figures = {}
start = time.perf_counter()
assert manager.ensure_checkpoint(str(project), "first")
figures["first"] = time.perf_counter() - start
smalls = small_files(project)
edits, same = [], []
for turn in range(1, TURNS + 1):
    for path in smalls[turn * 3 : turn * 3 + 3]:
        edit(path, turn)
    manager.new_turn()
    start = time.perf_counter()
    manager.ensure_checkpoint(str(project), f"turn {turn}")
    edits.append(time.perf_counter() - start)
    manager.new_turn()
    start = time.perf_counter()
    manager.ensure_checkpoint(str(project), f"turn {turn} again")
    same.append(time.perf_counter() - start)
figures["edit"] = statistics.median(edits)
figures["same"] = statistics.median(same)
figures["size_before_gc"] = disk_bytes(m.CHECKPOINT_BASE)[1]
m.prune_checkpoints(retention_days=7, checkpoint_base=m.CHECKPOINT_BASE)
figures["size"] = disk_bytes(m.CHECKPOINT_BASE)[1]
restores = []
target, latest = smalls[3], manager.list_checkpoints(str(project))[0]
for n in range(RUNS):
    target.write_text(f"broken {n}\\n")
    start = time.perf_counter()
    manager.restore(str(project), latest["hash"], str(target.relative_to(project)))
    restores.append(time.perf_counter() - start)
figures["restore"] = statistics.median(restores)
figures["restored"] = target.read_text() != f"broken {RUNS - 1}\\n"
print(json.dumps(figures))
"""


def hermes(project: Path) -> dict[str, float] | str:
    src = os.environ.get("HERMES_AGENT_SRC", "")
    if src:
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (src, os.environ.get("PYTHONPATH", "")) if p
        )
    figures = child_figures(HERMES, str(project))
    return figures if isinstance(figures, dict) else f"not run: {figures}"


def main() -> int:
    print(
        f"checkpoints: a {FILES:,}-file project, {TURNS} turns of small edits ({raise_priority()})"
    )
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-") as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        size = make_project(project)
        print(f"  project: {FILES:,} files, {size / 2**20:.1f} MB")
        peer_project = Path(tmp) / "peer" / "project"
        shutil.copytree(project, peer_project)
        mine = ours(project, home)
        peer = hermes(peer_project)
    theirs = peer if isinstance(peer, dict) else {}
    ok = True
    print(f"  {'first snapshot':<46} ours {fmt(mine['first'])}  hermes {_peer(theirs, 'first')}")
    for key, name in (
        ("edit", "snapshot after a small edit (a turn's cost)"),
        ("same", "snapshot of an unchanged tree"),
        ("restore", "restore one file (its backup included)"),
    ):
        met = mine[key] <= TARGETS[key]
        ok &= met
        print(
            f"  {name:<46} ours {fmt(mine[key])}  hermes {_peer(theirs, key)}  "
            f"target ≤ {TARGETS[key] * 1000:.0f} ms: {'MET' if met else 'MISSED'}"
        )
    ratio = mine["size"] / size
    met = ratio <= TARGETS["size"]
    ok &= met
    peer_size = f"{theirs['size'] / size:5.2f}x" if "size" in theirs else "  n/a"
    print(
        f"  {'store on disk after 50 turns / project size':<46} ours {ratio:5.2f}x "
        f"(before its gc {mine['size_before_gc'] / size:4.2f}x)  hermes {peer_size}  "
        f"target ≤ {TARGETS['size']}x: {'MET' if met else 'MISSED'}"
    )
    if isinstance(peer, str):
        print(f"  hermes: {peer}")
    print(
        "  hermes's behaviour: checkpoints off by default (checkpoints.enabled: false since "
        "v2), one per directory per turn before write_file/patch or a destructive terminal "
        "command; ours on by default, before any call that may change files"
    )
    return 0 if ok else 1


def _peer(figures: dict, key: str) -> str:
    return fmt(figures[key]) if key in figures else "       n/a"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
