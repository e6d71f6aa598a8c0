"""What is secret, said once: the places the sandbox hides from commands, the gate asks
about before anything reads them, and the file tools never show unasked, whatever `--yes`
or `approvals.mode: off` say.

Secret by default, not by list: no list of credential files keeps up with the tools that
store a token (rclone, huggingface, terraform, cargo, a shell's history...), and nearly all
of them keep it in a dot entry of the home directory. So every dot entry of a home is
secret unless it is *shown*: a short shipped list of what commands need to work (shell and
git settings, toolchains, the cache), the toolchains on `PATH`, and what the user adds with
`terminal.home_allow` (Hermes's `terminal.bubblewrap_home_allow`). `~/.config`, `~/.local`
and `~/.local/share` are default-deny one level down, since they hold one folder per
application. Credential stores stay secret whatever is shown (`~/.cargo` is shown,
`~/.cargo/credentials.toml` is not), and so does hermes-tui's own state (`HERMES_HOME`).

A home is the user's `$HOME`, the account's home from the password database (they differ
under `sudo -E` or a test's fake home), `/root` and every `/home/NAME`: a command can name
any of them. `.env` files are secret wherever they are; inside the working directory the
sandbox still shows them (the project's own programs read them), but reading one asks.
"""

from __future__ import annotations

import functools
import os
import posixpath
import pwd
import re
import time
from collections.abc import Iterable

# Credential stores under a home, relative to it: secret whatever is shown.
CREDENTIAL_STORES: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".gpg",
    ".aws",
    ".azure",
    ".boto",
    ".s3cmd",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".env",
    ".git-credentials",
    ".git-credential-cache",
    ".password-store",
    ".pki",
    ".vault-token",
    ".vaults",
    ".cert",
    ".terraform.d",
    ".terraformrc",
    ".huggingface",
    ".hermes",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".config/op",
    ".config/rclone",
    ".config/keybase",
    ".config/msmtp",
    ".config/1Password",
    ".config/Bitwarden",
    ".config/keepassxc",
    ".config/filezilla",
    ".config/remmina",
    ".config/git/credentials",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".local/share/plasma-vault",
    ".local/share/pki",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".npm/_authToken",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".lesshst",
    ".viminfo",
    ".local/share/fish/fish_history",
)

# Folders of a home that are default-deny like the home itself: only a shown child is seen.
DEFAULT_DENY_DIRS: tuple[str, ...] = (".config", ".local", ".local/share")

# What commands see of a home's dot entries with no configuration (read-only in the
# sandbox): shell and git settings, toolchains and the cache. Each is a unit: a top-level
# dot entry, or a child of one of DEFAULT_DENY_DIRS.
SHOWN_IN_HOME: tuple[str, ...] = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".inputrc",
    ".gitconfig",
    ".gitignore_global",
    ".editorconfig",
    ".tool-versions",
    ".terminfo",
    ".cache",
    ".cargo",
    ".rustup",
    ".nvm",
    ".bun",
    ".deno",
    ".gem",
    ".npm",
    ".pyenv",
    ".rbenv",
    ".sdkman",
    ".volta",
    ".asdf",
    ".m2",
    ".gradle",
    ".dotnet",
    ".pub-cache",
    ".conda",
    ".nix-profile",
    ".config/git",
    ".config/pip",
    ".config/uv",
    ".config/npm",
    ".config/pnpm",
    ".config/yarn",
    ".config/go",
    ".config/fontconfig",
    ".local/bin",
    ".local/lib",
    ".local/include",
    ".local/share/uv",
    ".local/share/pipx",
    ".local/share/pnpm",
    ".local/share/virtualenvs",
    ".local/share/man",
    ".local/share/bash-completion",
    ".local/share/fonts",
    ".local/share/mime",
)

# System files that hold secrets of every account.
SYSTEM_SECRETS: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")

_ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.(?!example$|sample$|template$|dist$)[^/]*)?$")

# Units the user showed (`terminal.home_allow`): set once when the config is read.
_user_shown: tuple[str, ...] = ()


def within(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return root == "/" or path == root or path.startswith(root + "/")


def show_also(units: Iterable[str]) -> list[str]:
    """Take the user's `terminal.home_allow`; returns what was refused and why (a unit
    that is not one dot entry or child of a default-deny folder, or a credential store)."""
    global _user_shown
    kept, refused = [], []
    for item in units:
        text = str(item).strip().removeprefix("~/")
        unit = allow_unit(text)
        if unit is None or unit != posixpath.normpath(text):
            refused.append(
                f"terminal.home_allow: {item!r} must name one dot entry of the home or one "
                f"child of {', '.join(DEFAULT_DENY_DIRS)}"
            )
        elif _stored(unit):
            refused.append(f"terminal.home_allow: {item!r} is a credential store; it stays hidden")
        else:
            kept.append(unit)
    _user_shown = tuple(dict.fromkeys(kept))
    return refused


def user_shown() -> tuple[str, ...]:
    return _user_shown


def allow_unit(rel: str) -> str | None:
    """The smallest unit that holds `rel` (a path relative to a home), or None when it is
    not under a dot entry (or names a default-deny folder itself, or leaves the home)."""
    rel = posixpath.normpath(rel)
    parts = rel.split("/")
    if not parts[0].startswith(".") or parts[0] in (".", ".."):
        return None
    unit, rest = parts[0], parts[1:]
    while unit in DEFAULT_DENY_DIRS:
        if not rest:
            return None
        unit, rest = f"{unit}/{rest[0]}", rest[1:]
    return unit


def shown_units(home: str, path_env: str | None = None) -> frozenset[str]:
    """The dot units of `home` commands see: the shipped list, the units of `PATH`'s
    folders under the home, and the user's; never a credential store."""
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    return _shown_units(home, path_env, _user_shown)


@functools.lru_cache(maxsize=16)  # the sandbox asks for every entry of a home, per command
def _shown_units(home: str, path_env: str, user: tuple[str, ...]) -> frozenset[str]:
    units = set(SHOWN_IN_HOME) | set(user)
    for entry in path_env.split(os.pathsep):
        rel = _rest(posixpath.normpath(entry), home) if entry.startswith("/") else None
        unit = allow_unit(rel) if rel else None
        if unit is not None:
            units.add(unit)
    return frozenset(u for u in units if not _stored(u))


def _stored(unit: str) -> bool:
    """The unit is, or lies inside, a credential store."""
    return any(within(unit, store) for store in CREDENTIAL_STORES)


def homes() -> tuple[str, ...]:
    """Every home a command may name, as written and resolved: ours first."""
    return _homes(os.environ.get("HOME") or "", os.geteuid(), int(time.monotonic() // HOMES_TTL))


HOMES_TTL = 30.0  # /home is looked at again after this long


@functools.lru_cache(maxsize=4)
def _homes(_home: str, _uid: int, _epoch: int) -> tuple[str, ...]:
    found: dict[str, None] = {}
    ours = [os.environ.get("HOME") or "", _account_home()]
    for home in [*ours, "/root", *_user_homes()]:
        if home and home.startswith("/") and home != "/":
            found.setdefault(posixpath.normpath(home), None)
            found.setdefault(os.path.realpath(home), None)
    return tuple(h for h in found if h != "/")


def our_homes() -> tuple[str, ...]:
    """The user's `$HOME` and account home, as written and resolved (the ones the sandbox
    lays out; another user's home is not readable to a command of ours anyway)."""
    found: dict[str, None] = {}
    for home in (os.environ.get("HOME") or "", _account_home()):
        if home and home.startswith("/") and home != "/" and os.path.isdir(home):
            found.setdefault(os.path.realpath(home), None)
    return tuple(found)


def _account_home() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir
    except (KeyError, OSError):
        return ""


def _user_homes() -> list[str]:
    try:
        with os.scandir("/home") as entries:
            return sorted(e.path for e in entries)[:64]
    except OSError:
        return []


def _rest(path: str, home: str) -> str | None:
    home = home.rstrip("/")
    return path[len(home) + 1 :] if path.startswith(home + "/") else None


def secret_place(path: str, state: Iterable[str] = ()) -> str | None:
    """Why `path` (absolute) is secret, or None. Judged on the name as written and on the
    real place (links followed): a link in the project to `~/.vault-token` is that file.
    `state`: hermes-tui's own state folders (HERMES_HOME), secret as a whole."""
    names = dict.fromkeys((posixpath.normpath(path), _real(path)))
    for name in names:
        why = _secret_name(name, tuple(state))
        if why:
            return why
    return None


def _secret_name(path: str, state: tuple[str, ...]) -> str | None:
    if any(within(path, root) for root in state):
        return "hermes-tui's own state (HERMES_HOME)"
    if path in SYSTEM_SECRETS:
        return "the system's password hashes"
    for home in homes():
        rel = _rest(path, home)
        if rel is None:
            continue
        store = next((s for s in CREDENTIAL_STORES if within(rel, s)), None)
        if store is not None:
            return f"a credential store (~/{store})"
        unit = allow_unit(rel)
        if unit is not None and unit not in shown_units(home):
            return f"a hidden entry of the home (~/{unit}), which commands cannot see"
    if _ENV_FILE.search(path):
        return "an environment file (.env), which holds secrets"
    return None


def holds_secrets(folder: str, state: Iterable[str] = ()) -> bool:
    """Reading everything under `folder` reads a secret: it is one, or it holds a home, a
    credential store that exists, or hermes-tui's state. (A project's `.env` files do not
    count here: a search of the project skips them by name.)"""
    state = tuple(state)
    names = dict.fromkeys((posixpath.normpath(folder), _real(folder)))
    for name in names:
        if _secret_name(name, state) and not _ENV_FILE.search(name):
            return True
        if any(within(root, name) for root in (*homes(), *state) if root):
            return True
        for home in homes():
            rel = _rest(name, home)
            if rel is None:
                continue
            for store in CREDENTIAL_STORES:
                if within(store, rel) and os.path.lexists(posixpath.join(home, store)):
                    return True
    return False


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(path)
