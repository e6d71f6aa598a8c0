"""What writing or reading a path means, judged on where it really is (after symlinks).

One policy for every writer (write_file, patch, a shell redirection, cp, tee, ln, ...):

* refused, whatever is approved: hermes-tui's own state (`HERMES_HOME`, the models
  directory, a project's approval rules in `.hermes/approvals.yaml`), credentials Hermes's file tools already refuse to write (SSH keys and
  `authorized_keys` of any user, cloud and registry credentials, `/etc/sudoers`, `passwd`,
  `shadow`), the kernel's sysrq trigger, and replacing a device with a regular file;
* asked, with high severity: system paths, `/proc` and `/sys`, devices, shell and editor
  start-up files, `.env` files, `.git/config` and hooks, directories on `PATH`;
* asked: anything outside the session's working directory and the roots the user added
  (`approvals.write_roots`).

Reading is free except secret places (secrets.py's one definition), which only a person may
allow: `read_risk`.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from workbench.core.safety import secrets
from workbench.core.safety.parser import home_dir
from workbench.core.safety.verdict import Severity


@dataclass(frozen=True, slots=True)
class PathRisk:
    rule: str  # "app-state", "refused-write", "sensitive-write", "outside-write", ...
    reason: str  # completes "X ... because it is": what the place is
    severity: Severity


SYSTEM_PREFIXES = ("/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib", "/var/spool/cron")
# Sinks a shell redirection may write to: they keep nothing.
SINKS = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty"})
RAW_DISK = re.compile(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|loop\d|"
    r"root$|mapper/|disk/|mem$|kmem$|port$)"
)
# Written by anyone, these never run: Hermes's own write-deny list, and more of its kind.
_REFUSED_ANY_HOME = (
    ".ssh/",
    ".aws/",
    ".gnupg/",
    ".kube/",
    ".docker/",
    ".azure/",
    ".config/gh/",
    ".config/gcloud/",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
)
_REFUSED_SYSTEM = (
    "/etc/sudoers",
    "/etc/sudoers.d/",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/systemd/",
    "/proc/sysrq-trigger",
)
# Start-up, autostart and persistence files: writing them changes what later runs.
_STARTUP_ANY_HOME = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".kshrc",
    ".mkshrc",
    ".inputrc",
    ".pam_environment",
    ".config/environment.d/",
    ".config/fish/",
    ".vimrc",
    ".gvimrc",
    ".exrc",
    ".vim/",
    ".config/nvim/",
    ".nanorc",
    ".emacs",
    ".emacs.d/",
    ".config/emacs/",
    ".tmux.conf",
    ".screenrc",
    ".xinitrc",
    ".xprofile",
    ".xsession",
    ".xsessionrc",
    ".Xresources",
    ".gitconfig",
    ".config/git/",
    ".curlrc",
    ".wgetrc",
    ".config/autostart/",
    ".config/systemd/",
    ".local/share/",
    ".local/bin/",
    "bin/",
    ".bash_history",
    ".zsh_history",
)
_ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.(?!example$|sample$|template$|dist$)[^/]*)?$")


def state_roots() -> tuple[str, ...]:
    """hermes-tui's own state: HERMES_HOME and the models directory, as written and resolved."""
    key = tuple(os.environ.get(k, "") for k in ("HERMES_HOME", "HOME", "HERMES_TUI_MODELS_DIR"))
    if _STATE_ROOTS.get(key) is None:
        _STATE_ROOTS.clear()
        _STATE_ROOTS[key] = _state_roots()
    return _STATE_ROOTS[key]


_STATE_ROOTS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _state_roots() -> tuple[str, ...]:
    from workbench.core.config import hermes_home

    home = hermes_home()
    places = [str(home), os.environ.get("HERMES_TUI_MODELS_DIR") or ""]
    found: dict[str, None] = {}
    for place in places:
        if place:
            found.setdefault(posixpath.normpath(os.path.abspath(place)), None)
            found.setdefault(os.path.realpath(place), None)
    return tuple(found)


def within(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


def _home_rest(path: str) -> str | None:
    """The part of `path` under a home directory (yours, root's or any user's), or None."""
    home = home_dir().rstrip("/")
    if home and path.startswith(home + "/"):
        return path[len(home) + 1 :]
    match = re.match(r"^(?:/root|/home/[^/]+)/(.+)$", path)
    return match.group(1) if match else None


@functools.lru_cache(maxsize=8)
def _matcher(entries: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a list of names (`.bashrc`) and directories (`.ssh/`, with contents)."""
    parts = [re.escape(e.rstrip("/")) + ("(?:/.*)?" if e.endswith("/") else "") for e in entries]
    return re.compile("(?:" + "|".join(parts) + ")", re.DOTALL)


def _under(rest: str, entries: tuple[str, ...]) -> bool:
    return _matcher(entries).fullmatch(rest) is not None


def _path_dirs() -> frozenset[str]:
    return _dirs_on(os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=4)
def _dirs_on(path: str) -> frozenset[str]:
    return frozenset(posixpath.normpath(e) for e in path.split(os.pathsep) if e.startswith("/"))


def device_kind(path: str) -> str:
    """ "block", "char" or "" for what is at `path` now (links followed)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISBLK(mode):
        return "block"
    if stat.S_ISCHR(mode):
        return "char"
    return ""


def raw_disk(path: str | None) -> bool:
    if not path:
        return False
    return bool(RAW_DISK.match(path)) or device_kind(path) == "block"


def write_risk(
    path: str,
    *,
    cwd: str | None = None,
    roots: tuple[str, ...] = (),
    replaces: bool = False,
) -> PathRisk | None:
    """How writing `path` (absolute; links are followed here) is judged, or None if free.

    `replaces` is for writers that put a new file in place (write_file): over a device,
    even /dev/null, that would break the system, so it is refused.
    """
    real = resolved(path)
    for place in dict.fromkeys((real, posixpath.normpath(path))):
        risk = place_risk(place, replaces)
        if risk is not None:
            return risk
    if cwd is not None and not any(within(real, r) for r in _roots(cwd, roots)):
        return PathRisk(
            "outside-write", "outside the working directory and the write roots", Severity.NORMAL
        )
    return None


def _roots(cwd: str, roots: tuple[str, ...]) -> list[str]:
    return [os.path.realpath(r) for r in (cwd, *roots)]


def place_risk(path: str, replaces: bool = False, *, state: bool = True) -> PathRisk | None:
    """How writing at `path` (already resolved as the writer resolves it) is judged.
    `state=False`: all but its being in HERMES_HOME (skill_manage's skills folder)."""
    if state and any(within(path, root) for root in state_roots()):
        return PathRisk("app-state", "hermes-tui's own state (HERMES_HOME)", Severity.HARDLINE)
    device = device_kind(path)
    if RAW_DISK.match(path) or device == "block":
        return PathRisk("disk", "a raw disk or memory device", Severity.HARDLINE)
    if replaces and device:
        return PathRisk("device", f"a {device} device (it would be replaced)", Severity.HARDLINE)
    if path in SINKS or path.startswith("/dev/fd/"):
        return None
    rest = _home_rest(path)
    if (rest is not None and _under(rest, _REFUSED_ANY_HOME)) or _under(path, _REFUSED_SYSTEM):
        return PathRisk("refused-write", "a credential or account file", Severity.HARDLINE)
    if device or path.startswith(("/dev/", "/proc/", "/sys/")) or path in ("/proc", "/sys"):
        return PathRisk("sensitive-write", "a device or kernel interface", Severity.HIGH)
    if rest is not None and _under(rest, _STARTUP_ANY_HOME):
        return PathRisk("sensitive-write", "a start-up or autostart file", Severity.HIGH)
    if path.startswith(SYSTEM_PREFIXES):
        return PathRisk("sensitive-write", "a system file", Severity.HIGH)
    if _PROJECT_RULES.search(path):  # the agent must not write its own approval rules
        return PathRisk("app-state", "a project's approval rules", Severity.HARDLINE)
    if _PROJECT_PLUGINS.search(path):  # hot reload would run it inside the workbench, unasked
        return PathRisk("app-state", "a project plugin's code", Severity.HARDLINE)
    if _GIT_PROGRAMS.search(path):
        return PathRisk("sensitive-write", "a git configuration or hook", Severity.HIGH)
    if _ENV_FILE.search(path):
        return PathRisk("sensitive-write", "an environment file holding secrets", Severity.HIGH)
    if posixpath.dirname(path) in _path_dirs():
        return PathRisk("sensitive-write", "a directory on PATH", Severity.HIGH)
    return None


# A repository's settings and hooks, and those of its submodules (`.git/modules/NAME/`) and
# worktrees, and a `.git` file (`gitdir: ../x` makes git read x/config): each names programs
# git runs later, unasked.
_GIT_PROGRAMS = re.compile(
    r"/\.git(?:/(?:modules/.+/|worktrees/[^/]+/)?(?:config|config\.worktree|hooks/.*|hooks))?$",
    re.DOTALL,
)


def tree_risk(path: str) -> PathRisk | None:
    """Writing a whole tree into the folder `path` (rsync, tar -C, cp -r): the guarded
    places it holds may be among what lands there."""
    path = path.rstrip("/") or "/"
    if posixpath.basename(path) == ".hermes":
        reason = "a .hermes folder (a project's approval rules and plugins)"
        return PathRisk("app-state", reason, Severity.HARDLINE)
    if posixpath.basename(path) == ".git" or _GIT_FOLDER.search(path):
        return PathRisk("sensitive-write", "a git folder (its hooks and settings)", Severity.HIGH)
    homes = {home_dir().rstrip("/"), resolved(home_dir())}
    if path in homes or re.fullmatch(r"/home/[^/]+|/root", path):
        reason = "a home folder (its keys and start-up files)"
        return PathRisk("sensitive-write", reason, Severity.HIGH)
    return None


_GIT_FOLDER = re.compile(r"/\.git/(?:modules/.+|worktrees/[^/]+|hooks)$", re.DOTALL)
_PROJECT_RULES = re.compile(r"/\.hermes/approvals\.ya?ml$")
_PROJECT_PLUGINS = re.compile(r"/\.hermes/plugins(?:/|$)")


SECRET_READ = "credential-read"  # the finding of a read of a secret place


def secret(path: str, real: str | None = None) -> str | None:
    """Why reading `path` (absolute) would show the model a secret, as secrets.py defines
    it for the sandbox, the gate and the file tools alike (hermes-tui's own state
    included), judged on the name as written and where it leads (`real`, when known);
    None when it would not."""
    return secrets.secret_place(path, state_roots(), real)


def read_risk(path: str) -> PathRisk | None:
    """Reading a secret place asks, and only a person may allow it (the model would see
    the secret); everything else is free. A hard link to a secret file is that file,
    whatever its name."""
    why = secret(path)
    if why is None:
        other = linked_secret(resolved(path))
        why = f"another name of {other} (a hard link)" if other else None
    return PathRisk(SECRET_READ, why, Severity.HIGH) if why else None


def tree_read_risk(path: str) -> PathRisk | None:
    """Reading a file, or everything under a folder: a folder holding secrets asks."""
    risk = read_risk(path)
    if risk is None and secret_folder(path):
        risk = PathRisk(SECRET_READ, "a folder holding secrets", Severity.HIGH)
    return risk


def secret_folder(path: str) -> bool:
    """A folder from which a program reading everything under it reads a secret: a home,
    the filesystem's root, hermes-tui's state, a folder that is or holds a secret place
    (secrets.holds_secrets). A file is judged as itself (`id_rsa.pub`)."""
    return not os.path.isfile(resolved(path)) and secrets.holds_secrets(path, state_roots())


def linked_secret(path: str) -> str | None:
    """The secret file `path` is another name of, or None: `link ~/.ssh/id_rsa k.txt`
    makes `k.txt` the key itself."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return None
    return known_secrets().get((info.st_dev, info.st_ino))


# The secret files with more than one name, found by a bounded scan of every secret place
# (every home's hidden entries and credential stores, hermes-tui's state, the system's
# password hashes); kept a short while. Only such a file can have a name elsewhere.
SCAN_LIMIT = 6000  # entries looked at, in all
SCAN_DEPTH = 6
SCAN_TTL = 30.0
_KNOWN: dict[tuple[str, ...], tuple[float, dict[tuple[int, int], str]]] = {}


def known_secrets() -> dict[tuple[int, int], str]:
    """(device, inode) of every secret file with a second name the scan found, and its path."""
    import time

    key = (*secrets.homes(), *state_roots())
    now = time.monotonic()
    cached = _KNOWN.get(key)
    if cached is None or now - cached[0] > SCAN_TTL:
        _KNOWN.clear()
        _KNOWN[key] = cached = (now, _scan(_scan_roots()))
    return cached[1]


def _scan_roots() -> list[str]:
    """Where the scan looks, the app's own state first, each place once."""
    roots = [*state_roots(), *secrets.SYSTEM_SECRETS]
    for home in dict.fromkeys(resolved(h) for h in secrets.homes()):
        roots += secrets.secret_places(home)
    return list(dict.fromkeys(resolved(r) for r in roots))


def _scan(roots: list[str]) -> dict[tuple[int, int], str]:
    """Every root is walked breadth first and in turn, one entry each, until the budget is
    spent: a big folder (gcloud's logs, a browser profile) takes only what the others
    leave, so it cannot keep the scan from the small ones, where tokens are."""
    found: dict[tuple[int, int], str] = {}
    walks = [_entries(root, set(roots) - {root}) for root in roots]
    budget = SCAN_LIMIT
    while walks and budget > 0:
        for walk in list(walks):
            entry = next(walk, None)
            budget -= 1
            if entry is None:
                walks.remove(walk)
            elif entry[0] is not None:
                found[entry[0]] = entry[1]
            if budget <= 0:
                break
    return found


def _entries(root: str, others: set[str]) -> Iterator[tuple[tuple[int, int] | None, str]]:
    """The entries under `root` (itself first), breadth first to SCAN_DEPTH, one at a
    time: a regular file with a second name as its (device, inode), anything else as
    None; links are not followed, and another root is left to its own walk."""
    queue: deque[tuple[str, int]] = deque([(root, 0)])
    while queue:
        path, depth = queue.popleft()
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            yield None, path
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            yield (info.st_dev, info.st_ino), path
            continue
        yield None, path
        if stat.S_ISDIR(info.st_mode) and depth < SCAN_DEPTH:
            try:
                names = sorted(os.listdir(path))
            except OSError:
                continue
            for name in names:
                child = posixpath.join(path, name)
                if child not in others:
                    queue.append((child, depth + 1))


def sensitive_path(path: str) -> bool:
    """A write there needs more than the ordinary approval (kept for the shell analyser)."""
    risk = place_risk(path, False)
    return risk is not None and risk.severity >= Severity.HIGH


def resolved(path: str | os.PathLike[str]) -> str:
    """Where `path` really is, links followed; a link this process may not read (another
    process's `/proc/PID/cwd`) is kept as written, and judged by that name."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(os.fspath(path))
