"""How the front ends say checkpoints: one wording for the CLI, `chat` and the session screen.

In the core because both front ends use it (no Textual here). File names and reasons come from the working
directory and the model: everything shown goes through `escape`, so a name cannot redraw a
terminal.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from workbench.core.printable import escape

if TYPE_CHECKING:
    from workbench.core.checkpoints import Checkpoint, FileChange, RestoreResult

KINDS = ("added", "changed", "deleted")
HOW_TO_ENABLE = "set `checkpoints.enabled: true` in $HERMES_HOME/config.yaml"
WHEN_TAKEN = "one is taken before the first change to files in a turn, and before a call by hand"


def when(created: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created))


def turn(checkpoint: Checkpoint) -> str:
    """`turn 3`, or "" for one taken outside a turn (a call by hand, before a restore)."""
    return f"turn {checkpoint.turn}" if checkpoint.turn is not None else ""


def files(count: int) -> str:
    return f"{count:,} file" + ("" if count == 1 else "s")


def headline(checkpoint: Checkpoint) -> str:
    """`3f2a1b2c3d4e  2026-12-01 15:40:12  turn 3  write_file a.py  (120 files)`"""
    parts = [checkpoint.id, when(checkpoint.created), turn(checkpoint), escape(checkpoint.reason)]
    return "  ".join(p for p in parts if p) + f"  ({files(checkpoint.files)})"


def counts(changes: Iterable[FileChange]) -> dict[str, int]:
    found = Counter(change.kind for change in changes)
    return {kind: found.get(kind, 0) for kind in KINDS}


def counted(changes: Iterable[FileChange]) -> str:
    """`1 added, 2 changed, 0 deleted since`, or `no change since`."""
    found = counts(changes)
    if not any(found.values()):
        return "no change since"
    return ", ".join(f"{found[kind]} {kind}" for kind in KINDS) + " since"


def no_checkpoints(cwd: str, enabled: bool) -> str:
    """What a list says when there is nothing in it, and how to have some."""
    if enabled:
        return f"no checkpoints for {escape(cwd)} yet: {WHEN_TAKEN}"
    return f"no checkpoints for {escape(cwd)}: checkpoints are off ({HOW_TO_ENABLE})"


def taken(checkpoint: Checkpoint) -> str:
    """The session's line for `CheckpointTaken`."""
    return f"checkpoint {checkpoint.id} taken before {escape(checkpoint.reason)}"


def skipped(note: str) -> str:
    """The session's line for `CheckpointSkipped` (its note says "failed: ..." when it did)."""
    return f"no checkpoint: {escape(note)}"


def restored(checkpoint: Checkpoint, result: RestoreResult) -> str:
    """After a restore: what was done and what was kept (`undo` says how to take it back)."""
    if not result.written and not result.deleted:
        return (
            f"nothing restored from checkpoint {checkpoint.id}: kept your edits to "
            f"{escape(', '.join(result.kept))}"
        )
    which = f" ({turn(checkpoint)})" if checkpoint.turn is not None else ""
    done = (
        f"↺ restored checkpoint {checkpoint.id}{which}: "
        f"{files(len(result.written))} written back, {len(result.deleted)} deleted"
    )
    if result.kept:
        done += f"; kept your edits to {escape(', '.join(result.kept))}"
    for note in result.notes:  # a setuid bit not set again, and why
        done += f"; {escape(note)}"
    return done


def undo(result: RestoreResult) -> str:
    """How to take a restore back: its backup ("" when it changed nothing)."""
    if result.backup is None:
        return ""
    return f"the state before is checkpoint {result.backup.id}: restore it to undo"


def after_restore(checkpoint: Checkpoint, result: RestoreResult) -> str:
    """The session's line: what was restored and how to undo it."""
    back = undo(result)
    return restored(checkpoint, result) + (f". {back[:1].upper()}{back[1:]}" if back else "")
