"""The ledger: which content the agent last wrote to each file of a project.

A restore asks before it overwrites a file changed since the checkpoint by someone other
than the agent. A file whose content now is one the agent wrote (its git blob id is in the ledger)
is the agent's; anything else is a hand edit, asked about. (A later checkpoint holding the
content is no proof: a turn's snapshot holds the person's edits made before it too.)
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from workbench.core.storage.atomic import atomic_write_text, locked
from workbench.core.storage.private import private_dir

MAX_ENTRIES = 2000  # newest kept per project
MAX_HASHED = 64 << 20  # a larger file is not hashed (never in a snapshot anyway)
KEPT_PER_FILE = 8  # the agent's last contents of one file


def blob_id(path: str | os.PathLike[str]) -> str | None:
    """The git blob id of a file's bytes (a symlink: of its target text); None if unreadable."""
    try:
        if os.path.islink(path):
            data = os.fsencode(os.readlink(path))
        else:
            if os.path.getsize(path) > MAX_HASHED:
                return None
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def record(path: Path, rel: str, blob: str | None) -> None:
    """Note that the agent left `blob` in `rel` (None: it deleted the file)."""
    private_dir(path.parent)
    with locked(path):
        entries = load(path)
        blobs = [b for b in entries.get(rel, {}).get("blobs", []) if b != blob]
        entries[rel] = {"blobs": [*blobs, blob][-KEPT_PER_FILE:], "at": time.time()}
        if len(entries) > MAX_ENTRIES:
            newest = sorted(entries.items(), key=lambda kv: kv[1].get("at", 0), reverse=True)
            entries = dict(newest[:MAX_ENTRIES])
        atomic_write_text(path, json.dumps(entries), mode=0o600)


def agent_wrote(entries: dict[str, dict[str, Any]], rel: str, blob: str | None) -> bool:
    """Whether the agent wrote this content to this file (one of its last writes of it)."""
    return blob in entries.get(rel, {}).get("blobs", ())
