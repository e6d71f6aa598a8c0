"""What differs between a checkpoint and the working directory now: content, kind and mode.

The checkpoint's side is its tree (`git ls-tree`) and its data (side.py: the files' exact
permission bits, and, for a restore's backup, the paths it covers); the working directory's
side is a walk staged as a snapshot would be, without writing anything (stage.py), or, for
named files the checkpoint holds, just those files. A file whose bits differ from those the
checkpoint kept is changed, even when its bytes are the same.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from workbench.core.checkpoints import ledger, objects
from workbench.core.checkpoints.scan import Stamp
from workbench.core.checkpoints.shadow import Project
from workbench.core.checkpoints.side import Side
from workbench.core.checkpoints.stage import LINK, git_mode

GITLINK = "160000"  # a nested repository's commit, in checkpoints of earlier versions


class Change(NamedTuple):
    path: str
    kind: str  # "added" (exists now, not in the checkpoint), "changed", "deleted"
    seen: str | None  # the file now as the ledger sees it (ledger.seen); None: not there


class Now(NamedTuple):
    """The working directory's files as a snapshot would hold them now, and their stat."""

    files: Mapping[str, tuple[str, str]]  # path → (git mode, blob)
    stamps: Mapping[str, Stamp]


def listing(project: Project, commit: str, paths: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
    """path → (mode, object) of what the checkpoint holds (of `paths`, when given)."""
    args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit]
    out = project.git().run(*args, *(["--", *paths] if paths else [])).stdout
    held = {}
    for record in out.split(b"\0"):
        if b"\t" in record:
            head, name = record.split(b"\t", 1)
            mode, _, oid = head.decode().split()
            held[os.fsdecode(name)] = (mode, oid)
    return held


def named(
    project: Project, held: Mapping[str, tuple[str, str]], wanted: Sequence[str]
) -> Now | None:
    """The named files now, without a walk; None when one is not a plain case (a folder,
    a file the checkpoint does not hold: whether snapshots leave it out takes the walk, or
    one there but unreadable)."""
    files, stamps = {}, {}
    for rel in wanted:
        full = os.path.join(project.cwd, rel)
        if rel not in held or held[rel][0] == GITLINK:
            return None
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):  # not there (a file on its way)
            continue
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode):
            return None
        read = objects.read(full, ledger.MAX_HASHED)
        if read is None:
            return None
        files[rel] = (LINK if read[1] else git_mode(info.st_mode), objects.blob_id(read[0]))
        stamps[rel] = Stamp(
            info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode,
            info.st_uid, info.st_gid,
        )  # fmt: skip
    return Now(files, stamps)


def differences(
    held: Mapping[str, tuple[str, str]],
    side: Side | None,
    now: Now,
    wanted: Sequence[str] = (),
) -> list[Change]:
    """Each path that differs, sorted. A partial checkpoint (a backup) is compared on the
    paths it covers only; `wanted` narrows to those paths and what is under them."""
    paths = set(side.scope) if side is not None and side.scope is not None else {*held, *now.files}
    if wanted:
        prefixes = tuple(f"{w.rstrip('/')}/" for w in wanted)
        paths = {p for p in paths if p in wanted or p.startswith(prefixes)}
    found = []
    for path in sorted(paths):
        old, new = held.get(path), now.files.get(path)
        if old is not None and old[0] == GITLINK:
            continue  # nothing of a nested repository's files is held there
        seen = ledger.seen(new[1], now.stamps[path].mode) if new is not None else None
        if old is None and new is not None:
            found.append(Change(path, "added", seen))
        elif new is None and old is not None:
            found.append(Change(path, "deleted", None))
        elif (old is not None and new is not None) and (
            old != new or _bits_differ(side, path, old[0], now.stamps[path])
        ):
            found.append(Change(path, "changed", seen))
    return found


def modes(
    side: Side | None, path: str, git_mode_held: str, stamp: Stamp | None
) -> tuple[int | None, int | None]:
    """(the bits the checkpoint kept, the bits now) of one file; None where not known."""
    old = side.mode(path, git_mode_held) if side is not None else None
    new = stat.S_IMODE(stamp.mode) if stamp is not None and stat.S_ISREG(stamp.mode) else None
    return old, new


def _bits_differ(side: Side | None, path: str, git_mode_held: str, stamp: Stamp) -> bool:
    old, new = modes(side, path, git_mode_held, stamp)
    return old is not None and new is not None and old != new
