"""The batch planner: which of a model's tool calls may run at once.

`plan(calls, cwd)` splits a batch into ordered segments, each either a parallel run or a
sequential barrier, as Hermes 0.19 does, and fixes where it is wrong:

* paths are canonical: `~` and `$VARS` expanded as the tools expand them (Hermes took
  `$HOME/x` and `~/x` for different files), relative to the session's directory, `..`
  folded, symlinks resolved, the same file under another name (a hard link) recognised by
  device and inode, case folded on case-insensitive volumes (Hermes ran writes to a hard
  link and its target, or to README.md and readme.md there, in parallel);
* two calls conflict only when one writes and their paths are equal or nested: reads of the
  same file share (Hermes ran them one after the other); `search_files` reserves its
  root for reading (in Hermes it reserved nothing, so it ran beside a write under it);
* interactive tools, `terminal`, unknown tools, unreadable or invalid arguments are
  barriers; MCP tools join parallel runs only when their server allows it.

Every call carries why it ran alone, for the timeline ("conflicts with write_file a.txt").
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.core.tools.arguments import ArgumentError, prepare_arguments
from workbench.core.tools.entry import ToolEntry
from workbench.core.tools.paths import resolve_path
from workbench.core.tools.registry import ToolTable
from workbench.core.tools.registry import registry as default_registry

INTERACTIVE_TOOLS = frozenset({"clarify"})


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # the model's JSON text, or a dict
    via: str = ""  # a call named in a tool_call (deferred tools): that bridge call's id

    @classmethod
    def of(cls, call: Any, index: int = 0) -> ToolCall:
        """Accept an OpenAI tool call object, a dict in either shape, or a ToolCall."""
        if isinstance(call, ToolCall):
            return call
        if isinstance(call, dict):
            nested = call.get("function")
            function = nested if isinstance(nested, dict) else call
            return cls(
                str(call.get("id") or f"call_{index}"),
                str(function.get("name") or ""),
                function.get("arguments"),
            )
        function = getattr(call, "function", None) or call
        return cls(
            str(getattr(call, "id", None) or f"call_{index}"),
            str(getattr(function, "name", "") or ""),
            getattr(function, "arguments", None),
        )


@dataclass(frozen=True)
class Reservation:
    """A path a call touches. `key` identifies the file (inode when it exists)."""

    shown: str  # as the model wrote it
    path: str  # canonical path
    key: Any
    writes: bool

    def conflicts(self, other: Reservation) -> bool:
        if not (self.writes or other.writes):
            return False
        if self.key == other.key:
            return True
        return _nested(self.path, other.path) or _nested(other.path, self.path)


def _nested(parent: str, child: str) -> bool:
    return child.startswith(parent.rstrip(os.sep) + os.sep) or parent == os.sep


@dataclass(frozen=True)
class PlannedCall:
    call: ToolCall
    args: dict[str, Any] | None  # None when the arguments could not be read
    error: str = ""  # why the call cannot run as asked (unknown tool, bad arguments)
    reason: str = ""  # why it is not in a parallel run (empty when it is)
    reservations: tuple[Reservation, ...] = ()


@dataclass(frozen=True)
class Segment:
    parallel: bool
    calls: tuple[PlannedCall, ...]


@dataclass
class _Run:
    calls: list[PlannedCall] = field(default_factory=list)
    reserved: list[tuple[Reservation, PlannedCall]] = field(default_factory=list)


def plan(
    calls: list[Any],
    cwd: str | os.PathLike[str] | None = None,
    registry: ToolTable | None = None,
) -> list[Segment]:
    """Ordered segments for a batch: parallel runs and sequential barriers."""
    registry = registry or default_registry
    base = Path(cwd) if cwd is not None else Path.cwd()
    segments: list[Segment] = []
    run = _Run()

    def close_run() -> None:
        nonlocal run
        if run.calls:
            segments.append(Segment(True, tuple(run.calls)))
        run = _Run()

    for index, raw in enumerate(calls):
        call = ToolCall.of(raw, index)
        entry = registry.get_entry(call.name)
        planned, parallel = _classify(call, entry, base)
        if not parallel:
            close_run()
            segments.append(Segment(False, (planned,)))
            continue
        clash = next(
            ((r, p) for mine in planned.reservations for r, p in run.reserved if mine.conflicts(r)),
            None,
        )
        if clash is not None:
            close_run()
            other_res, other = clash
            planned = _with_reason(planned, f"conflicts with {other.call.name} {other_res.shown}")
        run.calls.append(planned)
        run.reserved.extend((r, planned) for r in planned.reservations)
    close_run()
    return _normalise(segments)


def _with_reason(planned: PlannedCall, reason: str) -> PlannedCall:
    return PlannedCall(planned.call, planned.args, planned.error, reason, planned.reservations)


def _classify(call: ToolCall, entry: ToolEntry | None, cwd: Path) -> tuple[PlannedCall, bool]:
    if entry is None:
        return PlannedCall(call, None, f"unknown tool '{call.name}'", "unknown tool"), False
    try:
        args = prepare_arguments(call.arguments, entry.schema)
    except ArgumentError as exc:
        return PlannedCall(call, None, str(exc), "its arguments could not be read"), False
    if entry.interactive or call.name in INTERACTIVE_TOOLS:
        return PlannedCall(
            call, args, reason=f"{call.name} asks the user; it never runs in parallel"
        ), False
    if entry.path_args:
        reservations = []
        for arg_name, mode in entry.path_args.items():
            value = args.get(arg_name, "." if mode == "root" else None)
            if not isinstance(value, str) or not value:
                return PlannedCall(call, args, reason=f"no '{arg_name}' to reserve"), False
            if "\0" in value:
                why = f"argument '{arg_name}' contains a NUL byte, which no file name can hold"
                return PlannedCall(call, None, why, "its arguments could not be read"), False
            reservations.append(reserve(value, cwd, writes=mode == "write"))
        return PlannedCall(call, args, reservations=tuple(reservations)), True
    if entry.parallel_safe:
        return PlannedCall(call, args), True
    why = (
        "runs alone (it may change anything)"
        if call.name == "terminal"
        else "may have side effects"
    )
    return PlannedCall(call, args, reason=f"{call.name} {why}"), False


def _normalise(segments: list[Segment]) -> list[Segment]:
    """Parallel runs of one call are sequential; adjacent sequential segments merge."""
    out: list[Segment] = []
    for segment in segments:
        if segment.parallel and len(segment.calls) < 2:
            segment = Segment(False, segment.calls)
        if out and not segment.parallel and not out[-1].parallel:
            out[-1] = Segment(False, out[-1].calls + segment.calls)
        else:
            out.append(segment)
    return out


def may_run_in_parallel(
    calls: list[Any],
    cwd: str | os.PathLike[str] | None = None,
    registry: ToolTable | None = None,
) -> bool:
    """True only when the whole batch is one parallel segment."""
    segments = plan(calls, cwd, registry)
    return len(segments) == 1 and segments[0].parallel


# -- canonical paths -------------------------------------------------------------------


def reserve(value: str, cwd: Path, *, writes: bool) -> Reservation:
    path = os.path.realpath(resolve_path(value, cwd))
    try:
        info = os.stat(path)
        key: Any = ("inode", info.st_dev, info.st_ino)
    except OSError:
        key = ("path", path.casefold() if _case_insensitive(os.path.dirname(path)) else path)
    if key[0] == "path" or not _case_insensitive(os.path.dirname(path)):
        return Reservation(value, path, key, writes)
    return Reservation(value, path.casefold(), key, writes)


def _case_insensitive(directory: str) -> bool:
    """Whether the volume holding `directory` ignores case (probed once per device)."""
    probe = directory
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    try:
        return _probe_device(os.stat(probe).st_dev, probe)
    except OSError:
        return False


@lru_cache(maxsize=64)
def _probe_device(device: int, directory: str) -> bool:
    current = directory
    while current not in ("", os.sep):
        name = os.path.basename(current)
        if name.swapcase() != name:
            other = os.path.join(os.path.dirname(current), name.swapcase())
            try:
                return os.path.samefile(current, other)
            except OSError:
                return False
        current = os.path.dirname(current)
    return False


def describe(segments: list[Segment]) -> str:
    """A one-line summary per segment, for logs and the CLI."""
    return json.dumps(
        [{"parallel": s.parallel, "calls": [p.call.name for p in s.calls]} for s in segments]
    )
