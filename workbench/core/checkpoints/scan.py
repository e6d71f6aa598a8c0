"""One walk of the working directory: what a snapshot would hold, and whether it can.

The walk leaves out what `EXCLUDES` names (the same list goes to git as the store's
`info/exclude`), counts files and bytes against the caps (stopping as soon as one is passed,
so a huge tree costs a bounded walk, never a slow turn), lists files over the size cap and
unreadable folders, and keeps each file's stat (`Stamp`): the stat cache compares them with
the last snapshot's, and their signature, the same for an unchanged tree, lets a turn skip
everything else. A nested repository is a folder like any other: its files are walked, its
own `.git` left out like the project's.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

# Directories never entered: VCS data, dependencies, build output, caches, virtualenvs.
EXCLUDED_DIRS = frozenset(
    """
    .git .hg .svn .bzr .jj .worktrees
    node_modules bower_components .yarn .pnpm-store
    dist build target out .next .nuxt .svelte-kit .parcel-cache
    __pycache__ .cache .pytest_cache .mypy_cache .ruff_cache .tox .nox .hypothesis .eggs
    coverage htmlcov .gradle .terraform
    .venv venv env .direnv .conda
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
# Files left out by name: compiled code, archives, media, logs, secrets, OS litter.
EXCLUDED_SUFFIXES = tuple(
    """
    .pyc .pyo .so .dylib .dll .o .a .obj .exe .class .jar .whl .egg
    .zip .tar .tgz .gz .bz2 .xz .zst .7z .rar .iso .dmg
    .mp4 .mov .mkv .webm .avi .mp3 .wav .flac .ogg
    .log .sqlite-journal .swp
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
EXCLUDED_NAMES = frozenset({".env", ".DS_Store", "Thumbs.db", ".coverage"})
EXCLUDED_PREFIXES = (".env.",)  # .env.local, .env.production: secrets


def excluded_dir(name: str) -> bool:
    # `.GIT` too: git refuses a path through any spelling of `.git`
    return name in EXCLUDED_DIRS or name.endswith(".egg-info") or _is_git(name)


def _is_git(name: str) -> bool:
    return len(name) == 4 and name.lower() == ".git"


def excluded_file(name: str) -> bool:
    return (
        name in EXCLUDED_NAMES
        or _is_git(name)  # a submodule's or a worktree's link to its git folder
        or name.endswith(EXCLUDED_SUFFIXES)
        or name.startswith(EXCLUDED_PREFIXES)
        or name.endswith(".egg-info")
    )


def exclude_file_text() -> str:
    """The same list, in gitignore syntax, for the store's `info/exclude`."""
    lines = [f"{name}/" for name in sorted(EXCLUDED_DIRS)]
    lines += ["*.egg-info", *sorted(EXCLUDED_NAMES), ".env.*"]
    lines += [f"*{suffix}" for suffix in EXCLUDED_SUFFIXES]
    return "\n".join(lines) + "\n"


# a file changed this close to the walk may change again unseen (a clock tick, or more)
RACY_NS = 100_000_000
COARSE_NS = 3_000_000_000


class Stamp(NamedTuple):
    """What the walk saw of one file: a change to it changes one of these (its ctime at least)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    mode: int  # st_mode: the type and all permission bits
    uid: int
    gid: int


@dataclass
class Scan:
    files: int = 0
    size: int = 0  # bytes of the files kept
    large: list[str] = field(default_factory=list)  # relative paths over the size cap
    unreadable: list[str] = field(default_factory=list)  # folders that could not be listed
    over: str = ""  # why the project is skipped, "" when it is not
    signature: str = ""
    skip: str | None = None  # a folder left out (HERMES_HOME inside the project)
    # the files and symbolic links a snapshot takes, by '/'-separated relative path
    entries: dict[str, Stamp] = field(default_factory=dict)
    # folders whose `.gitignore` is not a regular file (a FIFO would hang git reading it):
    # what is under them is never given to git's ignore check
    odd_ignores: list[str] = field(default_factory=list)
    # some file changed within RACY_NS of the walk: a change in the same clock tick would
    # leave its stat as it is, so neither the signature nor the stat cache may be trusted
    racy: bool = False
    trusted_ns: int = 0  # a file last changed before this has a stat that can be trusted
    newest_ns: int = 0  # the last change to any file (its mtime or ctime)
    fine: bool = False  # some file's times have sub-second parts (else: whole seconds)


def scan(
    cwd: str, *, max_files: int, max_bytes: int, max_total: int, skip: str | None = None
) -> Scan:
    """Walk `cwd` (a real path) once. `over` is set, and the walk stopped, past a cap (0:
    no cap); `skip` is a relative folder never entered.

    The signature is Python's hash of every kept file's stamp: fast, and the same for the
    same tree within one process (another process's differs, which costs it one look at
    the stat cache)."""
    started = time.time_ns()
    result = Scan(skip=skip)
    cut = len(cwd.rstrip("/")) + 1
    skip_path = os.path.join(cwd, skip) if skip else None
    stack = [cwd]
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError as exc:
            if folder == cwd:
                raise
            result.unreadable.append(f"{folder[cut:]} ({exc.strerror or exc})")
            continue
        with entries:
            _folder(result, entries, stack, skip_path, cut, max_bytes)
        if max_files and result.files > max_files:
            result.over = f"over {max_files:,} files (checkpoints.max_files)"
            return result
        if max_total and result.size > max_total:
            result.over = (
                f"over {max_total // (1024 * 1024):,} MB of files (checkpoints.max_total_size_mb)"
            )
            return result
    # a file changed this close to the walk may change again in the same clock tick, unseen
    result.trusted_ns = started - (RACY_NS if result.fine else COARSE_NS)
    result.racy = result.newest_ns >= result.trusted_ns
    stamps = (tuple(result.entries.items()), tuple(result.large))
    result.signature = f"{os.getpid()}:{hash(stamps) & (2**64 - 1):016x}"
    return result


def _folder(
    result: Scan, entries: Iterator[os.DirEntry[str]], stack: list[str],
    skip_path: str | None, cut: int, max_bytes: int,
) -> None:  # fmt: skip
    """One folder's entries: folders to walk, files to take. (One loop, no call per
    entry: a turn's walk of thousands of files is most of what an unchanged tree costs.)"""
    found = result.entries
    newest, fine = result.newest_ns, result.fine
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if not excluded_dir(name) and entry.path != skip_path:
                    stack.append(entry.path)
                continue
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone while walked
        mode = info.st_mode
        regular = stat.S_ISREG(mode)
        if name == ".gitignore" and not regular:
            result.odd_ignores.append(os.path.dirname(entry.path[cut:]))
        if not (regular or stat.S_ISLNK(mode)) or excluded_file(name):
            continue  # FIFOs, sockets, devices: git holds none of them
        rel = entry.path[cut:]
        size, mtime, ctime = info.st_size, info.st_mtime_ns, info.st_ctime_ns
        if regular and size > max_bytes:
            result.large.append(rel)  # leaving the snapshots is a change (in the signature)
            continue
        result.files += 1
        result.size += size
        newest = max(newest, mtime, ctime)
        fine = fine or mtime % 1_000_000_000 != 0
        found[rel] = _stamp(
            Stamp, (size, mtime, ctime, info.st_ino, mode, info.st_uid, info.st_gid)
        )
    result.newest_ns, result.fine = newest, fine


_stamp = tuple.__new__  # a Stamp from a tuple, without NamedTuple's slower constructor
