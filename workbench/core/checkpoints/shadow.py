"""The stores' layout on disk, their creation, their check, and setting a damaged one aside.

    $HERMES_HOME/checkpoints/
        <project>/                       the project's own git store (0700)
            config, objects/, info/          hooks, signing, reflogs, auto-gc off; no filters
            refs/checkpoints/<commit>        one ref per checkpoint
            index                            the index its snapshots are written from
            files.json                       the stat cache: each file's stat and blob
            project.json                     its metadata (atomic writes)
            ledger.json                      what the agent wrote (see ledger.py)
        <project>.damaged-<time>-<pid>/  a store found damaged, set aside
        store/                           the one store earlier versions shared, until every
                                         project in it has moved (see migrate.py)

A project is the real path of its working directory; its key is a hash of that path. Each
has its own store so that nothing one project does (a file it holds, a store it damages, a
set-aside) reaches another's checkpoints.

A store is damaged only when the store itself says so (`damage`), never because a git
command failed with some message: a project's file names appear in git's messages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.checkpoints.git import Git, GitFailed
from workbench.core.checkpoints.scan import exclude_file_text
from workbench.core.checkpoints.side import EMPTY_TREE
from workbench.core.storage.atomic import atomic_write_text
from workbench.core.storage.private import private_dir

logger = logging.getLogger(__name__)

REFS = "refs/checkpoints/"
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
    ("receive.denyCurrentBranch", "ignore"),
    # names a Linux project may hold (`git~1`, `a.`): the restore writes files itself, so
    # git's guards for checkouts on Windows and macOS would only leave them out
    ("core.protectNTFS", "false"),
    ("core.protectHFS", "false"),
)
DAMAGED = "DAMAGED"  # a marker in a store: a read found it damaged


def project_key(cwd: str) -> str:
    return hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass(frozen=True)
class Project:
    root: Path  # $HERMES_HOME/checkpoints
    cwd: str  # real path
    key: str

    @property
    def store(self) -> Path:
        return self.root / self.key

    @property
    def index(self) -> Path:
        return self.store / "index"

    @property
    def cache_path(self) -> Path:
        return self.store / "files.json"

    @property
    def meta_path(self) -> Path:
        return self.store / "project.json"

    @property
    def ledger_path(self) -> Path:
        return self.store / "ledger.json"

    def git(self, index: Path | None = None) -> Git:
        return Git(self.store, self.cwd, index or self.index)

    def meta(self) -> dict[str, Any]:
        try:
            data = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_meta(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.meta_path, json.dumps(data), mode=0o600)


def is_store(store: Path) -> bool:
    return (store / "HEAD").is_file() and (store / "objects").is_dir()


def init_store(store: Path, fill: Callable[[Path], None] | None = None) -> None:
    """Create the store if it is missing (raises GitFailed or OSError when it cannot). It
    is built under another name and renamed into place whole, after `fill` (a migration)
    ran on it: another process sees no store, or a complete one."""
    if is_store(store):
        return
    private_dir(store.parent)
    building = Path(tempfile.mkdtemp(prefix=f"{store.name}.new-", dir=store.parent))
    try:
        _build(building)
        if fill is not None:
            fill(building)
        try:
            os.rename(building, store)
        except OSError:
            if not is_store(store):  # not another process having made it meanwhile
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _build(store: Path) -> None:
    store.chmod(0o700)
    git = Git(store)
    git.run("init", "-q", "--bare", str(store))
    # a work tree is given per call (GIT_WORK_TREE): the store itself is not bare in use
    for key, value in (("core.bare", "false"), *STORE_CONFIG):
        git.run("config", key, value)
    for sub in ("hooks-none", "info"):
        private_dir(store / sub)
    with contextlib.suppress(OSError):  # git's sample hooks: nothing here runs them
        for sample in (store / "hooks").iterdir():
            sample.unlink()
    atomic_write_text(store / "info" / "exclude", exclude_file_text(), mode=0o600)
    atomic_write_text(store / "info" / "attributes", ATTRIBUTES, mode=0o600)
    # the tree of each checkpoint's data commit (see side.py)
    if git.text("mktree", stdin=b"").strip() != EMPTY_TREE:
        raise GitFailed(["mktree"], 1, "the empty tree is not the one expected")


def damage(store: Path, objects: Collection[str] = ()) -> str:
    """ "" when the store is sound, else what is wrong with it, read from the store alone:
    its layout, its config, its refs, every commit and tree a checkpoint reaches with the
    blobs they name (`git fsck --connectivity-only`), and the `objects` a failed command
    read, each read whole. Refs whose commit is gone while others remain (what an
    interrupted gc leaves) are deleted first: those checkpoints hold nothing any more, the
    others stay. Run only after a command failed."""
    if not is_store(store):
        return f"{store} is not a checkpoint store (no HEAD or objects)"
    git = Git(store)
    try:
        git.run("rev-parse", "--git-dir")
        lost = _drop_lost_refs(git)
        if lost:
            return lost
        git.run("fsck", "--connectivity-only", "--no-dangling", "--no-progress",
                "--no-reflogs", timeout=600)  # fmt: skip
        if objects:
            asked = "".join(f"{oid}\n" for oid in objects).encode()
            out = git.run("cat-file", "--batch", stdin=asked).stdout
            if b" missing\n" in out:
                return "an object a checkpoint holds is missing"
    except GitFailed as exc:
        return exc.line
    return ""


def _drop_lost_refs(git: Git) -> str:
    listed = git.text("for-each-ref", "--format=%(objectname) %(refname)", REFS)
    refs = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
    if not refs:
        return ""
    asked = "".join(f"{oid}\n" for oid in refs).encode()
    found = git.run("cat-file", "--batch-check", stdin=asked).stdout.decode()
    lost = {line.split()[0] for line in found.splitlines() if line.endswith(" missing")}
    if lost and len(lost) == len(refs):
        return "the commit of every checkpoint is missing"
    if lost:
        lines = "".join(f"delete {refs[oid]}\n" for oid in lost)
        git.run("update-ref", "--stdin", stdin=lines.encode())
        logger.warning("dropped %d checkpoint(s) whose commits are missing", len(lost))
    return ""


def set_aside(store: Path) -> Path | None:
    """Move a damaged store out of the way; the next snapshot starts a new one."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = store.with_name(f"{store.name}.damaged-{stamp}-{os.getpid()}")
    try:
        os.replace(store, target)
    except OSError:
        return None
    return target
