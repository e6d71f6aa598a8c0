"""Atomic file writes: a crash leaves either the old file or the new one, never half of either.

`locked` serialises read-modify-write cycles on one file across threads and processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`'s lock file (`.NAME.lock` beside it) while inside.

    Two writers that each read, change and write the same file would otherwise both start
    from the old text, and the second rename would drop the first one's change. The lock
    file stays (removing it would let a third writer lock a different inode).
    """
    lock = Path(path).with_name(f".{Path(path).name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def atomic_write_text(
    path: Path, text: str, mode: int | None = None, *, replace: bool = True, sync: bool = True
) -> bool:
    """Write `text` to `path` via a temp file in the same directory, fsync, then rename.

    A symlink is followed: its target is replaced and the link stays a link (a dotfile kept
    in a repository and linked from home stays where it is). The file keeps its permission
    bits when it already exists (a user's 0600 config stays 0600); `mode` applies to a new
    file, which is private (0600) when no mode is given. With `replace=False` an existing
    file is left as it is (another process may have just written it) and False is returned.
    `sync=False` skips the fsyncs, for a cache whose loss only costs its rebuilding: a crash
    may leave the old file, or (on some file systems) an empty one, never half of the new.
    """
    target = Path(os.path.realpath(path))
    keep_mode: int | None
    try:
        keep_mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep_mode = mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        if replace:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # fails if the file exists, where a rename would replace it
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync:
        _fsync_dir(target.parent)
    return True


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


def atomic_write_bytes(path: Path | str, data: bytes, mode: int) -> None:
    """Write `data` to `path` (never followed if a link) via a temp file, fsync, rename,
    with permission bits `mode`. What replaces a file is a new inode: hard links to the old
    one keep the old content."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)
