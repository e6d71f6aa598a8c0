"""The shadow store's layout on disk, its creation, and setting a damaged one aside.

    $HERMES_HOME/checkpoints/store/          one git store (0700), objects shared
        config, objects/, info/exclude          hooks, signing, reflogs, auto-gc off
        info/attributes                         no filters or line-end conversion: bytes
        refs/hermes/<project>/<commit>          one ref per checkpoint
        indexes/<project>                       each project's own index (git's stat cache)
        projects/<project>.json                 the project's metadata (atomic writes)
        ledgers/<project>.json                  what the agent wrote (see ledger.py)
    $HERMES_HOME/checkpoints/store.damaged-<time>/   a store found damaged, set aside

A project is the real path of its working directory; its key is a hash of that path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.checkpoints.git import Git, GitFailed
from workbench.core.checkpoints.scan import exclude_file_text
from workbench.core.storage.atomic import atomic_write_text
from workbench.core.storage.private import private_dir

REFS = "refs/hermes"
# No conversion of any kind between the working tree and the store: a restore writes back
# the exact bytes, whatever the project's own .gitattributes ask for.
ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"
STORE_CONFIG = (
    ("core.hooksPath", "hooks-none"),  # an empty folder: no hook ever runs
    # git reads ~/.config/git/ignore and attributes whatever GIT_CONFIG_GLOBAL says
    ("core.excludesFile", os.devnull),
    ("core.attributesFile", os.devnull),
    ("core.logAllRefUpdates", "false"),  # no reflog keeps pruned checkpoints alive
    ("core.untrackedCache", "true"),
    ("core.looseCompression", "1"),  # a turn zips fast; gc packs the store tighter later
    ("core.fsmonitor", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.quotePath", "false"),
    ("core.symlinks", "true"),
    ("core.fileMode", "true"),
    ("index.version", "4"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),  # gc runs when pruning, not in the middle of a turn
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
    ("receive.denyCurrentBranch", "ignore"),
)


def project_key(cwd: str) -> str:
    return hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass(frozen=True)
class Project:
    store: Path
    cwd: str  # real path
    key: str

    @property
    def index(self) -> Path:
        return self.store / "indexes" / self.key

    @property
    def meta_path(self) -> Path:
        return self.store / "projects" / f"{self.key}.json"

    @property
    def ledger_path(self) -> Path:
        return self.store / "ledgers" / f"{self.key}.json"

    @property
    def refs(self) -> str:
        return f"{REFS}/{self.key}/"

    def git(self, index: Path | None = None) -> Git:
        return Git(self.store, self.cwd, index or self.index)

    def meta(self) -> dict[str, Any]:
        try:
            data = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_meta(self, data: dict[str, Any]) -> None:
        private_dir(self.meta_path.parent)
        atomic_write_text(self.meta_path, json.dumps(data), mode=0o600)


def is_store(store: Path) -> bool:
    return (store / "HEAD").is_file() and (store / "objects").is_dir()


def init_store(store: Path) -> None:
    """Create the store if it is missing (raises GitFailed or OSError when it cannot)."""
    if is_store(store):
        return
    private_dir(store.parent)
    private_dir(store)
    git = Git(store)
    git.run("init", "-q", "--bare", str(store))
    # a work tree is given per call (GIT_WORK_TREE): the store itself is not bare in use
    pairs = (("core.bare", "false"), *STORE_CONFIG)
    for key, value in pairs:
        git.run("config", key, value)
    for sub in ("hooks-none", "indexes", "projects", "ledgers", "info"):
        private_dir(store / sub)
    with contextlib.suppress(OSError):  # git's sample hooks: nothing here runs them
        for sample in (store / "hooks").iterdir():
            sample.unlink()
    atomic_write_text(store / "info" / "exclude", exclude_file_text(), mode=0o600)
    atomic_write_text(store / "info" / "attributes", ATTRIBUTES, mode=0o600)


def check_store(store: Path) -> str:
    """ "" when the store looks sound, else what is wrong (a light fsck: HEAD resolves,
    the config reads, the object folder is there)."""
    if not store.exists():
        return ""
    if not is_store(store):
        return f"{store} is not a checkpoint store (no HEAD or objects)"
    try:
        Git(store).run("rev-parse", "--git-dir")
    except GitFailed as exc:
        return exc.line
    return ""


def set_aside(store: Path) -> Path | None:
    """Move a damaged store out of the way; the next snapshot starts a new one."""
    target = store.with_name(f"store.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(store, target)
    except OSError:
        return None
    return target
