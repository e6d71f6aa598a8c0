"""What running tool calls emits: a call started, a call finished (with its result, its
approval decision and the diff a write made), an approval asked for and answered.
`workbench.core.events` gathers them with every other core event."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from workbench.core.edits import diffs
    from workbench.core.execution.approval import ApprovalRequest, Decision


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str
    arguments: dict[str, Any] | None
    segment: int
    parallel: bool
    reason: str  # why it did not run in parallel, if it did not
    at: float  # time.monotonic()
    label: str = ""  # who called it: "" for the main agent, a sub-agent's name otherwise
    parent: str = ""  # for a sub-agent's call, the delegate_task call that started it
    via: str = ""  # a call named in a tool_call: that bridge call's id (its parent row)


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    name: str
    status: str  # ok, error, timeout, cancelled, denied, blocked, skipped, invalid
    content: str | dict[str, Any]  # what the model receives
    started: float | None
    at: float
    spilled: Path | None = None
    decision: Decision | None = None
    label: str = ""
    parent: str = ""
    diff: diffs.FileDiff | None = None  # what a write_file or patch call changed
    via: str = ""  # a call named in a tool_call: that bridge call's id

    @property
    def duration(self) -> float:
        return self.at - self.started if self.started is not None else 0.0


@dataclass(frozen=True, slots=True)
class ApprovalAnswered:
    request: ApprovalRequest
    decision: Decision


@dataclass(frozen=True, slots=True)
class VenvChanged:
    """A call changed what a project's virtual environment runs (`execution.venvs`)."""

    call_id: str
    name: str  # the tool
    venv: str
    paths: tuple[str, ...]
    note: str  # the session's one line about it
    label: str = ""


CallEvent: TypeAlias = ToolCallStarted | ToolCallFinished | ApprovalAnswered | VenvChanged
"""What running tool calls emits, for the agent and the run form alike."""
