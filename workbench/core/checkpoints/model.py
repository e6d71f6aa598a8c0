"""The checkpoint types every front end reads (the contract in CHECKPOINTS_API.md)."""

from __future__ import annotations

from dataclasses import dataclass


class CheckpointError(Exception):
    """A checkpoint operation refused; str(exc) is a clear message and nothing was changed."""


class RestoreStopped(CheckpointError):
    """A restore that failed partway (a full disk): unlike its parent, some files were
    changed; str(exc) names those done and those not, and `backup` undoes what was done."""

    def __init__(self, message: str, backup_id: str, done: tuple[str, ...]) -> None:
        super().__init__(message)
        self.backup_id, self.done = backup_id, done


@dataclass(frozen=True)
class Checkpoint:
    id: str  # short commit id (12 hex), unique in the store
    cwd: str  # the working directory (real path)
    created: float  # epoch seconds
    reason: str  # what it preceded: "write_file src/app.py", "before restore of 3f2a..."
    session: str | None
    turn: int | None
    files: int  # files it holds


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to cwd, '/'-separated
    kind: str  # "added" (exists now, not in the checkpoint), "changed", "deleted"


@dataclass(frozen=True)
class Snapshot:
    checkpoint: Checkpoint | None  # None: nothing taken
    note: str  # "" when taken; else one line why not
    failed: bool = False


@dataclass(frozen=True)
class RestorePlan:
    checkpoint: Checkpoint
    writes: tuple[str, ...]  # files the restore writes back (changed or deleted since)
    deletes: tuple[str, ...]  # files the restore deletes (added since)
    # of writes+deletes: changed since by someone other than the agent (their content and
    # mode now are not what the agent's calls left, per the ledger): ask before overwriting
    hand_edited: tuple[str, ...]


@dataclass(frozen=True)
class RestoreResult:
    backup: Checkpoint | None  # the checkpoint of the state before the restore
    written: tuple[str, ...]
    deleted: tuple[str, ...]
    kept: tuple[str, ...]  # hand-edited files left alone because the person said so
    notes: tuple[str, ...] = ()  # what else to say: a setuid bit not set again, and why
