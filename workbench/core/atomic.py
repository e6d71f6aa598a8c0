"""Atomic file writes: a crash leaves either the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` via a temp file in the same directory, fsync, then rename.

    A symlink is followed: its target is replaced and the link stays a link (a dotfile kept
    in a repository and linked from home stays where it is). The file keeps its permission
    bits when it already exists (a user's 0600 config stays 0600); `mode` applies to a new
    file, which is private (0600) when no mode is given.
    """
    target = Path(os.path.realpath(path))
    try:
        keep_mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep_mode = mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def default_file_mode() -> int:
    """The mode a new file gets from `open()` in this process: 0666 less the umask."""
    return 0o666 & ~current_umask()


def current_umask() -> int:
    # Read from /proc where the kernel shows it: setting it to read it back (os.umask) would
    # change it for a moment under every other thread of the process.
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii") as status,
    ):
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
