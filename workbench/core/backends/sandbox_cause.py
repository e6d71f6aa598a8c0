"""Did the sandbox make this command fail? Told from what hermes-tui knows, never from what
the command printed.

A command's output is its own: a planted script that prints `Read-only file system` and
exits 1 would otherwise have a person offered a run outside the sandbox, where it does what
it likes. So the cause is read from two things hermes-tui has: the command's analysis (the
files it writes, the places it names, the programs it runs) and the sandbox's own layout
(what is writable, what is hidden, whether there is a network). A command that failed (a
non-zero exit) and does one of these is one the sandbox refused:

- writes a file outside the writable places (the working directory, `approvals.write_roots`,
  the private /tmp), or inside a place kept read-only there (a project's `.hermes`);
- names a place the sandbox hides (`cat ~/.ssh/id_rsa`, `ls ~/.aws`);
- runs ssh (or gives git an ssh address) while the sandbox hides `~/.ssh`;
- reaches the network (a downloader, an address, a package manager's install) while the
  sandbox has none.

The answer is in hermes-tui's words; the executor then asks a person whether to run that one
command outside (see `Executor._sandbox_refused`). A failure traced to none of these gets no
offer: its output may still read like the sandbox's refusal (`output_suggests`), which the
model is told as a possibility, never as a fact.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.safety.secrets import within

if TYPE_CHECKING:
    from workbench.core.safety import Verdict

READ_ONLY = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve host"
    r"|name or service not known|\bEAI_AGAIN\b|\bENETUNREACH\b|no address associated with"
    r"|failed to establish a new connection|connection refused|couldn't connect to server"
    r"|failed to connect to|unable to connect to",
    re.IGNORECASE,
)
MISSING = re.compile(r"no such file or directory|permission denied|\bENOENT\b|\bEACCES\b", re.I)
SSH_LOGIN = re.compile(r"permission denied \(publickey|host key verification failed", re.I)
QUOTED = 160  # at most this much of the line an output note quotes
STAYS_INSIDE = (
    "It stayed in the sandbox (headless, --yes or approvals off never leave it): a person "
    "can let it out once with x in the workbench, or set terminal.sandbox: false"
)
NO_NETWORK = " (terminal.sandbox_network: false)"
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


@dataclass(frozen=True)
class Layout:
    """What the sandbox lets a command do, from its own settings (real paths)."""

    writable: tuple[str, ...]  # the working directory and approvals.write_roots
    read_only: tuple[str, ...] = ()  # inside those, kept read-only (a project's .hermes)
    hidden: tuple[str, ...] = ()  # covered by empty ones: HERMES_HOME, credentials
    network: bool = True
    home: str = ""  # what `~` is for the command


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
    keys = _ssh_dir(layout.hidden)
    if keys and (program in SSH_PROGRAMS or (program == "git" and _any(_SSH_ADDRESS, known))):
        return f"it runs {program} over ssh, and the sandbox hides {keys} (no key, no known hosts)"
    if not layout.network and _networked(program, known):
        return f"it runs {program}, which needs the network, and the sandbox has none{NO_NETWORK}"
    return None


def _networked(program: str, words: list[str]) -> bool:
    from workbench.core.safety.commands import DOWNLOADERS  # loaded with the analysis

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


def inside(path: str, places: Iterable[str]) -> str | None:
    """The first of `places` that `path` is or lies under."""
    return next((place for place in places if within(path, place)), None)


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(path)


# -- the command's output: a possibility, for the model only ------------------------------


def failed_output(result: str) -> str | None:
    """The output of a terminal result whose command ran and failed (None otherwise)."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("status") not in (None, "error"):
        return None  # refused, timed out, cancelled: the command did not fail on its own
    code = data.get("exit_code")
    if not isinstance(code, int) or code == 0:
        return None
    return str(data.get("output") or "")


def output_suggests(output: str, *, network: bool, hidden: list[str]) -> str | None:
    """What the output reads like (a refused write, no network, a hidden place missing, ssh
    without keys), quoting the line; None when nothing. The command printed it: it may be
    the sandbox, or anything that prints the same words."""
    for line in output.splitlines():
        if READ_ONLY.search(line):
            return _quoted("a write refused as read-only", line)
        if not network and NETWORK.search(line):
            return _quoted("a network failure", line)
        if MISSING.search(line) and (place := _hidden_in(line, hidden)):
            return _quoted(f"{place} missing or refused", line)
        if SSH_LOGIN.search(line) and _ssh_dir(hidden):
            return _quoted("ssh without its keys", line)
    return None


def possibility(suggested: str) -> str:
    """The note for a failure whose output reads like the sandbox's, traced to nothing."""
    return (
        f"the output reads like {suggested}, but hermes-tui cannot trace this failure to the "
        "sandbox from the command itself (it writes nothing outside the writable places, "
        "names nothing hidden, needs no network it lacks), so no run outside was offered. "
        "If it must write outside the working directory, say so to the person"
    )


def _hidden_in(line: str, hidden: list[str]) -> str | None:
    """A hidden place the line names (itself, or a path under it)."""
    for place in hidden:
        at = line.find(place)
        while at >= 0:
            after = line[at + len(place) : at + len(place) + 1]
            if not (after.isalnum() or after in "._-") or after == "":  # not a longer name
                return place
            at = line.find(place, at + 1)
    return None


def _ssh_dir(hidden: Iterable[str]) -> str | None:
    return next((p for p in hidden if p.rstrip("/").endswith("/.ssh")), None)


def _quoted(what: str, line: str) -> str:
    shown = line.strip()
    shown = shown if len(shown) <= QUOTED else shown[: QUOTED - 1] + "…"
    return f"{what} ({shown!r})"


def with_sandbox_note(result: str, note: str) -> str:
    """The terminal result with one line about the sandbox added (its `sandbox` field)."""
    return with_note(result, "sandbox", note)


def with_note(result: str, key: str, note: str) -> str:
    """A JSON result with one more field (`key`), or a text result with the line added."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        data = None
    if not isinstance(data, dict):
        return f"{result}\n[{key}] {note}"
    data[key] = note
    return json.dumps(data, ensure_ascii=False)
