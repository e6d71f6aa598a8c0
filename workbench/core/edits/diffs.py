"""What a file write changes, as a unified diff the UI can show (typed, computed here).

For an approval it is the diff the write would make, from the file as it is before; for a
finished call, the file before the call against what the call wrote. The old file is read
once, bounded: a file too large to compare, binary, or not a regular file (a FIFO never
blocks the read) gets a note instead of lines, and a long diff keeps its first lines with
the number of the rest.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.edits.patch import patched  # the patch tool's own rule
from workbench.core.tools.paths import resolve_path

DIFFED = ("write_file", "patch")
MAX_COMPARED = 2 << 20  # bytes of a file compared; beyond, a note says so
MAX_LINES = 400  # lines of diff kept (the rest counted)
CONTEXT = 3


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    lines: tuple[str, ...] = ()  # unified diff lines, without line ends
    added: int = 0
    removed: int = 0
    more: int = 0  # diff lines left out after `lines`
    created: bool = False
    note: str = ""  # why there are no lines: binary, too large, not a regular file

    @property
    def summary(self) -> str:
        if self.note:
            return self.note
        kind = "new file, " if self.created else ""
        return f"{kind}+{self.added} -{self.removed}" + (
            f", {self.more:,} more lines not shown" if self.more else ""
        )


@dataclass(frozen=True, slots=True)
class Before:
    """The file as it was: its text, or why it cannot be compared."""

    path: Path
    text: str | None = None  # None: it did not exist (when `note` is empty)
    note: str = ""


def before(name: str, args: dict[str, Any], cwd: str) -> Before | None:
    """The file a write_file or patch call is about, as it is now (None for other calls)."""
    if name not in DIFFED or not isinstance(args.get("path"), str):
        return None
    path = resolve_path(args["path"], cwd)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return Before(path)
    except OSError as exc:
        return Before(path, note=f"cannot read {path}: {exc.strerror or exc}")
    if not stat.S_ISREG(info.st_mode):
        return Before(path, note=f"{path} is not a regular file: no diff")
    if info.st_size > MAX_COMPARED:
        return Before(path, note=f"{info.st_size:,} bytes: too large to show a diff")
    try:
        data = _read(path)
    except OSError as exc:
        return Before(path, note=f"cannot read {path}: {exc.strerror or exc}")
    if data is None:
        return Before(path, note=f"{path} is not a regular file: no diff")
    if b"\0" in data:
        return Before(path, note=f"binary file ({len(data):,} bytes): no diff")
    try:
        return Before(path, data.decode("utf-8"))
    except UnicodeDecodeError:
        return Before(path, note=f"binary file ({len(data):,} bytes): no diff")


def _read(path: Path) -> bytes | None:
    """Its bytes, bounded; None when it turned into something other than a file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_COMPARED:
                raise OSError(0, f"it grew past {MAX_COMPARED:,} bytes while read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def planned(name: str, args: dict[str, Any], old: Before) -> str | None:
    """The text the call would leave in the file (None: it would fail, or cannot tell)."""
    if name == "write_file":
        content = args.get("content")
        return content if isinstance(content, str) else None
    if old.text is None:
        return None
    change = patched(old.text, args, old.path)
    return None if isinstance(change, str) else change[0]


def preview(name: str, args: dict[str, Any], cwd: str) -> FileDiff | None:
    """The diff a write_file or patch call would make, before it runs."""
    old = before(name, args, cwd)
    if old is None:
        return None
    return compare(old, planned(name, args, old))


def compare(old: Before, new: str | None) -> FileDiff:
    """The file before against `new` (None: what the call leaves is not known)."""
    shown = str(old.path)
    if old.note:
        return FileDiff(shown, note=old.note)
    if new is None:
        return FileDiff(shown, note="the change cannot be worked out before it runs")
    if b"\0" in new.encode("utf-8", errors="replace"):
        return FileDiff(shown, created=old.text is None, note="binary content: no diff")
    if len(new) > MAX_COMPARED:
        return FileDiff(
            shown, created=old.text is None, note=f"{len(new):,} characters: too large to diff"
        )
    return unified(shown, old.text, new)


def unified(path: str, old: str | None, new: str) -> FileDiff:
    name = Path(path).name
    lines = list(
        difflib.unified_diff(
            (old or "").splitlines(),
            new.splitlines(),
            fromfile="/dev/null" if old is None else f"a/{name}",
            tofile=f"b/{name}",
            n=CONTEXT,
            lineterm="",
        )
    )
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    kept = lines[:MAX_LINES]
    return FileDiff(
        path,
        tuple(kept),
        added,
        removed,
        more=len(lines) - len(kept),
        created=old is None,
        note="" if lines else "no change",
    )
