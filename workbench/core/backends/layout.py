"""What a sandboxed command sees of the file system, as bubblewrap arguments.

* **The writable places** are fixed for the session: its working directory and the
  directories of `approvals.write_roots` (those that exist, resolved). Nothing a call passes
  (the terminal's `workdir` is only where the command starts) adds one.
* **Each home is default-deny** (see `core/safety/secrets.py`): an empty tmpfs over it,
  every non-dot entry bound back (writable only when a writable place covers it, as when the
  working directory is the home), each shown dot unit read-only, the same one level down in
  `.config`, `.local` and `.local/share`; every entry that is a link is made again as the
  same link, never bound through (what it leads to is judged where it leads). Those tmpfs
  end read-only, so no new name can be made at the top of a home.
* **Covered last**: hermes-tui's own state, the credential stores inside shown units
  (`~/.cargo/credentials.toml`), the places a hidden dot entry links to, and what the user
  hides (`terminal.bubblewrap_hide`): a read-only empty folder over a folder, `/dev/null`
  over a file.

The order of the mounts is the design: writable places outside the homes, then the homes
(outer first), then writable places inside a home, then what is held read-only inside the
writable places (`held.py`), then the covers, then the tmpfs made read-only.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from workbench.core.safety import secrets
from workbench.core.safety.secrets import within


class LayoutError(Exception):
    """The sandbox cannot be laid out so that it holds: nothing may run (says why)."""


@dataclass
class Layout:
    """The mounts of one command, in order, and the tmpfs to make read-only at the end."""

    argv: list[str] = field(default_factory=list)
    sealed: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)  # link targets held read-only

    def finish(self) -> list[str]:
        out = list(self.argv)
        for place in self.sealed:
            out += ["--remount-ro", place]
        return out


def real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def depth(path: str) -> int:
    return path.rstrip("/").count("/")


def inside(path: str, places: Iterable[str]) -> str | None:
    """The first of `places` that `path` is or lies under."""
    return next((p for p in places if within(path, p)), None)


def homes() -> list[str]:
    """Our homes, outer first (a test's fake home may lie inside the account's)."""
    return sorted(secrets.our_homes(), key=depth)


def lay_out(writable: Sequence[str]) -> Layout:
    """The writable places (resolved, the working directory first) and the homes' layout,
    in order; what `held.py` holds and `cover` covers go after."""
    layout = Layout()
    laid = homes()
    binds = [w for w in writable if w not in laid]  # a home that is one: its layout says
    inner = [w for w in binds if any(within(w, h) for h in laid)]
    for place in binds:
        if place not in inner:
            layout.argv += ["--bind", place, place]
    for home in laid:
        _home(layout, home, writable)
    for place in sorted(inner, key=depth):
        layout.argv += ["--bind", place, place]
    return layout


def cover(layout: Layout, places: Sequence[str], writable: Sequence[str]) -> None:
    """Cover each place that a command would otherwise see (after every bind), unless it
    holds a writable place (the working directory inside one is refused before this)."""
    laid = homes()
    done: set[str] = set()
    for place in places:
        if place in done or not os.path.exists(place) or os.path.islink(place):
            continue
        done.add(place)
        if absent(place, laid, writable) or any(within(w, place) for w in [*writable, *laid]):
            continue
        if depth(place) < 2:
            continue  # a hidden link to /usr or /opt must not take the system away
        if os.path.isdir(place):
            layout.argv += ["--tmpfs", place]
            layout.sealed.append(place)
        else:
            layout.argv += ["--ro-bind", "/dev/null", place]


def absent(path: str, homes: Sequence[str], writable: Sequence[str]) -> bool:
    """`path` does not exist in the sandbox: it lies in a dot unit of a home that is not
    shown (and in no writable place bound on top: a home that is one shows what it shows)."""
    if inside(path, [w for w in writable if w not in homes]):
        return False
    for home in homes:
        if path == home or not within(path, home):
            continue
        unit = secrets.allow_unit(path[len(home.rstrip("/")) + 1 :])
        if unit is not None and unit not in secrets.shown_units(home):
            return True
    return False


def _home(layout: Layout, home: str, writable: Sequence[str]) -> None:
    shown = secrets.shown_units(home)
    layout.argv += ["--tmpfs", home]
    layout.sealed.append(home)
    deny_dirs = []
    for name, mode in _entries(home):
        path = posixpath.join(home, name)
        if not name.startswith("."):
            _show(layout, path, mode, writable=inside(path, writable) is not None)
        elif name in secrets.DEFAULT_DENY_DIRS:
            deny_dirs.append((name, path, mode))
        elif name in shown:
            _show(layout, path, mode, writable=False)
            _hold_link_target(layout, path, mode, writable)
    for name, path, mode in deny_dirs:
        _deny_dir(layout, name, path, mode, shown)


def _deny_dir(layout: Layout, rel: str, path: str, mode: int, shown: frozenset[str]) -> None:
    """`.config`, `.local`, `.local/share`: only their shown children are seen. One that is a
    link is made again, and the folder it leads to gets the same layout."""
    if stat.S_ISLNK(mode):
        layout.argv += ["--symlink", os.readlink(path), path]
        path = os.path.realpath(path)
        if not os.path.isdir(path):
            return
    elif not stat.S_ISDIR(mode):
        return
    layout.argv += ["--tmpfs", path]
    layout.sealed.append(path)
    nested = []
    for name, child_mode in _entries(path):
        unit = f"{rel}/{name}"
        child = posixpath.join(path, name)
        if unit in secrets.DEFAULT_DENY_DIRS:
            nested.append((unit, child, child_mode))
        elif unit in shown:
            _show(layout, child, child_mode, writable=False)
    for unit, child, child_mode in nested:
        _deny_dir(layout, unit, child, child_mode, shown)


def _show(layout: Layout, path: str, mode: int, *, writable: bool) -> None:
    if stat.S_ISLNK(mode):
        layout.argv += ["--symlink", os.readlink(path), path]
    else:
        layout.argv += ["--bind" if writable else "--ro-bind", path, path]


def _hold_link_target(layout: Layout, path: str, mode: int, writable: Sequence[str]) -> None:
    """A shown dot entry that is a link into a writable place (`~/.bashrc` ->
    `~/dotfiles/bashrc` with the working directory `~/dotfiles`) would let a command change
    what the user's shells run: the file it leads to is held read-only too, and a link to
    nothing there yet (which a command could create) refuses the sandbox."""
    if not stat.S_ISLNK(mode):
        return
    target = os.path.realpath(path)
    place = inside(target, writable)
    if place is None:
        return
    if not os.path.lexists(target):
        raise LayoutError(
            f"{path} links to {target}, which does not exist and lies in {place}, where "
            "commands may write: one could create it and change what your shells run"
        )
    layout.read_only.append(target)


def unseen() -> list[str]:
    """The entries of our homes a command cannot see (the dot units not shown, and where
    each that is a link leads), as they exist now: the file tools are held to the same."""
    found: list[str] = []
    for home in homes():
        shown = secrets.shown_units(home)
        _unseen(home, "", shown, found)
    return found


def _unseen(folder: str, rel: str, shown: frozenset[str], found: list[str]) -> None:
    for name, mode in _entries(folder):
        unit = f"{rel}/{name}" if rel else name
        path = posixpath.join(folder, name)
        if not rel and not name.startswith("."):
            continue
        if unit in secrets.DEFAULT_DENY_DIRS:
            _unseen(os.path.realpath(path), unit, shown, found)
        elif unit not in shown:
            found.append(path)
            if stat.S_ISLNK(mode):
                found.append(os.path.realpath(path))


def _entries(folder: str) -> list[tuple[str, int]]:
    try:
        with os.scandir(folder) as found:
            return sorted((e.name, e.stat(follow_symlinks=False).st_mode) for e in found)
    except OSError:
        return []
