"""Checkpoints: snapshots of the working directory before the agent changes it, and restore.

The contract the front ends use is in model.py (types) and store.py (`CheckpointStore`).

The names below load when first used: importing one of its modules (the events, say)
does not load the store and the git plumbing under it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from workbench.core.checkpoints.events import (
        CheckpointSkipped,
        CheckpointTaken,
    )
    from workbench.core.checkpoints.model import (
        Checkpoint,
        CheckpointError,
        FileChange,
        RestorePlan,
        RestoreResult,
        RestoreStopped,
        Snapshot,
    )
    from workbench.core.checkpoints.store import (
        CheckpointStore,
    )

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointSkipped",
    "CheckpointStore",
    "CheckpointTaken",
    "FileChange",
    "RestorePlan",
    "RestoreResult",
    "RestoreStopped",
    "Snapshot",
]

_HOMES = {
    "CheckpointSkipped": "events",
    "CheckpointTaken": "events",
    "Checkpoint": "model",
    "CheckpointError": "model",
    "FileChange": "model",
    "RestorePlan": "model",
    "RestoreResult": "model",
    "RestoreStopped": "model",
    "Snapshot": "model",
    "CheckpointStore": "store",
}


__getattr__ = lazy_names(__name__, _HOMES, globals())
