"""Did the sandbox make this command fail? Told from what hermes-tui knows, never from what
the command printed.

A command's output is its own: a planted script that prints `Read-only file system` and
exits 1 would otherwise have a person offered a run outside the sandbox, where it does what
it likes. So the cause is read from two things hermes-tui has: the command's analysis (the
files it writes, the places it names, the programs it runs) and the sandbox's own layout
(`Backend.layout`: what is writable, what is hidden, whether there is a network). A command
that failed (a non-zero exit) and does one of these is one the sandbox refused:

- writes or deletes a file outside the writable places (the working directory,
  `approvals.write_roots`, the private /tmp), or inside a place kept read-only there (a
  project's `.hermes`);
- names a place the sandbox hides (`cat ~/.ssh/id_rsa`, `ls ~/.aws`);
- runs ssh (or gives git an ssh address) while the sandbox hides `~/.ssh`;
- reaches the network (a downloader, an address, a package manager's install) while the
  sandbox has none.

The answer is in hermes-tui's words; the executor then asks a person whether to run that one
command outside (`Executor._sandbox_refused`). A failure traced to none of these gets no
offer: its output may still read like the sandbox's refusal, which the model is told as a
possibility, never as a fact (`backends.sandbox_cause.output_suggests`).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable

from workbench.core.backends.sandbox import inside
from workbench.core.backends.sandbox_cause import Layout, ssh_dir
from workbench.core.safety import Verdict
from workbench.core.safety.commands import DOWNLOADERS

NO_NETWORK = " (terminal.network: off)"

# Private in the sandbox, so writable there; /dev and /proc are the kernel's, not a layout's.
PRIVATE = ("/tmp", "/var/tmp", "/run", "/dev/shm")
NOT_LAID_OUT = ("/dev", "/proc", "/sys")
SSH_PROGRAMS = frozenset({"ssh", "scp", "sftp", "sshfs", "ssh-copy-id", "autossh", "mosh"})
# Programs (and the subcommands of theirs) that need the network to do their job.
NETWORKED = {
    "git": frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"}),
    "pip": frozenset({"install", "download", "index", "search"}),
    "pip3": frozenset({"install", "download", "index", "search"}),
    "uv": frozenset({"pip", "add", "sync", "lock", "tool", "run"}),
    "poetry": frozenset({"install", "add", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "add", "view", "info", "publish", "update"}),
    "pnpm": frozenset({"install", "i", "add", "update", "publish"}),
    "yarn": frozenset({"install", "add", "upgrade", "info", "publish"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "search"}),
    "go": frozenset({"get", "install", "mod"}),
    "gem": frozenset({"install", "update", "fetch"}),
    "apt": frozenset({"install", "update", "upgrade"}),
    "apt-get": frozenset({"install", "update", "upgrade", "download"}),
    "docker": frozenset({"pull", "push", "login"}),
}
ALWAYS_NETWORKED = SSH_PROGRAMS | {"ping", "dig", "nslookup", "host", "telnet"}
_ADDRESS = re.compile(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:", re.IGNORECASE)
_SSH_ADDRESS = re.compile(r"^ssh://|^git\+ssh://|^[\w.-]+@[\w.-]+:", re.IGNORECASE)


def known_cause(verdict: Verdict, cwd: str, layout: Layout) -> str | None:
    """What the command does that the sandbox refuses, in hermes-tui's words (None: the
    analysis finds nothing the sandbox would refuse)."""
    for path in _written(verdict, layout.home):
        refused = _refused_write(path, layout)
        if refused:
            return refused
    for words in verdict.ran:
        cause = _refused_run(words, cwd, layout)
        if cause:
            return cause
    return None


def _written(verdict: Verdict, home: str) -> list[str]:
    """Every file the command writes (its `touched`) or deletes and overwrites (its
    findings' `writes`, where the folder they are relative to is known), absolute."""
    found = dict.fromkeys(verdict.touched)
    for finding in verdict.findings:
        for path in finding.writes:
            if path == "~" or path.startswith("~/"):
                path = (home or os.path.expanduser("~")) + path[1:]
            elif not path.startswith("/") and finding.where is not None:
                path = posixpath.normpath(posixpath.join(finding.where, path))
            found.setdefault(path, None)
    return list(found)


def _refused_write(path: str, layout: Layout) -> str | None:
    if not path.startswith("/"):
        return None  # a place known only when it runs: not known to be refused
    real = _real(path)
    if place := inside(real, layout.hidden):
        return f"it writes {path}, inside {place}, which the sandbox hides"
    if inside(real, layout.read_only):
        return f"it writes {path}, in a project's .hermes folder, which the sandbox keeps read-only"
    if inside(real, (*layout.writable, *PRIVATE, *NOT_LAID_OUT)):
        return None
    return (
        f"it writes {path}, outside the working directory and approvals.write_roots: "
        "the sandbox keeps that read-only"
    )


def _refused_run(words: tuple[str | None, ...], cwd: str, layout: Layout) -> str | None:
    known = [w for w in words if w is not None]
    if not known:
        return None
    program = posixpath.basename(known[0])
    for word in known[1:]:
        for place in _places(word, cwd, layout.home):
            if hidden := inside(_real(place), layout.hidden):
                return f"it reads {word}, inside {hidden}, which the sandbox hides"
    keys = ssh_dir(layout.hidden)
    if keys and (program in SSH_PROGRAMS or (program == "git" and _any(_SSH_ADDRESS, known))):
        return f"it runs {program} over ssh, and the sandbox hides {keys} (no key, no known hosts)"
    if not layout.network and _networked(program, known):
        return f"it runs {program}, which needs the network, and the sandbox has none{NO_NETWORK}"
    return None


def _networked(program: str, words: list[str]) -> bool:
    if program in ALWAYS_NETWORKED | DOWNLOADERS or _any(_ADDRESS, words[1:]):
        return True
    subs = NETWORKED.get(program)
    sub = next((w for w in words[1:] if not w.startswith("-")), None)
    return subs is not None and sub in subs


def _any(pattern: re.Pattern[str], words: Iterable[str]) -> bool:
    return any(pattern.search(w) for w in words)


def _places(word: str, cwd: str, home: str) -> list[str]:
    """The places a word of a command may name (itself, an option's value): absolute."""
    values = [word, word.split("=", 1)[1]] if word.startswith("-") and "=" in word else [word]
    found = []
    for value in values:
        if not value or value.startswith("-") or _ADDRESS.search(value) or "\n" in value:
            continue
        if value == "~" or value.startswith("~/"):
            value = (home or os.path.expanduser("~")) + value[1:]
        elif not value.startswith("/"):
            if "/" not in value and not value.startswith("."):
                continue  # a plain word (a pattern, a name): not a place it names
            value = posixpath.join(cwd, value)
        found.append(posixpath.normpath(value))
    return found


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(path)
