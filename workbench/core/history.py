"""Every tool's calls, kept across restarts: `$HERMES_HOME/state/history/<tool>.json`.

One file per tool, not one store for all of them:

* a call rewrites only its own tool's file (at most `PER_TOOL` unpinned calls, each with a
  bounded preview), not every tool's history at once;
* two processes (two workbenches, a replay in CI) writing calls of different tools never wait
  for each other; calls of one tool are read, changed and written under that file's lock, so
  neither process loses the other's call;
* a file that does not parse costs only its tool's history: it is moved aside
  (`<file>.corrupt-<time>`), said once, and that tool starts again; the others are untouched.

Bounds: at most `PER_TOOL` unpinned calls per tool (the oldest go first; pinned calls are never
evicted) and at most `MAX_TOOLS` files (past it, the file written least recently whose calls
are all unpinned is removed), so the whole history stays under `PER_TOOL * MAX_TOOLS` calls
plus what the user pinned. A call keeps its arguments (up to `MAX_ARGS_CHARS` of JSON; larger
ones are not kept and the call cannot be re-run), the first `PREVIEW_CHARS` of its result and
the path of the spilled result if there was one, never a whole multi-megabyte result.

Secrets: the arguments are kept as the session's transcript keeps them (files 0600 in 0700
folders); the core has no redaction of argument values to apply.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from workbench.core.storage.atomic import atomic_write_text, locked
from workbench.core.storage.private import private_dir
from workbench.core.storage.yaml_file import YAMLFileError, read_text

logger = logging.getLogger(__name__)

PER_TOOL = 50
MAX_TOOLS = 200
PREVIEW_CHARS = 4000
MAX_ARGS_CHARS = 32_000
# A file is far smaller (PER_TOOL calls of bounded size, and what the user pinned): one larger
# was not written by us, and reading it whole could exhaust memory.
MAX_FILE_BYTES = 64 * 1024 * 1024
LATEST = 1e11  # a call's time past this (year 5138) is no time a clock can show
VERSION = 1
ORIGINS = ("agent", "form", "call", "replay")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,80}")


@dataclass(frozen=True, slots=True)
class CallEntry:
    """One finished call as the history keeps it."""

    id: str
    tool: str
    arguments: dict[str, Any] | None  # None: not kept (too large, or they did not parse)
    status: str
    duration: float  # seconds
    at: float  # wall-clock time it finished (time.time())
    origin: str  # agent, form (the run form, a re-run from the history), call (the CLI), replay
    preview: str  # the first PREVIEW_CHARS of the result
    size: int  # the result's length in characters (the preview may be shorter)
    spilled: str = ""  # the file the whole result was spilled to, if it was
    pinned: bool = False
    note: str = ""  # why the arguments were not kept
    via: str = ""  # the bridge call (tool_call) it was made through, for a deferred tool

    @property
    def truncated(self) -> bool:
        return self.size > len(self.preview)

    @property
    def can_rerun(self) -> bool:
        return self.arguments is not None


def entry(
    tool: str,
    arguments: dict[str, Any] | None,
    status: str,
    content: str | dict[str, Any] | Any,
    duration: float,
    origin: str,
    spilled: Path | str | None = None,
    via: str = "",
) -> CallEntry:
    """A finished call made into what the history keeps (a bounded preview, sized arguments)."""
    text = content if isinstance(content, str) else _dump(content)
    note = ""
    if arguments is not None and len(_dump(arguments)) > MAX_ARGS_CHARS:
        arguments, note = None, f"arguments over {MAX_ARGS_CHARS:,} characters were not kept"
    return CallEntry(
        id=f"{time.time_ns():x}-{secrets.token_hex(2)}",
        tool=tool,
        arguments=arguments,
        status=status,
        duration=max(0.0, float(duration)),
        at=time.time(),
        origin=origin if origin in ORIGINS else "agent",
        preview=text[:PREVIEW_CHARS],
        size=len(text),
        spilled=str(spilled or ""),
        note=note,
        via=via,
    )


class CallHistory:
    """The calls of every tool, read from disk on first use and written on every change.

    Safe to use from several threads (the workbench writes on a worker thread while the
    screen reads) and from several processes (each change is a locked read-modify-write).
    """

    def __init__(self, root: Path, *, per_tool: int = PER_TOOL, max_tools: int = MAX_TOOLS) -> None:
        self.root = Path(root)
        self.per_tool = per_tool
        self.max_tools = max_tools
        self.problems: list[str] = []  # files found corrupt (and set aside), to tell the user
        self._cache: dict[str, list[CallEntry]] = {}
        self._seen: dict[str, tuple[int, int, int] | None] = {}  # the file each cache was read from
        self._lock = threading.RLock()  # a corrupt file found while reading reports under it

    # -- reading ---------------------------------------------------------------------

    def calls(self, tool: str) -> list[CallEntry]:
        """The tool's calls as the detail lists them: pinned first, then newest first."""
        with self._lock:
            seen = _stamp(self.path(tool))
            if tool not in self._cache or seen != self._seen.get(tool):
                # first use, or another process (a replay, `hermes-tui call`) wrote since
                self._cache[tool], self._seen[tool] = self._read(tool), seen
            kept = list(self._cache[tool])
        kept.reverse()
        return [c for c in kept if c.pinned] + [c for c in kept if not c.pinned]

    def get(self, tool: str, call_id: str) -> CallEntry | None:
        return next((c for c in self.calls(tool) if c.id == call_id), None)

    # -- changing --------------------------------------------------------------------

    def add(self, call: CallEntry, *, write: bool = True) -> None:
        """Keep a finished call; evict the tool's oldest unpinned calls past the cap.

        `write=False` changes only what this process shows (at once, for a screen that must
        not wait for the disk); the same call added again with `write=True` (on a worker
        thread) then saves it, once.
        """
        self._change(call.tool, lambda calls: [*(c for c in calls if c.id != call.id), call], write)
        if write:
            self._evict_tools(keep=call.tool)

    def pin(self, tool: str, call_id: str, pinned: bool = True, *, write: bool = True) -> bool:
        """Pin (or unpin) a call; False if it is no longer there."""
        found = False

        def mutate(calls: list[CallEntry]) -> list[CallEntry]:
            nonlocal found
            out = []
            for c in calls:
                if c.id == call_id:
                    found = True
                    c = replace(c, pinned=pinned)
                out.append(c)
            return out

        self._change(tool, mutate, write)
        return found

    def _change(self, tool: str, mutate: Any, write: bool) -> None:
        if not write:
            self.calls(tool)  # loaded first
            with self._lock:
                self._cache[tool] = self._trim(mutate(self._cache[tool]))
            return
        path = self.path(tool)
        private_dir(self.root)
        with locked(path):
            calls = self._trim(mutate(self._read(tool)))
            text = json.dumps(
                {"version": VERSION, "tool": tool, "calls": [asdict(c) for c in calls]},
                ensure_ascii=False,
            )
            atomic_write_text(path, text, mode=0o600)
            seen = _stamp(path)
        with self._lock:
            self._cache[tool], self._seen[tool] = calls, seen

    def _trim(self, calls: list[CallEntry]) -> list[CallEntry]:
        unpinned = [c for c in calls if not c.pinned]
        drop = {c.id for c in unpinned[: max(0, len(unpinned) - self.per_tool)]}
        return [c for c in calls if c.id not in drop]

    def _evict_tools(self, keep: str) -> None:
        """Past `max_tools` files, remove the least recently written ones with no pinned call."""
        try:
            files = [p for p in self.root.glob("*.json") if p.is_file()]
        except OSError:
            return
        excess = len(files) - self.max_tools
        if excess <= 0:
            return
        files.sort(key=_mtime)
        for path in files:
            if excess <= 0:
                return
            if path == self.path(keep):
                continue
            with locked(path):
                calls, tool = self._read_file(path)
                if any(c.pinned for c in calls):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            with self._lock:
                self._cache.pop(tool, None)
            excess -= 1

    # -- files -----------------------------------------------------------------------

    def path(self, tool: str) -> Path:
        """The tool's file: its name when that is a safe file name, else a hash of it."""
        if _SAFE_NAME.fullmatch(tool) and not tool.startswith("."):
            return self.root / f"{tool}.json"
        digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return self.root / f"tool-{digest}.json"

    def _read(self, tool: str) -> list[CallEntry]:
        calls, _ = self._read_file(self.path(tool))
        return [c for c in calls if c.tool == tool]  # a hashed name could be shared

    def _read_file(self, path: Path) -> tuple[list[CallEntry], str]:
        """A file's calls and its tool's name; a corrupt file is set aside and counts as empty."""
        try:  # bounded, and only a regular file: a link to a device or a FIFO is not read
            text = read_text(path, MAX_FILE_BYTES)
        except FileNotFoundError:
            return [], ""
        except YAMLFileError as exc:
            return self._set_aside(path, f"cannot be read ({exc})"), ""
        try:
            try:
                data = json.loads(text)
            except RecursionError:
                raise ValueError("nested too deeply") from None
            if not isinstance(data, dict) or not isinstance(data.get("calls"), list):
                raise ValueError("not a history file (no list of calls)")
            calls = [_entry(raw) for raw in data["calls"]]
        except (ValueError, TypeError, KeyError) as exc:
            return self._set_aside(path, str(exc)), ""
        return calls, str(data.get("tool") or "")

    def _set_aside(self, path: Path, why: str) -> list[CallEntry]:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(path, aside)
        except OSError as exc:
            problem = f"call history {path} is damaged ({why}) and could not be moved: {exc}"
        else:
            problem = (
                f"call history {path.name} was damaged ({why}): kept as {aside}, "
                "and this tool's history starts again"
            )
        logger.warning(problem)
        with self._lock:
            self.problems.append(problem)
        return []


def _entry(raw: Any) -> CallEntry:
    if not isinstance(raw, dict):
        raise ValueError("a call is not an object")
    known = {f: raw[f] for f in CallEntry.__dataclass_fields__ if f in raw}
    call = CallEntry(**known)
    texts = (
        call.id, call.tool, call.status, call.origin, call.preview, call.spilled, call.note,
        call.via,
    )  # fmt: skip
    if not all(isinstance(t, str) for t in texts):
        raise ValueError("a call's id, tool, status or preview is not text")
    numbers = (call.duration, call.at, call.size)
    if not all(isinstance(n, int | float) and math.isfinite(n) for n in numbers) or not (
        0 <= call.at < LATEST
    ):
        raise ValueError(f"call {call.id}: its duration, time or size is not a number")
    if not isinstance(call.pinned, bool):
        raise ValueError(f"call {call.id}: pinned is not true or false")
    if call.arguments is not None and not isinstance(call.arguments, dict):
        raise ValueError(f"call {call.id}: arguments are not an object")
    return call


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells one version of a file from the next: an atomic write makes a new inode."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
