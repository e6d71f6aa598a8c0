"""Moving a project's checkpoints out of the one store earlier versions shared.

Before each project had its own store, all shared `checkpoints/store`: refs
`refs/hermes/<project>/<commit>`, and `projects/`, `ledgers/`, `indexes/` per project. A
damaged object there, or a set-aside, reached every project. The first time a project's
store is needed (a snapshot, a list, a restore), its checkpoints are fetched from the shared
store into a new one, with their metadata and ledger, before that store is put in place;
then they are deleted from the shared store, and the shared store itself once no project
is left in it. A project whose checkpoints cannot be fetched (the shared store is damaged)
starts with none, and its first snapshot says so; the shared store is left as it is.

Old checkpoints keep git's modes only (they have no data commit, see side.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.checkpoints.git import Git, GitFailed
from workbench.core.storage.atomic import atomic_write_text

LEGACY = "store"
OLD_REFS = "refs/hermes"
NOTE = "migration"  # the key of project.json that holds what the move said, once

logger = logging.getLogger(__name__)


def pending(root: Path, key: str) -> bool:
    """Whether the shared store still holds checkpoints of this project."""
    old = root / LEGACY
    return (old / "projects" / f"{key}.json").exists() or (old / OLD_REFS / key).is_dir()


def filler(root: Path, key: str) -> Callable[[Path], None]:
    """What fills a new store with the project's checkpoints from the shared store."""

    def fill(store: Path) -> None:
        old = root / LEGACY
        meta = _read(old / "projects" / f"{key}.json")
        try:
            Git(store).run(
                "fetch", "--no-tags", "--quiet", "--no-write-fetch-head", str(old),
                f"+{OLD_REFS}/{key}/*:refs/checkpoints/*", timeout=600,
            )  # fmt: skip
        except GitFailed as exc:
            logger.warning("checkpoints of %s not moved from %s: %s", key, old, exc.line)
            meta = {NOTE: f"its checkpoints in {old} could not be moved ({exc.line})"}
        else:
            meta = {k: v for k, v in meta.items() if k in ("cwd", "ids", "created", "head", "tree")}
            with contextlib.suppress(OSError):
                shutil.copyfile(old / "ledgers" / f"{key}.json", store / "ledger.json")
        atomic_write_text(store / "project.json", json.dumps(meta), mode=0o600)

    return fill


def forget(root: Path, key: str) -> None:
    """Delete the project's checkpoints from the shared store (now in its own store), and
    the shared store once it holds none."""
    old = root / LEGACY
    if _read(root / key / "project.json").get(NOTE):
        return  # not moved: what the shared store holds of it stays there
    try:
        git = Git(old)
        refs = git.text("for-each-ref", "--format=%(refname)", f"{OLD_REFS}/{key}/").split()
        if refs:
            lines = "".join(f"delete {ref}\n" for ref in refs)
            git.run("update-ref", "--stdin", stdin=lines.encode())
        left = git.text("for-each-ref", "--count=1", "--format=%(refname)", OLD_REFS).strip()
    except GitFailed as exc:
        logger.warning("could not delete the moved checkpoints from %s: %s", old, exc.line)
        return
    for sub, suffix in (("projects", ".json"), ("ledgers", ".json"), ("indexes", "")):
        with contextlib.suppress(OSError):
            (old / sub / f"{key}{suffix}").unlink()
    if not left and not any((old / "projects").glob("*.json")):
        shutil.rmtree(old, ignore_errors=True)
        logger.info("the shared checkpoint store %s is empty and was removed", old)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
