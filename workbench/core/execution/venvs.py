"""Python virtual environments a call changed, named in the session.

What a confined command writes into a project's venv runs later, unconfined: a `.pth` file
in `site-packages` runs at every start of that venv's python, a module there when the
project imports it, a script in `bin` when the person runs it, and `pyvenv.cfg` says which
python starts at all. Checkpoints leave `.venv` out, so the session names such a change
instead, with the files.

Venvs are found by their `pyvenv.cfg`, cheaply: in each writable place (the working
directory and `approvals.write_roots`) itself, its folders and a few usual names one
further (`sub/.venv`), never walking further or into `node_modules`, `.git` and the like.
A change is found by comparing, before and after the call, the entries that run: the top
level of each `site-packages` (where `.pth` files, `sitecustomize` and each package's
folder are), `bin`, and `pyvenv.cfg` itself, one `stat` each: for this repository's own
35,000-file venv, 529 entries, 1.6 ms a snapshot and 4-15 ms a call's before and after on
the loaded 2-core development machine, where stat-ing all of it took 300 ms and its folders
alone 80-100 ms (what the per-call cost rules out). A write the analysis names deeper
inside (`>> .venv/lib/…/requests/__init__.py`, a `write_file` there) is named too; an
in-place edit deep inside a package by a program whose writes are unknown is not, nor is
`__pycache__`, which every import rewrites.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass

MARKER = "pyvenv.cfg"
NOT_WALKED = frozenset({"node_modules", ".git", ".hg", ".svn", "__pycache__", ".tox", ".nox",
                        ".mypy_cache", ".pytest_cache", ".ruff_cache", "dist", "build", "target"})  # fmt: skip
NESTED = (".venv", "venv", "env", ".env")  # looked for one level further down
MAX_CHILDREN = 512  # folders of one place looked into
MAX_NAMED = 12  # files named in one note


@dataclass(frozen=True, slots=True)
class VenvChange:
    venv: str  # the venv's folder
    paths: tuple[str, ...]  # what changed (added, changed or removed), most telling first
    more: int = 0  # changed besides those named

    @property
    def runs_at_start(self) -> tuple[str, ...]:
        """The `.pth` files among them: python runs each at every start of this venv."""
        return tuple(p for p in self.paths if p.endswith(".pth"))

    def describe(self, cwd: str = "") -> str:
        names = [_short(p, cwd) for p in self.paths]
        shown = ", ".join(names) + (f" and {self.more} more" if self.more else "")
        pth = self.runs_at_start
        warn = (
            f"; {', '.join(_short(p, cwd) for p in pth)} runs at every start of its python"
            if pth
            else ""
        )
        return (
            f"the virtual environment {_short(self.venv, cwd)} changed: {shown}{warn}. Its "
            "python runs this outside the sandbox (checkpoints leave it out)"
        )


Snapshot = dict[str, tuple[int, int, int, int]]  # path -> (inode, size, mtime, ctime)


class Watch:
    """The venvs of the writable places around one call: taken before it, compared after."""

    def __init__(self, places: Iterable[str]) -> None:
        self.places = tuple(places)
        self.venvs = find(self.places)
        self.before = snapshot(self.venvs)

    def changes(self, written: Iterable[str] = ()) -> list[VenvChange]:
        venvs = list(dict.fromkeys([*self.venvs, *find(self.places)]))  # one it made, too
        return changes(self.before, snapshot(venvs), venvs, written)


def find(places: Iterable[str]) -> list[str]:
    """The venvs in `places` (each writable place, two levels at most), as real paths."""
    found: dict[str, None] = {}
    for place in places:
        for candidate in _candidates(place):
            if os.path.isfile(os.path.join(candidate, MARKER)):
                found.setdefault(os.path.realpath(candidate), None)
    return list(found)


def _candidates(place: str) -> list[str]:
    out = [place]
    try:
        with os.scandir(place) as entries:
            children = [e.path for e in entries if _walked(e)][:MAX_CHILDREN]
    except OSError:
        return out
    for child in children:
        out.append(child)
        out += [os.path.join(child, name) for name in NESTED]
    return out


def _walked(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False) and entry.name not in NOT_WALKED
    except OSError:
        return False


def running_parts(venv: str) -> list[str]:
    """The folders whose entries run: each site-packages, and bin."""
    parts = glob.glob(os.path.join(glob.escape(venv), "lib*", "python*", "site-packages"))
    return [*sorted(parts), os.path.join(venv, "bin")]


def snapshot(venvs: Iterable[str]) -> Snapshot:
    """Every entry that runs, in each venv: its identity, size and times."""
    found: Snapshot = {}
    for venv in venvs:
        _stat_into(found, os.path.join(venv, MARKER))
        for part in running_parts(venv):
            try:
                with os.scandir(part) as entries:
                    names = [e.path for e in entries if e.name != "__pycache__"]
            except OSError:
                continue
            for path in names:
                _stat_into(found, path)
    return found


def _stat_into(found: Snapshot, path: str) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    found[path] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def changes(
    before: Snapshot, after: Snapshot, venvs: Iterable[str], written: Iterable[str] = ()
) -> list[VenvChange]:
    """What differs between the two snapshots, and which of the files a call is known to
    have written (`written`, real paths) lie in a venv's running parts, per venv."""
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    found = []
    for venv in venvs:
        parts = [*running_parts(venv), os.path.join(venv, MARKER)]
        mine = {p for p in changed if _inside(p, venv)}
        mine |= {p for p in written if any(_inside(p, part) for part in parts)}
        mine = {p for p in mine if "__pycache__" not in p.split("/") and not p.endswith(".pyc")}
        if mine:
            ordered = sorted(mine, key=lambda p: (not p.endswith(".pth"), p))
            found.append(
                VenvChange(venv, tuple(ordered[:MAX_NAMED]), max(0, len(ordered) - MAX_NAMED))
            )
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _short(path: str, cwd: str) -> str:
    if cwd and _inside(path, cwd) and path != cwd:
        return os.path.relpath(path, cwd)
    return path
