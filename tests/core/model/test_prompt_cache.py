"""The fixed prompt's saved state: keys, checks before a restore, pruning (no model here;
tests/e2e/test_prompt_cache.py restores real slot files)."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path

from workbench.core.model import prompt_cache
from workbench.core.model.prompt_cache import PromptCache

FIXED = {"messages": [{"role": "system", "content": "Be brief."}], "tools": [{"name": "a"}]}


def _save(cache: PromptCache, entry: str, data: bytes = b"kv" * 1000) -> Path:
    """What the server does on `action=save`, then what we do after."""
    (cache.directory / cache.part_name(entry)).write_bytes(data)
    assert cache.saved(entry, tokens=42)
    return cache.directory / cache.slot_name(entry)


def test_the_key_changes_with_the_model_build_template_prompt_and_tools() -> None:
    base = prompt_cache.key("sha", "1.0", "tpl", FIXED)
    assert base == prompt_cache.key("sha", "1.0", "tpl", dict(FIXED))
    other_tools = {**FIXED, "tools": [{"name": "a"}, {"name": "b"}]}
    other_prompt = {**FIXED, "messages": [{"role": "system", "content": "Be long."}]}
    variants = [
        prompt_cache.key("sha2", "1.0", "tpl", FIXED),
        prompt_cache.key("sha", "1.1", "tpl", FIXED),
        prompt_cache.key("sha", "1.0", "tpl2", FIXED),
        prompt_cache.key("sha", "1.0", "tpl", other_tools),
        prompt_cache.key("sha", "1.0", "tpl", other_prompt),
    ]
    assert base not in variants and len(set(variants)) == len(variants)


def test_a_saved_entry_is_private_and_usable(tmp_path: Path) -> None:
    cache = PromptCache(tmp_path / "cache")
    slot = _save(cache, "e1")
    assert cache.usable("e1") == slot.name
    assert stat.S_IMODE(cache.directory.stat().st_mode) == 0o700
    for path in cache.directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert cache.usable("missing") is None


def test_a_truncated_or_damaged_file_is_logged_removed_and_never_offered(
    tmp_path: Path, caplog
) -> None:
    cache = PromptCache(tmp_path / "cache")
    truncated = _save(cache, "short")
    truncated.write_bytes(truncated.read_bytes()[:-10])
    damaged = _save(cache, "flipped")
    data = bytearray(damaged.read_bytes())
    data[100] ^= 0xFF
    damaged.write_bytes(bytes(data))  # same size, other content
    no_record = _save(cache, "orphan")
    (cache.directory / "orphan.json").unlink()
    logger = logging.getLogger("workbench.core.model.prompt_cache")
    logger.addHandler(caplog.handler)  # "workbench" does not propagate once a runtime loaded
    try:
        assert cache.usable("short") is None
        assert cache.usable("flipped") is None
        assert cache.usable("orphan") is None
    finally:
        logger.removeHandler(caplog.handler)
    said = caplog.text
    assert "truncated" in said and "SHA-256" in said and "record" in said
    assert not truncated.exists() and not damaged.exists() and not no_record.exists()


def test_only_the_most_recently_used_entries_are_kept(tmp_path: Path) -> None:
    cache = PromptCache(tmp_path / "cache", keep=2)
    old = _save(cache, "old")
    os.utime(cache.directory / "old.json", (1, 1))
    used = _save(cache, "used")
    os.utime(cache.directory / "used.json", (2, 2))
    assert cache.usable("used")  # using an entry makes it recent
    _save(cache, "new")
    assert not old.exists() and not (cache.directory / "old.json").exists()
    assert used.exists() and cache.usable("new")
    stale = cache.directory / "gone.123.part"  # a save whose process was killed
    stale.write_bytes(b"x")
    os.utime(stale, (1, 1))
    cache.prune()
    assert not stale.exists()


class _Server:
    """A local server's slot endpoint, doing what llama.cpp's does with the files."""

    def __init__(self, cache: PromptCache, restores: bool = True) -> None:
        self.cache, self.restores, self.calls = cache, restores, []

    def slot(self, action: str, filename: str) -> dict | None:
        self.calls.append((action, filename))
        if action == "save":
            (self.cache.directory / filename).write_bytes(b"state" * 100)
            return {"n_saved": 900}
        return {"n_restored": 900} if self.restores else None


def test_prime_reads_and_saves_once_then_restores(tmp_path: Path) -> None:
    cache = PromptCache(tmp_path / "cache")
    server, warmed = _Server(cache), []

    async def warm() -> bool:
        warmed.append(1)
        return True

    assert asyncio.run(prompt_cache.prime(server, cache, "e", warm)) == "saved"
    assert asyncio.run(prompt_cache.prime(server, cache, "e", warm)) == "restored"
    assert len(warmed) == 1 and server.calls[-1] == ("restore", "e.slot")
    refusing = _Server(cache, restores=False)  # the server cannot load it: read again
    assert asyncio.run(prompt_cache.prime(refusing, cache, "e", warm)) == "saved"
    assert len(warmed) == 2


def test_prime_saves_nothing_when_the_warm_request_failed(tmp_path: Path) -> None:
    cache = PromptCache(tmp_path / "cache")
    server = _Server(cache)

    async def warm() -> bool:
        return False

    assert asyncio.run(prompt_cache.prime(server, cache, "e", warm)) == "failed"
    assert server.calls == [] and list(cache.directory.iterdir()) == []
