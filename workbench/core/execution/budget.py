"""The three-layer result-size defence (as Hermes's), with private spill storage.

Layer 1: each tool's `max_result_size_chars` (read_file pinned to infinite).
Layer 2: a result over its threshold is written to the session's spill directory and the
model gets Hermes's `<persisted-output>` stub with a preview and the path.
Layer 3: when a batch's results together exceed the turn budget, the largest are spilled
until it fits.

The read_file pin holds at both layers: a spilled result is read back with read_file, and
spilling that read would loop forever. read_file bounds itself (100K characters a call).

Unlike Hermes (which spills under predictable names in a shared temporary directory, exempts
any result quoting `<persisted-output>` and stores multimodal parts as their repr): spill
files live in a private per-session directory (0700) under HERMES_HOME with unpredictable
names created exclusively; a result is exempt from the turn budget only by our own record
that it was spilled, never because of its text; multimodal results are measured by their
text and never turned into text; files are readable text.

Retention: session spill directories older than `results.retention_days` (default 7) are
deleted when hermes-tui starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from workbench.core.storage.private import private_dir

DEFAULT_RESULT_SIZE_CHARS = 100_000
DEFAULT_TURN_BUDGET_CHARS = 200_000
DEFAULT_PREVIEW_SIZE_CHARS = 1_500
DEFAULT_RETENTION_DAYS = 7
PINNED_THRESHOLDS = {"read_file": float("inf")}


@dataclass(frozen=True)
class BudgetConfig:
    result_chars: int = DEFAULT_RESULT_SIZE_CHARS
    turn_chars: int = DEFAULT_TURN_BUDGET_CHARS
    preview_chars: int = DEFAULT_PREVIEW_SIZE_CHARS
    tool_overrides: tuple[tuple[str, float], ...] = ()
    read_chars: int | None = None  # read_file's own limit for this batch (None: its default)

    @classmethod
    def for_context_window(cls, tokens: float | None, **kw: Any) -> BudgetConfig:
        """Hermes's scaling: 15% / 30% of the window (4 chars a token), with floors and caps."""
        if not tokens or tokens <= 0:
            return cls(**kw)
        window = tokens * 4
        return cls(
            result_chars=_clamp(int(0.15 * window), 8_000, DEFAULT_RESULT_SIZE_CHARS),
            turn_chars=_clamp(int(0.30 * window), 16_000, DEFAULT_TURN_BUDGET_CHARS),
            **kw,
        )

    def threshold(self, tool: str, registered: float | None) -> float:
        """Pinned beats override beats min(registered, default); infinite stays infinite."""
        if tool in PINNED_THRESHOLDS:
            return PINNED_THRESHOLDS[tool]
        overrides = dict(self.tool_overrides)
        if tool in overrides:
            return overrides[tool]
        if registered is None:
            return self.result_chars
        if registered == float("inf"):
            return registered
        return min(registered, self.result_chars)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


@dataclass(frozen=True)
class Budgeted:
    """A result after budgeting. `spilled` is our record that it was stored on disk."""

    tool: str
    call_id: str
    content: str | dict[str, Any]
    original_chars: int
    spilled: Path | None = None
    spill_error: str = ""

    @property
    def size(self) -> int:
        return measure(self.content)


def measure(content: str | dict[str, Any]) -> int:
    """Characters the model will read: text parts of a multimodal envelope count, images do not."""
    if isinstance(content, str):
        return len(content)
    parts = content.get("content") if isinstance(content, dict) else None
    return sum(len(p.get("text") or "") for p in parts or [] if isinstance(p, dict))


# -- spill storage --------------------------------------------------------------------


class SpillStore:
    """A private directory per session; files created exclusively, never following links."""

    def __init__(self, root: Path, session_id: str) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", session_id) or session_id in (".", ".."):
            raise ValueError(f"unsafe session id {session_id!r}")
        self.root = Path(root)
        self.directory = self.root / session_id

    def _ensure_private_dir(self) -> None:
        for path in (self.root, self.directory):
            private_dir(path)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
                raise OSError(f"{path} is not a private directory (a link or a file is in the way)")
            if info.st_uid != os.geteuid():
                raise OSError(f"{path} belongs to another user")

    def create(self, call_id: str) -> tuple[Path, BinaryIO]:
        """A new spill file, open for writing bytes (a tool streaming its output into it)."""
        self._ensure_private_dir()
        name = f"{_safe_name(call_id)}-{secrets.token_hex(6)}.txt"
        path = self.directory / name
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        return path, os.fdopen(fd, "wb")

    def write(self, call_id: str, text: str) -> Path:
        path, handle = self.create(call_id)
        try:
            with handle:
                handle.write(text.encode("utf-8", errors="replace"))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return path

    @staticmethod
    def cleanup(root: Path, retention_days: float = DEFAULT_RETENTION_DAYS) -> list[Path]:
        """Delete session directories not modified for `retention_days`; returns what went.

        Never through a link: if `root` or its parent is a symlink (an agent could point
        `state/results` at a project), nothing is deleted; entries are looked at with lstat,
        and the deletion works relative to the opened directory, so a link swapped in
        meanwhile is not followed either.
        """
        cutoff = time.time() - retention_days * 86_400
        removed: list[Path] = []
        try:
            for path in (Path(root).parent, Path(root)):
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    return removed  # a link or a file where a directory should be
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return removed
        try:
            for entry in os.scandir(fd):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode) and info.st_mtime < cutoff:
                    shutil.rmtree(entry.name, ignore_errors=True, dir_fd=fd)
                    removed.append(Path(root) / entry.name)
        finally:
            os.close(fd)
        return removed


@dataclass
class SpillSlot:
    """One call's place to stream a large result to disk as it is made.

    The executor hands it to the tool (the `spill` keyword) and, after the call, records
    `path` as the call's spilled result, so the viewer opens the whole output.
    """

    store: SpillStore | None
    call_id: str
    path: Path | None = None

    def open(self) -> BinaryIO:
        if self.store is None:
            raise OSError("no spill directory for this session")
        self.path, handle = self.store.create(self.call_id or "tool_result")
        return handle

    def discard(self) -> None:
        """Remove a file that could not be written whole."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            self.path = None


def _safe_name(call_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", call_id).strip("._-")
    return cleaned[:60] or "tool_result"


def readable(content: str) -> str:
    """The text a person should read: JSON objects unfolded, long text fields as plain text."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return content
    if not isinstance(data, dict):
        return json.dumps(data, indent=2, ensure_ascii=False) if isinstance(data, list) else content
    lines = []
    for key, value in data.items():
        if isinstance(value, str) and ("\n" in value or len(value) > 200):
            lines.append(f"----- {key} -----\n{value}\n----- end of {key} -----")
        elif isinstance(value, dict | list):
            lines.append(f"{key}: {json.dumps(value, indent=2, ensure_ascii=False)}")
        else:
            lines.append(f"{key}: {value if isinstance(value, str) else json.dumps(value)}")
    return "\n".join(lines) + "\n"


# -- the stub the model receives ------------------------------------------------------


def _preview(content: str, size: int) -> str:
    preview = content[:size]
    cut = preview.rfind("\n")
    return preview[:cut] if cut > size // 2 else preview


def _size_label(chars: int) -> str:
    kb = chars / 1024
    return f"{kb / 1024:.1f} MB" if kb >= 1024 else f"{kb:.1f} KB"


def persisted_stub(content: str, path: Path, preview_chars: int) -> str:
    preview = _preview(content, preview_chars)
    more = "\n..." if len(preview) < len(content) else ""
    return (
        "<persisted-output>\n"
        f"This tool result was too large ({len(content):,} characters, {_size_label(len(content))}).\n"
        f"Full output saved to: {path}\n"
        "Use the read_file tool with offset and limit to access specific sections of this output.\n"
        "\n"
        f"Preview (first {len(preview)} chars):\n"
        f"{preview}{more}\n"
        "</persisted-output>"
    )


def unsaved_stub(content: str, preview_chars: int) -> str:
    return (
        f"{_preview(content, preview_chars)}\n\n[Truncated: tool response was {len(content):,} chars. "
        "Full output could not be saved to sandbox.]"
    )


def spill(result: Budgeted, store: SpillStore | None, preview_chars: int) -> Budgeted:
    """Store `result` on disk and give the model the stub (or an honest truncation)."""
    text = result.content if isinstance(result.content, str) else ""
    try:
        if store is None:
            raise OSError("no spill directory for this session")
        path = store.write(result.call_id or result.tool, readable(text))
    except OSError as exc:
        return replace(result, content=unsaved_stub(text, preview_chars), spill_error=str(exc))
    return replace(result, content=persisted_stub(text, path, preview_chars), spilled=path)


def apply_result_budget(
    result: Budgeted, threshold: float, store: SpillStore | None, preview_chars: int
) -> Budgeted:
    """Layer 2. Multimodal results are never spilled (they are not text)."""
    if not isinstance(result.content, str) or len(result.content) <= threshold:
        return result
    return spill(result, store, preview_chars)


def enforce_turn_budget(
    results: list[Budgeted], config: BudgetConfig, store: SpillStore | None
) -> list[Budgeted]:
    """Layer 3: spill the largest results until the batch fits the turn budget."""
    out = list(results)
    total = sum(r.size for r in out)
    if total <= config.turn_chars:
        return out
    candidates = sorted(
        (
            i
            for i, r in enumerate(out)
            if r.spilled is None and isinstance(r.content, str) and r.tool not in PINNED_THRESHOLDS
        ),
        key=lambda i: out[i].size,
        reverse=True,
    )
    for index in candidates:
        if total <= config.turn_chars:
            break
        before = out[index].size
        out[index] = spill(out[index], store, config.preview_chars)
        total += out[index].size - before
    return out
