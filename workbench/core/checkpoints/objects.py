"""A file's bytes as a snapshot takes them, their git blob id, and the blob written to a store.

hermes-tui reads every file a snapshot takes itself, never git: git reading the working tree
also reads the project's `.gitattributes` (a FIFO there hangs it), stops at a nested
repository and gives up on the first file it cannot read. A file is opened without
following a link and without waiting (a FIFO put in a file's place is not read), and its
blob is written as git writes a loose object, `objects/ab/cdef…`: zlib of "blob SIZE\\0" and
the bytes, named by their SHA-1.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import zlib
from pathlib import Path

from workbench.core.storage.private import private_dir

_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LEVEL = 1  # as the store's core.looseCompression: a turn zips fast, gc packs tighter later


def read(path: str, limit: int) -> tuple[bytes, bool] | None:
    """The bytes a snapshot holds for `path` and whether it is a symbolic link: a regular
    file's content, a link's target; None when it is neither any more, larger than `limit`,
    or cannot be read."""
    try:
        fd = os.open(path, _OPEN)
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # a symbolic link, whose target text is what is held
            return None
        try:
            return os.fsencode(os.readlink(path)), True
        except OSError:
            return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return (data, False) if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def write_blob(store: Path, data: bytes) -> str:
    """Write `data` into the store's objects as a blob (if it is not there loose already);
    its id. A crash leaves no half object: the file is complete before it gets its name."""
    oid = blob_id(data)
    folder = store / "objects" / oid[:2]
    final = folder / oid[2:]
    if final.exists():
        return oid
    private_dir(folder)
    fd, temp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(zlib.compress(b"blob %d\0" % len(data) + data, LEVEL))
        with contextlib.suppress(FileExistsError):  # another process wrote the same object
            os.link(temp, final)
    finally:
        os.unlink(temp)
    return oid
