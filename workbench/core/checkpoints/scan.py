"""One walk of the working directory: what a snapshot would hold, and whether it can.

The walk leaves out what `EXCLUDES` names (the same list goes to git as the store's
`info/exclude`), counts files and bytes against the caps (stopping as soon as one is passed,
so a huge tree costs a bounded walk, never a slow turn), lists files over the size cap and
unreadable folders, and sums a signature of every file's (path, size, mtime, ctime, inode):
an unchanged signature means an unchanged tree, with no git process at all.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

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


def excluded_file(name: str) -> bool:
    return (
        name in EXCLUDED_NAMES
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


@dataclass
class Scan:
    files: int = 0
    size: int = 0  # bytes of the files kept
    large: list[str] = field(default_factory=list)  # relative paths over the size cap
    unreadable: list[str] = field(default_factory=list)  # folders that could not be listed
    over: str = ""  # why the project is skipped, "" when it is not
    signature: str = ""
    skip: str | None = None  # a folder left out (HERMES_HOME inside the project)


def scan(
    cwd: str, *, max_files: int, max_bytes: int, max_total: int, skip: str | None = None
) -> Scan:
    """Walk `cwd` (a real path) once. `over` is set, and the walk stopped, past a cap;
    `skip` is a relative folder never entered.

    The signature is Python's hash of every kept file's (path, size, mtime, ctime, inode,
    mode): fast, and the same for the same tree within one process (another process's
    differs, which costs it one `git add` that finds no change)."""
    result = Scan(skip=skip)
    stamps: list[tuple[object, ...]] = []
    skip_path = os.path.join(cwd, skip) if skip else None
    stack = [cwd]
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError as exc:
            if folder == cwd:
                raise
            rel = os.path.relpath(folder, cwd)
            result.unreadable.append(f"{rel} ({exc.strerror or exc})")
            continue
        with entries:
            for entry in entries:
                name = entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if (
                            name not in EXCLUDED_DIRS
                            and not name.endswith(".egg-info")
                            and entry.path != skip_path
                        ):
                            stack.append(entry.path)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone while walked
                if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                    continue  # FIFOs, sockets, devices: git holds none of them
                if excluded_file(name):
                    continue
                if info.st_size > max_bytes and stat.S_ISREG(info.st_mode):
                    result.large.append(os.path.relpath(entry.path, cwd))
                    stamps.append((entry.path, "large"))  # leaving the snapshots is a change
                    continue
                result.files += 1
                result.size += info.st_size
                if result.files > max_files:
                    result.over = f"over {max_files:,} files (checkpoints.max_files)"
                    return result
                if max_total and result.size > max_total:
                    result.over = (
                        f"over {max_total // (1024 * 1024):,} MB of files "
                        "(checkpoints.max_total_size_mb)"
                    )
                    return result
                stamps.append(
                    (entry.path, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                     info.st_ino, info.st_mode)
                )  # fmt: skip
    result.signature = f"{os.getpid()}:{hash(tuple(stamps)) & (2**64 - 1):016x}"
    return result
