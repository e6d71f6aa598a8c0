"""Private state: everything the app creates under HERMES_HOME is 0700 (folders) / 0600 (files).

Transcripts, logs and spilled results hold whole tool results (file contents, command
output), so nobody else on the machine may read them. Every place that creates a folder or
a file of ours goes through these helpers; they never follow a link at the last component,
and they tighten a folder or file of ours that an older version created readable by others.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal, TextIO, overload

DIR_MODE = 0o700
FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OTHERS = 0o077  # the group's and everyone else's bits

logger = logging.getLogger(__name__)


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as 0700 folders; tighten it if it exists wider.

    Parents that already exist are left alone (they may be the user's, like `~`); only
    what this call creates, and `path` itself, are made private.
    """
    path = Path(path)
    missing = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, DIR_MODE)
        os.chmod(directory, DIR_MODE)  # mkdir's mode passes through the umask
    tighten(path)
    return path


def tighten(path: Path) -> bool:
    """Make a folder or file of ours private; links and others' files are left alone.

    Returns True if the mode changed.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
        return False
    if stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX:
        return False  # a sticky folder is shared by design (/tmp as root): never ours to close
    if stat.S_IMODE(info.st_mode) & _OTHERS == 0:
        return False
    os.chmod(path, stat.S_IMODE(info.st_mode) & ~_OTHERS)
    logger.info("made %s private (mode %o was readable by others)", path, info.st_mode & 0o777)
    return True


@overload
def open_private(path: Path, *, binary: Literal[False] = False) -> TextIO: ...
@overload
def open_private(path: Path, *, binary: Literal[True]) -> BinaryIO: ...


def open_private(path: Path, *, binary: bool = False) -> TextIO | BinaryIO:
    """Open `path` for appending, created 0600 (parents 0700); a link in its place is refused."""
    path = Path(path)
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW | _CLOEXEC
    fd = os.open(path, flags, FILE_MODE)
    try:
        info = os.fstat(fd)
        if stat.S_IMODE(info.st_mode) & _OTHERS and info.st_uid == os.geteuid():
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~_OTHERS)
        if binary:
            return os.fdopen(fd, "ab")
        return os.fdopen(fd, "a", encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


def touch_private(path: Path) -> Path:
    """Create `path` empty and 0600 if it is missing (for files another library opens)."""
    open_private(path).close()
    return path


def private_file_handler(path: Path) -> logging.FileHandler:
    """A logging handler whose file is created 0600 (FileHandler alone uses the umask)."""
    touch_private(path)
    return logging.FileHandler(path, encoding="utf-8")
