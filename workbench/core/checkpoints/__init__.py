"""Checkpoints: snapshots of the working directory before the agent changes it, and restore.

The contract the front ends use is in model.py (types) and store.py (`CheckpointStore`).
"""

from workbench.core.checkpoints.events import CheckpointSkipped, CheckpointTaken
from workbench.core.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    FileChange,
    RestorePlan,
    RestoreResult,
    RestoreStopped,
    Snapshot,
)
from workbench.core.checkpoints.store import CheckpointStore

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
