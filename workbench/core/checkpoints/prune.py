"""Retention: how many checkpoints a project keeps, for how long, and the stores' size.

On every new checkpoint the project's oldest refs past `max_snapshots` or older than
`retention_days` are deleted (one git process, only when there is something to delete).
At most once a day, in a background thread, all the projects' stores together are measured
against `max_total_size_mb` (the oldest checkpoints of all projects dropped until they fit,
the newest of each kept) and `git gc` packs each store and drops objects no checkpoint holds
any more, never those younger than an hour (a snapshot running at that moment may not have
referenced them yet).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from workbench.core.checkpoints.git import Git, GitFailed
from workbench.core.checkpoints.settings import Settings
from workbench.core.checkpoints.shadow import REFS, is_store
from workbench.core.storage.atomic import atomic_write_text, locked

logger = logging.getLogger(__name__)

MAINTAIN_EVERY = 24 * 3600.0
MARKER = ".last_maintenance"
_running = threading.Lock()


def retain(project: Any, meta: dict[str, Any], settings: Settings, now: float) -> int:
    """Drop the project's checkpoints past the count or the age; returns how many."""
    ids = sorted(meta.get("ids", []), key=lambda item: item[1])
    keep = ids[-max(1, settings.max_snapshots) :]
    if settings.retention_days:
        cutoff = now - settings.retention_days * 86400
        keep = [item for item in keep[:-1] if item[1] >= cutoff] + keep[-1:]
    gone = [item for item in ids if item not in keep]
    if not gone:
        return 0
    delete_refs(Git(project.store), [f"{REFS}{commit}" for commit, _ in gone])
    meta["ids"] = keep
    return len(gone)


def delete_refs(git: Git, refs: list[str]) -> None:
    lines = "".join(f"delete {ref}\n" for ref in refs)
    git.run("update-ref", "--stdin", stdin=lines.encode())


def maybe_maintain(root: Path, settings: Settings) -> None:
    """Start the daily maintenance in the background when it is due."""
    marker = root / MARKER
    try:
        last = float(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = 0.0
        with contextlib.suppress(OSError):  # a new store starts its day now
            atomic_write_text(marker, str(time.time()), mode=0o600)
        return
    if time.time() - last < MAINTAIN_EVERY or not _running.acquire(blocking=False):
        return

    def work() -> None:
        try:
            maintain(root, settings)
            atomic_write_text(marker, str(time.time()), mode=0o600)
        except Exception:
            logger.exception("checkpoint store maintenance failed")
        finally:
            _running.release()

    threading.Thread(target=work, name="checkpoint-maintenance", daemon=True).start()


def stores(root: Path) -> list[Path]:
    """Every project's store under `root` (`$HERMES_HOME/checkpoints`), and the shared one
    of earlier versions while it is there (not those set aside, nor one being built)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if "." not in p.name and is_store(p))


def maintain(root: Path, settings: Settings) -> dict[str, int]:
    """Enforce the size cap across projects, then gc each store. Returns what it did."""
    done = {"dropped": 0, "bytes_before": dir_size(root), "bytes_after": 0}
    cap = settings.max_total_size_mb * 1024 * 1024
    if cap and done["bytes_before"] > cap:
        done["dropped"] = _drop_oldest(root, done["bytes_before"] - cap)
    for store in stores(root):
        try:
            Git(store).run("gc", "--quiet", "--prune=1.hour.ago", timeout=600)
        except GitFailed as exc:
            logger.warning("checkpoint store %s gc failed: %s", store, exc.line)
    done["bytes_after"] = dir_size(root)
    return done


def _drop_oldest(root: Path, excess: int) -> int:
    """Drop the oldest checkpoints of all projects (each project keeps its newest) until
    about `excess` bytes are freed, judged by the share of the stores each one is."""
    projects = []
    for store in stores(root):
        path = store / "project.json"
        with locked(path):
            try:
                meta = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            projects.append((store, meta))
    every = sorted(
        (item[1], str(store), item[0])
        for store, meta in projects
        for item in sorted(meta.get("ids", []), key=lambda i: i[1])[:-1]
    )
    total = sum(len(meta.get("ids", [])) for _, meta in projects) or 1
    share = dir_size(root) / total
    chosen = every[: max(1, int(excess / max(share, 1)) + 1)]
    if not chosen:
        return 0
    gone: dict[str, set[str]] = {}
    for _, where, commit in chosen:
        gone.setdefault(where, set()).add(commit)
    for where, commits in gone.items():
        delete_refs(Git(Path(where)), [f"{REFS}{commit}" for commit in commits])
        path = Path(where) / "project.json"
        with locked(path):  # read again: a snapshot may have written it meanwhile
            try:
                meta = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            meta["ids"] = [i for i in meta.get("ids", []) if i[0] not in commits]
            atomic_write_text(path, json.dumps(meta), mode=0o600)
    return len(chosen)


def dir_size(path: Path) -> int:
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
