"""Planning and running a restore, and a checkpoint's file against the file now.

A restore loses nothing: it first snapshots the working directory as it is (the backup,
itself restorable), writes back or deletes only what the plan lists, and leaves a file
changed by hand since the checkpoint unless the person named it in `overwrite`. Every
target is checked before anything is written (a folder on the way that leads outside the
working directory refuses the whole restore); each file is replaced atomically keeping its
permission bits, and a symbolic link is replaced, never followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
from collections.abc import Collection
from typing import TYPE_CHECKING

from workbench.core.checkpoints import ledger
from workbench.core.checkpoints.git import GitFailed
from workbench.core.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    RestorePlan,
    RestoreResult,
    RestoreStopped,
)
from workbench.core.checkpoints.shadow import Project
from workbench.core.edits import diffs
from workbench.core.storage.atomic import atomic_write_bytes, current_umask, locked

if TYPE_CHECKING:
    from workbench.core.checkpoints.store import CheckpointStore

LINK, EXECUTABLE = "120000", "100755"


def plan(
    store: CheckpointStore,
    project: Project,
    checkpoint: Checkpoint,
    commit: str,
    wanted: list[str],
) -> RestorePlan:
    quick = _quick_diff(project, commit, wanted) if wanted else None
    diff = quick if quick is not None else store._diff(project, commit)
    if wanted and quick is None:
        chosen = []
        for rel in wanted:
            matched = [d for d in diff if d[0] == rel or d[0].startswith(rel.rstrip("/") + "/")]
            if not matched and not _known(project, commit, rel):
                raise CheckpointError(
                    f"{rel} is not in checkpoint {checkpoint.id} and does not exist now"
                )
            chosen += [d for d in matched if d not in chosen]
        diff = chosen
    writes = tuple(p for p, kind, _ in diff if kind != "added")
    deletes = tuple(p for p, kind, _ in diff if kind == "added")
    return RestorePlan(checkpoint, writes, deletes, _hand_edited(project, diff))


def _quick_diff(
    project: Project, commit: str, wanted: list[str]
) -> list[tuple[str, str, str]] | None:
    """The named files' changes without staging the whole tree: each checkpoint blob
    against the file's blob now. None when one is not a plain case (a folder, or a file the
    checkpoint does not hold: whether snapshots leave it out takes the whole walk)."""
    out = (
        project.git()
        .run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--", *wanted)
        .stdout
    )
    held = {}
    for record in out.split(b"\0"):
        if b"\t" in record:
            head, name = record.split(b"\t", 1)
            _, kind, oid = head.decode().split()
            if kind != "blob":
                return None
            held[os.fsdecode(name)] = oid
    found = []
    for rel in wanted:
        full = os.path.join(project.cwd, rel)
        if rel not in held or (os.path.isdir(full) and not os.path.islink(full)):
            return None
        now = ledger.blob_id(full) if os.path.lexists(full) else None
        if now is None and os.path.lexists(full):
            return None  # there but unreadable: the whole walk says what it is
        if now != held[rel]:
            found.append((rel, "deleted" if now is None else "changed", now or "0" * 40))
    return sorted(found)


def _known(project: Project, commit: str, rel: str) -> bool:
    if os.path.lexists(os.path.join(project.cwd, rel)):
        return True
    out = project.git().run("--literal-pathspecs", "ls-tree", commit, "--", rel).stdout
    return bool(out.strip())


def _hand_edited(project: Project, diff: list[tuple[str, str, str]]) -> tuple[str, ...]:
    """The files the restore would overwrite or delete whose content now the agent did not
    write (the ledger): someone changed them by hand, or a program the executor could not
    follow did; either way the person is asked."""
    entries = ledger.load(project.ledger_path)
    hand = []
    for path, kind, blob in diff:
        if kind == "deleted":  # gone per the store, yet there: left out of snapshots now
            if os.path.lexists(os.path.join(project.cwd, path)):
                hand.append(path)
        elif not ledger.agent_wrote(entries, path, blob):
            hand.append(path)
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
    taken = store.take(project.cwd, reason=f"before restore of {plan.checkpoint.id}")
    if taken.commit is None:
        raise CheckpointError(
            f"no backup of {project.cwd} could be taken ({taken.snapshot.note}); "
            "nothing was restored"
        )
    backup = taken.snapshot.checkpoint or store._get(project, taken.commit[:12])[0]
    done: list[str] = []
    with locked(project.meta_path):
        contents = _contents(project, commit, writes)
        for rel in [*writes, *deletes]:
            _check_target(project.cwd, rel)
        for rel in writes:
            _check_folders(project.cwd, rel, set(deletes))
        # deletes first: a file where the checkpoint has a folder goes before the folder's
        # files are written back
        try:
            for rel in deletes:
                _delete(project.cwd, rel)
                done.append(rel)
            for rel in writes:
                mode, data = contents[rel]
                _write(project.cwd, rel, mode, data)
                done.append(rel)
        except OSError as exc:
            _record(project, done)
            raise _stopped(exc, backup, done, [*deletes, *writes]) from exc
    _record(project, done)
    return RestoreResult(backup, tuple(writes), tuple(deletes), kept)


def _record(project: Project, done: list[str]) -> None:
    """What the restore left is hermes-tui's doing, not a hand edit: restoring the backup
    (undoing this restore) must not take it for the person's work and keep it."""
    for rel in done:
        full = os.path.join(project.cwd, rel)
        ledger.record(
            project.ledger_path, rel, ledger.blob_id(full) if os.path.lexists(full) else None
        )


def _stopped(
    exc: OSError, backup: Checkpoint, done: list[str], planned: list[str]
) -> RestoreStopped:
    what = (
        "the disk is full"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
        else (exc.strerror or str(exc))
    )
    left = sorted(p for p in planned if p not in done)
    message = (
        f"the restore stopped at {left[0]}: {what}; "
        f"restored {', '.join(sorted(done)) or 'nothing'}; not restored {', '.join(left)}; "
        f"undo with: hermes-tui checkpoints restore {backup.id} --cwd {shlex.quote(backup.cwd)}"
    )
    return RestoreStopped(message, backup.id, tuple(done))


def _contents(project: Project, commit: str, paths: list[str]) -> dict[str, tuple[str, bytes]]:
    """path → (git mode, bytes) as the checkpoint holds it (two git processes)."""
    if not paths:
        return {}
    git = project.git()
    out = git.run(
        "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths
    ).stdout
    entries = {}
    for record in out.split(b"\0"):
        if b"\t" in record:
            head, name = record.split(b"\t", 1)
            mode, _, oid = head.decode().split()
            entries[os.fsdecode(name)] = (mode, oid)
    missing = [p for p in paths if p not in entries]
    if missing:
        raise CheckpointError(f"checkpoint {commit[:12]} does not hold {', '.join(missing[:5])}")
    asked = "".join(f"{entries[p][1]}\n" for p in paths).encode()
    raw = git.run("cat-file", "--batch", stdin=asked).stdout
    result, at = {}, 0
    for path in paths:
        end = raw.index(b"\n", at)
        fields = raw[at:end].split()
        if len(fields) != 3:  # "<oid> missing": the store lost an object
            raise GitFailed(["cat-file"], 128, f"missing object {fields[0].decode()}")
        size = int(fields[2])
        result[path] = (entries[path][0], raw[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return result


def _check_target(cwd: str, rel: str) -> None:
    full = os.path.join(cwd, rel)
    parent = os.path.realpath(os.path.dirname(full))
    if parent != cwd and not parent.startswith(cwd.rstrip("/") + "/"):
        raise CheckpointError(
            f"{rel}: a folder on its way now leads outside {cwd} (to {parent}); "
            "nothing was restored"
        )
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


def _write(cwd: str, rel: str, mode: str, data: bytes) -> None:
    full = os.path.join(cwd, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if mode == LINK:
        temp = f"{full}.restore-{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        os.symlink(os.fsdecode(data), temp)
        os.replace(temp, full)
        return
    try:
        info = os.lstat(full)
        keep = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    except FileNotFoundError:
        keep = None
    if keep is None:
        keep = (0o777 if mode == EXECUTABLE else 0o666) & ~current_umask()
    atomic_write_bytes(full, data, keep)


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


def file_diff(project: Project, commit: str, rel: str) -> diffs.FileDiff:
    done = project.git().run("cat-file", "-p", f"{commit}:{rel}", ok=(0, 128))
    old = done.stdout if done.returncode == 0 else None
    new = _read_now(os.path.join(project.cwd, rel))
    if old is None and new is None:
        raise CheckpointError(
            f"{rel} is neither in checkpoint {commit[:12]} nor in the working directory"
        )
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
