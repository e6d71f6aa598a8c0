"""What checkpointing emits on the session's event stream: one line each in the session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from workbench.core.checkpoints.model import Checkpoint


@dataclass(frozen=True, slots=True)
class CheckpointTaken:
    checkpoint: Checkpoint


@dataclass(frozen=True, slots=True)
class CheckpointSkipped:
    cwd: str
    note: str  # one line: why nothing was taken ("no change since …", "skipped: …", "failed: …")
    failed: bool = False


CheckpointEvent: TypeAlias = CheckpointTaken | CheckpointSkipped
