"""What a confined command may not write even inside the places it may: whatever hermes-tui
or the person's git would later run unconfined.

* `.hermes` in each writable place (a trusted project's rules and plugins): read-only when
  it exists; where it does not, an empty folder is made on the host as the mount point of a
  read-only one, so a command cannot create it (`mkdir`, `patch -p1`, `git apply`,
  `cp -r`...). It holds only a `.gitignore` of `*`, so that git leaves it alone (`git
  stash -u` and `git clean -fd` would fail on a folder they cannot remove). A `.hermes`
  that is a link cannot be held (a command could replace the link): the command is refused.
* The git dir's executable parts: `.git/config` (and `config.worktree`) and `.git/hooks`,
  the same for each submodule's git dir (`.git/modules/...`) and each linked worktree
  (`.git/worktrees/*`: its `commondir`, `gitdir` and config), and a `.git` that is a file
  (`gitdir: ...`). Each git dir is bound onto itself, so it cannot be renamed away and
  replaced by one the command wrote. A missing hooks folder gets a placeholder as `.hermes`.

A placeholder lives as long as a command of ours uses it. Each command takes a shared lock
(flock) on every folder it holds; when it ends, a placeholder (marked by an extended
attribute) is removed if no other command, of this process or another, holds it and it is
still empty. A hermes-tui killed meanwhile leaves an empty, marked folder: the next command
that holds it removes it when done. Where extended attributes cannot be set, a placeholder
left that way stays, empty.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from workbench.core.backends.layout import inside

MARK = "user.hermes-tui.placeholder"
# In a placeholder `.hermes`: git leaves a folder of ignored files alone, so `git stash -u`
# and `git clean -fd` in the sandbox do not fail on a folder they cannot remove.
IGNORE = (".gitignore", b"*\n")
MODULE_DEPTH = 4  # submodules of submodules, this deep
MODULES = 64  # at most this many submodule git dirs held per repository
_UNMAKEABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


class HeldError(Exception):
    """Something in a writable place cannot be held read-only: nothing may run."""


@dataclass
class Holding:
    """What one command holds while it runs: the mounts, and the locks on folders."""

    pinned: list[str] = field(default_factory=list)  # bound onto themselves, writable
    read_only: list[str] = field(default_factory=list)
    _locks: list[tuple[int, str]] = field(default_factory=list)

    def argv(self) -> list[str]:
        out: list[str] = []
        for place in self.pinned:
            out += ["--bind", place, place]
        for place in self.read_only:
            out += ["--ro-bind", place, place]
        return out

    def release(self) -> None:
        """The command has ended: drop its locks, and its placeholders no one else holds."""
        locks, self._locks = self._locks, []
        for fd, path in locks:
            try:
                _remove_if_unused(fd, path)
            finally:
                os.close(fd)


def hold(writable: Sequence[str]) -> Holding:
    """Hold `.hermes` and the git dirs' executable parts of each writable place (resolved
    folders); on failure nothing stays held."""
    holding = Holding()
    try:
        seen: set[str] = set()
        for place in writable:
            _hermes(holding, posixpath.join(place, ".hermes"))
            _git(holding, place, writable, seen)
    except BaseException:
        holding.release()
        raise
    return holding


def _hermes(holding: Holding, path: str) -> None:
    if os.path.islink(path):
        raise HeldError(
            f"{path} is a link ({os.readlink(path)}), which the sandbox cannot hold read-only "
            "(a command could replace it with a folder of its own rules and plugins); make "
            "it the folder it leads to"
        )
    a_file = os.path.lexists(path) and not os.path.isdir(path)
    if a_file or _lock_folder(holding, path, ignored=True):
        holding.read_only.append(path)


def _git(holding: Holding, place: str, writable: Sequence[str], seen: set[str]) -> None:
    dot_git = posixpath.join(place, ".git")
    if os.path.isfile(dot_git) and not os.path.islink(dot_git):
        holding.read_only.append(dot_git)  # `gitdir: ...`: where the repository's git dir is
        gitdir = _pointer(dot_git, "gitdir:")
        if gitdir is not None and inside(gitdir, writable):
            _gitdir(holding, gitdir, writable, seen, 0)
    elif os.path.isdir(dot_git):
        gitdir = os.path.realpath(dot_git)
        if inside(gitdir, writable):
            _gitdir(holding, gitdir, writable, seen, 0)


def _gitdir(
    holding: Holding, gitdir: str, writable: Sequence[str], seen: set[str], level: int
) -> None:
    if gitdir in seen or len(seen) > MODULES:
        return
    seen.add(gitdir)
    holding.pinned.append(gitdir)
    _read_only(holding, gitdir, ("config", "config.worktree", "commondir", "gitdir"))
    common = _pointer(posixpath.join(gitdir, "commondir"), "", base=gitdir)
    if common is None:  # a repository's own git dir (not a linked worktree's): its hooks
        hooks = posixpath.join(gitdir, "hooks")
        if os.path.islink(hooks):
            holding.read_only.append(hooks)  # bound where it leads
        elif _lock_folder(holding, hooks):
            holding.read_only.append(hooks)
    elif inside(common, writable):
        _gitdir(holding, common, writable, seen, level)
    _checkout(holding, gitdir, writable)
    for worktree in _children(posixpath.join(gitdir, "worktrees")):
        _gitdir(holding, worktree, writable, seen, level)
    if level < MODULE_DEPTH:
        for module in _modules(posixpath.join(gitdir, "modules"), 0):
            _gitdir(holding, module, writable, seen, level + 1)


def _checkout(holding: Holding, gitdir: str, writable: Sequence[str]) -> None:
    """The `.git` file of a submodule's or a linked worktree's checkout, when it lies in a
    writable place: a command could point it at a git dir of its own."""
    found = _pointer(posixpath.join(gitdir, "gitdir"), "", base=gitdir)  # a worktree's
    if found is not None:
        dot_git = found
    else:
        worktree = _config_value(posixpath.join(gitdir, "config"), "worktree")
        if worktree is None:
            return
        dot_git = posixpath.join(os.path.realpath(posixpath.join(gitdir, worktree)), ".git")
    if os.path.isfile(dot_git) and not os.path.islink(dot_git) and inside(dot_git, writable):
        holding.read_only.append(dot_git)


def _read_only(holding: Holding, folder: str, names: Iterable[str]) -> None:
    for name in names:
        path = posixpath.join(folder, name)
        if os.path.exists(path):
            holding.read_only.append(path)


def _modules(folder: str, level: int) -> list[str]:
    """The git dirs under `.git/modules` (a submodule named `a/b` is `modules/a/b`)."""
    found = []
    for child in _children(folder):
        if os.path.isfile(posixpath.join(child, "HEAD")):
            found.append(child)
        elif level < MODULE_DEPTH:
            found += _modules(child, level + 1)
    return found[:MODULES]


def _children(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as found:
            return sorted(e.path for e in found if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _pointer(path: str, prefix: str, base: str | None = None) -> str | None:
    """The resolved path a small pointer file names (`gitdir: X`, a `commondir`), relative
    to `base` (default: the file's folder)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096).strip()
    except OSError:
        return None
    if not text.startswith(prefix):
        return None
    value = text[len(prefix) :].strip()
    if not value:
        return None
    return os.path.realpath(posixpath.join(base or posixpath.dirname(path), value))


def _config_value(path: str, key: str) -> str | None:
    """`core.<key>` of a git config file, read plainly (enough for `worktree = ../../x`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(65536).splitlines()
    except OSError:
        return None
    section = ""
    for line in lines:
        text = line.strip()
        if text.startswith("["):
            section = text.strip("[] ").lower()
        elif section == "core" and "=" in text:
            name, _, value = text.partition("=")
            if name.strip().lower() == key:
                return value.strip().strip('"')
    return None


def _lock_folder(holding: Holding, path: str, *, ignored: bool = False) -> bool:
    """Take a shared lock on the folder at `path`, making an empty, marked one first when
    there is none (`ignored`: with a `.gitignore` that ignores all of it). False when there
    is nothing to hold: it cannot be made here, so no command of ours can make it either."""
    for _ in range(8):
        made = _make(path, ignored)
        if made is None:
            return False
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # removed by a command that was ending: make it again
        except OSError as exc:
            raise HeldError(f"{path} cannot be held read-only: {exc.strerror}") from exc
        with contextlib.suppress(OSError):  # no locks here: a placeholder may then stay
            fcntl.flock(fd, fcntl.LOCK_SH)  # one that removes it holds it a moment only
        if _same(fd, path):
            holding._locks.append((fd, path))
            return True
        os.close(fd)  # it was removed and made again meanwhile
    raise HeldError(f"{path} cannot be held read-only: it keeps being replaced")


def _make(path: str, ignored: bool) -> bool | None:
    """Make the placeholder: True when made, False when one was there, None when it
    cannot be made (no permission, a read-only file system)."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno in _UNMAKEABLE:
            return None
        raise HeldError(f"{path} cannot be made as a placeholder: {exc.strerror}") from exc
    with contextlib.suppress(OSError):  # not on every file system: it then stays when left
        os.setxattr(path, MARK, b"1", follow_symlinks=False)
    if ignored:
        with contextlib.suppress(OSError), open(posixpath.join(path, IGNORE[0]), "xb") as f:
            f.write(IGNORE[1])
    return True


def _only_ours(fd: int) -> bool:
    """The placeholder holds nothing but what we put in it."""
    names = os.listdir(fd)
    if not names:
        return True
    if names != [IGNORE[0]]:
        return False
    try:
        found = os.open(IGNORE[0], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError:
        return False
    try:
        return os.read(found, 64) == IGNORE[1]
    finally:
        os.close(found)


def _same(fd: int, path: str) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _remove_if_unused(fd: int, path: str) -> None:
    """Remove a marked placeholder when no one else holds it and it is still empty; a
    placeholder someone filled (the person, on the host) is theirs: unmarked."""
    try:
        os.getxattr(fd, MARK)
    except OSError:
        return  # not a placeholder (or no marks here)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another command holds it (the last one removes it), or no locks here
    if not _only_ours(fd):
        with contextlib.suppress(OSError):
            os.removexattr(fd, MARK)
        return
    if _same(fd, path):
        with contextlib.suppress(OSError):
            if os.listdir(fd):
                os.unlink(IGNORE[0], dir_fd=fd)
            os.rmdir(path)
