"""The working directory as the store's blobs, from one scan, and the index snapshots are
written from.

What a snapshot takes is what the scan found, less what the project's `.gitignore` files
ignore among files new to the index (git's own rule: a file once held stays held). Each file
is read and hashed by hermes-tui (objects.py), only when its stat differs from the one in
the stat cache (`files.json`: each held file's stat and blob); the index is then changed by
`git update-index --index-info` for what differs, so git never walks the tree: a nested
repository (`git init vendor`, a clone, a submodule) is a folder whose files are held, its
own `.git` left out, and neither `.gitattributes` nor any other file of the project is read
by git except `.gitignore` files (one that is not a regular file, say a FIFO, is never
given to git: what is under it is taken as not ignored).

The cache names the index it describes (the index file's inode, size and time) and the tree
written from it: one that does not match, or cannot be read, is started anew with an empty
index, so the two never disagree. A file changed within the racy window of the walk (see
scan.py) is cached with no stat, so the next snapshot reads it again.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.checkpoints import objects
from workbench.core.checkpoints.scan import Scan
from workbench.core.checkpoints.shadow import Project
from workbench.core.storage.atomic import atomic_write_text

LINK, PLAIN, EXECUTABLE = "120000", "100644", "100755"
NO_OID = "0" * 40
# (size, mtime_ns, ctime_ns, inode, st_mode, blob id): a cached file's stat and its blob
Cached = tuple[Any, ...]
KEPT_IN_MEMORY = 16  # stat caches (projects) kept parsed
_read: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


@dataclass
class State:
    """The files a snapshot of the working directory holds now, as git would."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # path → (mode, blob)
    unreadable: list[str] = field(default_factory=list)  # files that could not be read
    refused: list[str] = field(default_factory=list)  # names git would not put in a tree
    cache: dict[str, Cached] = field(default_factory=dict)  # the stat cache of `files`


@dataclass
class Cache:
    files: dict[str, Cached] = field(default_factory=dict)
    tree: str = ""  # the tree of the index it describes


def git_mode(st_mode: int) -> str:
    if stat.S_ISLNK(st_mode):
        return LINK
    return EXECUTABLE if st_mode & stat.S_IXUSR else PLAIN


def load_cache(project: Project, *, keep: bool = False) -> Cache:
    """The stat cache of the project's index; an empty one when it does not describe the
    index there now (and the index is removed, to be written anew, unless `keep`: a
    reader that does not hold the project's lock leaves both alone). The one read last is
    kept in memory while its file is unchanged (a turn then parses no JSON)."""
    try:
        seen = _file_stamp(project.cache_path)
        known = _read.get(project.cache_path)
        if known is not None and known[0] == seen:
            data = known[1]
        else:
            data = json.loads(project.cache_path.read_text(encoding="utf-8"))
            data["files"] = {rel: tuple(entry) for rel, entry in data["files"].items()}
            if len(_read) >= KEPT_IN_MEMORY:
                _read.clear()
            _read[project.cache_path] = (seen, data)
        if data["index"] == _index_stamp(project.index) and isinstance(data["files"], dict):
            return Cache(data["files"], str(data["tree"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if not keep:
        with contextlib.suppress(FileNotFoundError):
            project.index.unlink()
    return Cache()


def current(project: Project, found: Scan, cache: Cache, *, limit: int, write: bool) -> State:
    """What a snapshot of `found` holds, reading only the files whose stat changed since
    the cache; `write`: their blobs go into the store (a snapshot), else they are only
    named (a comparison with a checkpoint)."""
    state = State()
    new = [rel for rel in found.entries if rel not in cache.files]
    ignored = ignored_of(project, new, found.odd_ignores) if new else set()
    trusted = found.trusted_ns
    for rel, stamp in found.entries.items():
        if rel in ignored:
            continue
        old = cache.files.get(rel)
        if old is not None and old[:5] == stamp[:5]:
            state.files[rel] = (git_mode(stamp.mode), old[5])
            state.cache[rel] = old
            continue
        read = objects.read(os.path.join(project.cwd, rel), limit)
        if read is None:
            state.unreadable.append(rel)
            continue
        data, is_link = read
        oid = objects.write_blob(project.store, data) if write else objects.blob_id(data)
        mode = LINK if is_link else git_mode(stamp.mode)
        state.files[rel] = (mode, oid)
        if max(stamp.mtime_ns, stamp.ctime_ns) < trusted and mode == git_mode(stamp.mode):
            state.cache[rel] = (*stamp[:5], oid)
        else:  # no stat the next walk could match: it reads the file again
            st_mode = stat.S_IFLNK | 0o777 if is_link else stamp.mode
            state.cache[rel] = (-1, -1, -1, -1, st_mode, oid)
    return state


def ignored_of(project: Project, paths: list[str], odd: list[str]) -> set[str]:
    """Of `paths` (none in the index), those the project's `.gitignore` files ignore."""
    odd_prefixes = tuple(f"{folder}/" if folder else "" for folder in odd)
    asked = [p for p in paths if not (odd_prefixes and p.startswith(odd_prefixes))]
    if not asked:
        return set()
    # "./" first: a name starting with ':' would be read as pathspec magic (this command
    # takes no `literal`); it says each path back as it was given
    done = project.git().run(
        "check-ignore", "-z", "--stdin", ok=(0, 1),
        stdin=b"".join(b"./" + os.fsencode(p) + b"\0" for p in asked),
    )  # fmt: skip
    return {os.fsdecode(p[2:]) for p in done.stdout.split(b"\0") if p}


def write_index(project: Project, cache: Cache, state: State) -> str:
    """Make the project's index hold exactly `state.files`, save the cache, and return the
    index's tree. Names git refuses (it leaves them out of the index) are moved from
    `state.files` to `state.refused`."""
    gone = [rel for rel in cache.files if rel not in state.files]
    lines = [f"0 {NO_OID}\t{rel}" for rel in gone]  # removals first: a file may become a folder
    for rel, (mode, oid) in state.files.items():
        old = cache.files.get(rel)
        if old is None or old[5] != oid or git_mode(old[4]) != mode:
            lines.append(f"{mode} {oid}\t{rel}")
    git = project.git()
    tree = cache.tree
    if lines or not tree:
        if lines:
            stdin = b"".join(os.fsencode(line) + b"\0" for line in lines)
            git.run("update-index", "-z", "--replace", "--index-info", stdin=stdin)
        if index_entries(project.index) != len(state.files):
            _move_refused(project, state)
        tree = git.text("write-tree").strip()
    if lines or tree != cache.tree or state.cache != cache.files:
        data = {"index": _index_stamp(project.index), "tree": tree, "files": state.cache}
        # lost, it costs one read of every file: no fsync on a turn's path for it
        atomic_write_text(project.cache_path, json.dumps(data), mode=0o600, sync=False)
        _read[project.cache_path] = (_file_stamp(project.cache_path), data)  # tuples, as read
    return tree


def _move_refused(project: Project, state: State) -> None:
    listed = project.git().run("ls-files", "-z").stdout
    held = {os.fsdecode(p) for p in listed.split(b"\0") if p}
    for rel in [r for r in state.files if r not in held]:
        del state.files[rel]
        state.cache.pop(rel, None)
        state.refused.append(rel)


def _file_stamp(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    return info.st_ino, info.st_size, info.st_mtime_ns


def _index_stamp(index: Path) -> list[int] | None:
    try:
        info = index.stat()
    except FileNotFoundError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def index_entries(index: Path) -> int:
    """The number of entries in a git index file (its header), without a git process."""
    try:
        with open(index, "rb") as handle:
            header = handle.read(12)
        return struct.unpack(">I", header[8:12])[0] if header[:4] == b"DIRC" else 0
    except OSError:
        return 0
