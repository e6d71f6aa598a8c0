"""Planning and running a restore, and a checkpoint's file against the file now.

A restore loses nothing: it first backs up the files it is about to write or delete, as
they are (the backup, itself a checkpoint, restorable), writes back or deletes only what the
plan lists, and leaves a file changed by hand since the checkpoint unless the person named it
in `overwrite`. It backs up nothing else, so it works whatever the tree has become (past the
caps, a nested repository): the caps decide what a new snapshot takes, never whether an old
one can be restored. Every target is checked before anything is written (a folder on the
way that leads outside the working directory refuses the whole restore); each file is
replaced atomically with the permission bits the checkpoint kept (side.py), and a symbolic
link is replaced, never followed.

A setuid or setgid bit is set again only on a file whose owner (or group) is the one it had:
a restored file belongs to whoever restores, and root restoring a user's setuid program would
otherwise make it run as root. The result says which bits were left off.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.checkpoints import compare, ledger, objects, prune, side
from workbench.core.checkpoints.compare import Change
from workbench.core.checkpoints.git import GitFailed
from workbench.core.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    RestorePlan,
    RestoreResult,
    RestoreStopped,
)
from workbench.core.checkpoints.scan import Stamp
from workbench.core.checkpoints.shadow import Project
from workbench.core.checkpoints.stage import LINK, git_mode
from workbench.core.edits import diffs
from workbench.core.storage.atomic import atomic_write_bytes, current_umask, locked

if TYPE_CHECKING:
    from workbench.core.checkpoints.store import CheckpointStore

EXECUTABLE = "100755"
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
BACKUP_LIMIT = 1 << 30  # a file larger than this cannot be backed up, so is not replaced


def plan(
    store: CheckpointStore,
    project: Project,
    checkpoint: Checkpoint,
    commit: str,
    wanted: list[str],
) -> RestorePlan:
    diff = store._diff(project, commit, wanted)
    for rel in wanted:
        prefix = rel.rstrip("/") + "/"
        matched = any(c.path == rel or c.path.startswith(prefix) for c in diff)
        if not matched and not _known(project, commit, rel):
            raise CheckpointError(
                f"{rel} is not in checkpoint {checkpoint.id} and does not exist now"
            )
    writes = tuple(c.path for c in diff if c.kind != "added")
    deletes = tuple(c.path for c in diff if c.kind == "added")
    return RestorePlan(checkpoint, writes, deletes, _hand_edited(project, diff))


def _known(project: Project, commit: str, rel: str) -> bool:
    if os.path.lexists(os.path.join(project.cwd, rel)):
        return True
    out = project.git().run("--literal-pathspecs", "ls-tree", commit, "--", rel).stdout
    return bool(out.strip())


def _hand_edited(project: Project, diff: Sequence[Change]) -> tuple[str, ...]:
    """The files the restore would overwrite or delete whose content and mode now the
    agent did not leave (the ledger): someone changed them by hand; the person is asked."""
    entries = ledger.load(project.ledger_path)
    hand = []
    for change in diff:
        if change.kind == "deleted":  # gone per the store, yet there: left out of snapshots now
            if os.path.lexists(os.path.join(project.cwd, change.path)):
                hand.append(change.path)
        elif not ledger.agent_wrote(entries, change.path, change.seen):
            hand.append(change.path)
    return tuple(sorted(hand))


def restore(
    store: CheckpointStore,
    project: Project,
    plan: RestorePlan,
    commit: str,
    overwrite: Collection[str],
) -> RestoreResult:
    hand = set(plan.hand_edited)
    writes = [p for p in plan.writes if p not in hand or p in overwrite]
    deletes = [p for p in plan.deletes if p not in hand or p in overwrite]
    kept = tuple(p for p in plan.hand_edited if p not in overwrite)
    if not writes and not deletes:
        return RestoreResult(None, (), (), kept)
    done: list[str] = []
    notes: list[str] = []
    with locked(project.meta_path):
        held = compare.listing(project, commit, writes) if writes else {}
        data = store._side(project, commit, held)
        contents = _contents(store, project, held, writes)
        for rel in [*writes, *deletes]:
            _check_target(project.cwd, rel)
        for rel in writes:
            _check_folders(project.cwd, rel, set(deletes))
        try:
            backup = _backup(store, project, plan.checkpoint, [*writes, *deletes])
        except OSError as exc:
            what = "the disk is full" if exc.errno in _FULL else (exc.strerror or str(exc))
            raise CheckpointError(
                f"{what}: no backup could be taken; nothing was restored"
            ) from exc
        # deletes first: a file where the checkpoint has a folder goes before the folder's
        # files are written back
        try:
            for rel in deletes:
                _delete(project.cwd, rel)
                done.append(rel)
            for rel in writes:
                mode, blob = contents[rel]
                bits = data.mode(rel, mode) if data is not None else None
                owner = data.owners.get(rel) if data is not None else None
                notes += _write(project.cwd, rel, mode, blob, bits, owner)
                done.append(rel)
        except OSError as exc:
            _record(project, done)
            raise _stopped(exc, backup, done, [*deletes, *writes]) from exc
    _record(project, done)
    return RestoreResult(backup, tuple(writes), tuple(deletes), kept, tuple(notes))


def _backup(
    store: CheckpointStore, project: Project, checkpoint: Checkpoint, touched: list[str]
) -> Checkpoint:
    """A checkpoint of the files the restore is about to write or delete, as they are now
    (those not there now are in its scope and not in its tree: restoring it deletes them).
    The caller holds the project's lock. Nothing is restored if one cannot be held."""
    lines, stamps = [], {}
    for rel in touched:
        full = os.path.join(project.cwd, rel)
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):  # not there (a file on its way)
            continue
        read = objects.read(full, BACKUP_LIMIT)
        if read is None:
            raise CheckpointError(
                f"{rel} cannot be read (or is over {BACKUP_LIMIT >> 30} GB), so no backup "
                "could hold it; nothing was restored"
            )
        oid = objects.write_blob(project.store, read[0])
        lines.append(f"{LINK if read[1] else git_mode(info.st_mode)} {oid}\t{rel}")
        stamps[rel] = Stamp(
            info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode,
            info.st_uid, info.st_gid,
        )  # fmt: skip
    tree = _tree_of(project, lines)
    data = side.encode(side.from_stamps(stamps, scope=tuple(sorted(touched))))
    parent = side.write(project.git(), data)
    meta = project.meta()
    reason = f"before restore of {checkpoint.id}"
    backup = store._commit(project, meta, tree, parent, reason, None, None, len(lines))
    prune.retain(project, meta, store.settings, backup.created)
    project.save_meta(meta)
    return backup


def _tree_of(project: Project, lines: list[str]) -> str:
    """The tree of just these index lines, from an index of their own."""
    fd, name = tempfile.mkstemp(prefix="index.backup-", dir=project.store)
    os.close(fd)
    index = Path(name)
    index.unlink()  # git makes it
    try:
        git = project.git(index)
        if lines:
            stdin = b"".join(os.fsencode(line) + b"\0" for line in lines)
            git.run("update-index", "-z", "--index-info", stdin=stdin)
        return git.text("write-tree").strip()
    finally:
        with contextlib.suppress(OSError):
            index.unlink()


def _record(project: Project, done: list[str]) -> None:
    """What the restore left is hermes-tui's doing, not a hand edit: restoring the backup
    (undoing this restore) must not take it for the person's work and keep it."""
    left = {rel: ledger.now(os.path.join(project.cwd, rel)) for rel in done}
    ledger.record(project.ledger_path, left)


def _stopped(
    exc: OSError, backup: Checkpoint, done: list[str], planned: list[str]
) -> RestoreStopped:
    what = "the disk is full" if exc.errno in _FULL else (exc.strerror or str(exc))
    left = sorted(p for p in planned if p not in done)
    message = (
        f"the restore stopped at {left[0]}: {what}; "
        f"restored {', '.join(sorted(done)) or 'nothing'}; not restored {', '.join(left)}; "
        f"undo with: hermes-tui checkpoints restore {backup.id} --cwd {shlex.quote(backup.cwd)}"
    )
    return RestoreStopped(message, backup.id, tuple(done))


def _contents(
    store: CheckpointStore,
    project: Project,
    held: dict[str, tuple[str, str]],
    paths: list[str],
) -> dict[str, tuple[str, bytes]]:
    """path → (git mode, bytes) as the checkpoint holds it (one git process)."""
    missing = [p for p in paths if p not in held]
    if missing:
        raise CheckpointError(f"the checkpoint does not hold {', '.join(missing[:5])}")
    if not paths:
        return {}
    oids = [held[p][1] for p in paths]
    try:
        raw = (
            project.git()
            .run("cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode())
            .stdout
        )
        result, at = {}, 0
        for path in paths:
            end = raw.index(b"\n", at)
            fields = raw[at:end].split()
            if len(fields) != 3:  # "<oid> missing": the store lost an object
                raise GitFailed(["cat-file"], 128, f"missing object {fields[0].decode()}")
            size = int(fields[2])
            result[path] = (held[path][0], raw[end + 1 : end + 1 + size])
            at = end + 1 + size + 1
    except GitFailed as exc:
        raise CheckpointError(
            store._damaged(project, exc, oids) + "; nothing was restored"
        ) from exc
    return result


def _check_target(cwd: str, rel: str) -> None:
    full = os.path.join(cwd, rel)
    parent = os.path.realpath(os.path.dirname(full))
    if parent != cwd and not parent.startswith(cwd.rstrip("/") + "/"):
        raise CheckpointError(
            f"{rel}: a folder on its way now leads outside {cwd} (to {parent}); "
            "nothing was restored"
        )
    if any(part.lower() == ".git" for part in rel.split("/")):
        raise CheckpointError(f"{rel}: a restore never writes into a git folder")
    if os.path.isdir(full) and not os.path.islink(full):
        raise CheckpointError(f"{rel} is a folder now; nothing was restored")


def _check_folders(cwd: str, rel: str, deletes: Collection[str]) -> None:
    """Each folder on the way to `rel` is a folder now, or a file the restore deletes first."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        full = os.path.join(cwd, folder)
        if os.path.lexists(full) and not os.path.isdir(full) and folder not in deletes:
            raise CheckpointError(
                f"{folder} is a file now where checkpoint has the folder of {rel} (kept as "
                "changed by hand: overwrite it, or restore other files with --file); "
                "nothing was restored"
            )


def _write(
    cwd: str, rel: str, mode: str, data: bytes, bits: int | None,
    owner: tuple[int, int] | None,
) -> list[str]:  # fmt: skip
    """Write one file back; what is worth saying about its bits (none to say: [])."""
    full = os.path.join(cwd, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if mode == LINK:
        temp = f"{full}.restore-{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        os.symlink(os.fsdecode(data), temp)
        os.replace(temp, full)
        return []
    if bits is None:  # a checkpoint of an earlier version: git's modes only
        try:
            info = os.lstat(full)
            bits = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
        except FileNotFoundError:
            bits = None
        if bits is None:
            bits = (0o777 if mode == EXECUTABLE else 0o666) & ~current_umask()
        atomic_write_bytes(full, data, bits)
        return []
    allowed, notes = _special_bits(full, rel, bits, owner)
    atomic_write_bytes(full, data, (bits & ~side.SPECIAL) | allowed)
    return notes


def _special_bits(
    full: str, rel: str, bits: int, owner: tuple[int, int] | None
) -> tuple[int, list[str]]:
    """Of the setuid and setgid bits `rel` had, those it may have again: the file written
    back belongs to this process's user (and to its group, or the folder's when the folder
    is setgid), so a bit is set only where that owner is the one the file had."""
    if not bits & side.SPECIAL:
        return 0, []
    uid = os.geteuid()
    folder = os.stat(os.path.dirname(full))
    gid = folder.st_gid if folder.st_mode & stat.S_ISGID else os.getegid()
    allowed, notes = 0, []
    for bit, name, mine, theirs in (
        (stat.S_ISUID, "setuid", uid, owner[0] if owner else None),
        (stat.S_ISGID, "setgid", gid, owner[1] if owner else None),
    ):
        if not bits & bit:
            continue
        if theirs == mine:
            allowed |= bit
        else:
            who = "uid" if bit == stat.S_ISUID else "gid"
            notes.append(
                f"{rel}: restored without its {name} bit (it belonged to {who} {theirs}, "
                f"the file written back to {who} {mine})"
            )
    return allowed, notes


def _delete(cwd: str, rel: str) -> None:
    full = os.path.join(cwd, rel)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(full)
    parent = os.path.dirname(full)
    while parent != cwd and parent.startswith(cwd):  # folders the restore emptied
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)


def file_diff(
    project: Project,
    commit: str,
    rel: str,
    data: side.Side | None,
    held: tuple[str, str] | None,
) -> diffs.FileDiff:
    done = project.git().run("cat-file", "-p", f"{commit}:{rel}", ok=(0, 128))
    old = done.stdout if done.returncode == 0 else None
    new = _read_now(os.path.join(project.cwd, rel))
    if old is None and new is None:
        raise CheckpointError(
            f"{rel} is neither in checkpoint {commit[:12]} nor in the working directory"
        )
    shown = _compared(rel, old, new)
    moved = _mode_line(project, rel, data, held)
    if not moved:
        return shown
    if old == new:
        return diffs.FileDiff(rel, note=f"{moved}, content unchanged")
    if shown.note:
        return diffs.FileDiff(rel, created=shown.created, note=f"{moved}; {shown.note}")
    return diffs.FileDiff(
        rel, (moved, *shown.lines), shown.added, shown.removed, shown.more, shown.created
    )


def _mode_line(
    project: Project, rel: str, data: side.Side | None, held: tuple[str, str] | None
) -> str:
    """`mode 0644 → 0600` when the file's bits differ from the checkpoint's, else ""."""
    if held is None:
        return ""
    try:
        info = os.lstat(os.path.join(project.cwd, rel))
    except OSError:
        return ""
    stamp = Stamp(info.st_size, 0, 0, 0, info.st_mode, info.st_uid, info.st_gid)
    old, new = compare.modes(data, rel, held[0], stamp)
    return (
        f"mode {old:04o} → {new:04o}" if old is not None and new is not None and old != new else ""
    )


def _compared(rel: str, old: bytes | None, new: bytes | None) -> diffs.FileDiff:
    too_large = max(len(old or b""), len(new or b"")) > diffs.MAX_COMPARED
    if too_large:
        return diffs.FileDiff(rel, created=old is None, note="too large to show a diff")
    try:
        old_text = old.decode("utf-8") if old is not None else None
        new_text = new.decode("utf-8") if new is not None else ""
    except UnicodeDecodeError:
        return diffs.FileDiff(rel, created=old is None, note="binary file: no diff")
    if "\0" in (old_text or "") or "\0" in new_text:
        return diffs.FileDiff(rel, created=old is None, note="binary file: no diff")
    return diffs.unified(rel, old_text, new_text)


def _read_now(path: str) -> bytes | None:
    try:
        if os.path.islink(path):
            return os.fsencode(os.readlink(path))
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            return handle.read(diffs.MAX_COMPARED + 1)
    except OSError:
        return None
