"""The ledger: which content (and mode) the agent last left in each file of a project.

A restore asks before it overwrites a file changed since the checkpoint by someone other
than the agent. A file whose content and mode now are what one of the agent's calls left
(the ledger holds its git blob id and its permission bits) is the agent's; anything else is a
hand edit, asked about. (A later checkpoint holding the content is no proof: a turn's
snapshot holds the person's edits made before it too.) Entries written before modes were
kept hold the blob id alone and match on content.

Who writes it: the file tools, right after each write; after a terminal command, every file
whose stat changed while the command ran (see `TurnCheckpoints.watch`); a restore, for what
it wrote.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.core.checkpoints import objects
from workbench.core.storage.atomic import atomic_write_text, locked
from workbench.core.storage.private import private_dir

MAX_ENTRIES = 2000  # newest kept per project
MAX_HASHED = 64 << 20  # a larger file is not hashed (never in a snapshot anyway)
KEPT_PER_FILE = 8  # the agent's last contents of one file
UNREADABLE = "unreadable"  # what a file that cannot be read is: never the agent's


def seen(blob: str, st_mode: int) -> str:
    """What the ledger keeps of a file: its blob and its bits ("link" for a link)."""
    kind = "link" if stat.S_ISLNK(st_mode) else f"{stat.S_IMODE(st_mode):o}"
    return f"{blob} {kind}"


def now(path: str | os.PathLike[str]) -> str | None:
    """What the ledger would keep of the file at `path` now; None when there is none."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    read = objects.read(os.fspath(path), MAX_HASHED)
    return UNREADABLE if read is None else seen(objects.blob_id(read[0]), info.st_mode)


def load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def record(path: Path, left: Mapping[str, str | None]) -> None:
    """Note what the agent left in each file of `left` (relative path → `seen`, None: it
    deleted the file), in one write."""
    if not left:
        return
    private_dir(path.parent)
    with locked(path):
        entries = load(path)
        at = time.time()
        for rel, what in left.items():
            kept = [b for b in entries.get(rel, {}).get("blobs", []) if b != what]
            entries[rel] = {"blobs": [*kept, what][-KEPT_PER_FILE:], "at": at}
        if len(entries) > MAX_ENTRIES:
            newest = sorted(entries.items(), key=lambda kv: kv[1].get("at", 0), reverse=True)
            entries = dict(newest[:MAX_ENTRIES])
        atomic_write_text(path, json.dumps(entries), mode=0o600)


def agent_wrote(entries: dict[str, dict[str, Any]], rel: str, what: str | None) -> bool:
    """Whether the agent left this content and mode in this file (one of its last writes)."""
    kept = entries.get(rel, {}).get("blobs", ())
    if what in kept:
        return what != UNREADABLE
    # an entry of an older version: the blob id alone
    return what is not None and what.split(" ")[0] in kept
