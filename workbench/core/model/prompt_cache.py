"""The fixed prompt's KV cache on disk: the bundled model reads the system prompt and the
tool definitions once, not in every new process.

On this 2-core machine the 1.5B model reads the fixed prompt (~1,000 tokens) in 25-90 s;
llama.cpp restores the same state from a file in about 10 ms (`POST /slots/0?action=save|
restore`, files under the server's `slot_save_path`). An entry is keyed by everything that
changes those tokens or their meaning: the model file, the llama.cpp build, the chat
template, the system messages and the tool definitions; a change of any makes a new entry,
and the least recently used beyond KEEP are removed.

A sidecar (`KEY.json`) records the slot file's size and SHA-256 when it is saved. A slot
file is restored only when both still match: a truncated or damaged file is logged and
deleted, never loaded (the server would read garbage into its cache, or crash).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from workbench.core.storage.atomic import atomic_write_text
from workbench.core.storage.private import private_dir

logger = logging.getLogger(__name__)

KEEP = 4  # entries kept: a few tool sets (toolsets switched on and off) and models
SLOT = ".slot"  # the server's file
SIDECAR = ".json"  # our record of it
PART = ".part"  # a slot file being saved, before it is checked and named


def key(model_sha256: str, build: str, template: str, fixed: dict[str, Any]) -> str:
    """The entry's name: a hash of what decides the fixed prompt's tokens and their state."""
    text = json.dumps([model_sha256, build, template, fixed], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class PromptCache:
    """Saved slot files in one private folder (the server's `slot_save_path`)."""

    def __init__(self, directory: Path, keep: int = KEEP) -> None:
        self.directory = private_dir(directory)
        self.keep = keep

    def slot_name(self, entry: str) -> str:
        """The file name the server restores (names only: the server refuses paths)."""
        return entry + SLOT

    def part_name(self, entry: str) -> str:
        """The file name the server saves to: checked and renamed by `saved`."""
        return f"{entry}.{os.getpid()}{PART}"

    def usable(self, entry: str) -> str | None:
        """The slot file to restore for `entry`, if there is one whose size and SHA-256
        match its sidecar; a damaged one is logged and removed."""
        slot, sidecar = self.directory / (entry + SLOT), self.directory / (entry + SIDECAR)
        if not slot.exists() and not sidecar.exists():
            return None
        problem = self._problem(slot, sidecar)
        if problem is not None:
            logger.warning("prompt cache %s ignored and removed: %s", slot, problem)
            self.remove(entry)
            return None
        with contextlib.suppress(OSError):
            os.utime(sidecar)  # recently used: kept when older entries are pruned
        return slot.name

    def _problem(self, slot: Path, sidecar: Path) -> str | None:
        try:
            record = json.loads(sidecar.read_text(encoding="utf-8"))
            size, sha256 = int(record["size"]), str(record["sha256"])
        except FileNotFoundError:
            return "its record (size and hash) is missing"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"its record is unreadable ({type(exc).__name__})"
        try:
            actual = slot.stat().st_size
        except OSError as exc:
            return f"the file cannot be read ({exc.strerror or exc})"
        if actual != size:
            return f"it is {actual:,} bytes, {size:,} were saved (truncated or overwritten)"
        if _digest(slot) != sha256:
            return "its SHA-256 differs from the one saved (damaged)"
        return None

    def saved(self, entry: str, tokens: int) -> bool:
        """Record the slot file the server just wrote under `part_name(entry)`: its size
        and hash in the sidecar, then its final name; older entries are pruned."""
        part = self.directory / self.part_name(entry)
        try:
            record = {"size": part.stat().st_size, "sha256": _digest(part), "tokens": tokens,
                      "saved": time.time()}  # fmt: skip
            os.chmod(part, 0o600)
            os.replace(part, self.directory / (entry + SLOT))
            atomic_write_text(self.directory / (entry + SIDECAR), json.dumps(record), 0o600)
        except OSError as exc:
            logger.warning("prompt cache %s not saved: %s", entry, exc.strerror or exc)
            with contextlib.suppress(OSError):
                part.unlink()
            return False
        self.prune()
        return True

    def remove(self, entry: str) -> None:
        for suffix in (SLOT, SIDECAR):
            with contextlib.suppress(OSError):
                (self.directory / (entry + suffix)).unlink()

    def prune(self) -> None:
        """Keep the `keep` most recently used entries; remove the rest, and slot files
        with no record or saves never finished (a process killed while saving)."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        records = sorted(
            (n for n in names if n.endswith(SIDECAR)),
            key=lambda n: self._mtime(n),
            reverse=True,
        )
        kept = {n[: -len(SIDECAR)] for n in records[: self.keep]}
        for name in records[self.keep :]:
            self.remove(name[: -len(SIDECAR)])
        stale = time.time() - 600  # a save in progress takes well under a second
        for name in names:
            orphan = name.endswith(SLOT) and name[: -len(SLOT)] not in kept
            unfinished = name.endswith(PART) and self._mtime(name) < stale
            if orphan or unfinished:
                with contextlib.suppress(OSError):
                    (self.directory / name).unlink()

    def _mtime(self, name: str) -> float:
        try:
            return (self.directory / name).stat().st_mtime
        except OSError:
            return 0.0


async def prime(
    server: Any, cache: PromptCache, entry: str, warm: Callable[[], Awaitable[bool]]
) -> str:
    """Put the fixed prompt's state into the local server's slot before the first request:
    restored from `cache` if saved before, else read (`warm`) and saved for next time.
    Returns what happened: "restored", "saved", "read" (not saved) or "failed"."""
    name = await asyncio.to_thread(cache.usable, entry)
    if name is not None:
        reply = await asyncio.to_thread(server.slot, "restore", name)
        if reply and reply.get("n_restored"):
            return "restored"
        logger.warning("prompt cache %s: the server could not restore it; read again", name)
        cache.remove(entry)
    if not await warm():
        return "failed"
    part = cache.part_name(entry)
    reply = await asyncio.to_thread(server.slot, "save", part)
    if reply and reply.get("n_saved"):
        saved = await asyncio.to_thread(cache.saved, entry, int(reply["n_saved"]))
        return "saved" if saved else "read"
    logger.warning("prompt cache %s: the server did not save its slot", entry)
    return "read"
