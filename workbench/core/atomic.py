"""Atomic file writes: a crash leaves either the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` via a temp file in the same directory, fsync, then rename.

    The file keeps its permission bits when it already exists (a user's 0600 config stays
    0600); `mode` applies to a new file.
    """
    path = Path(path)
    try:
        keep_mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep_mode = mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
