"""What the sandbox lets a command do (its `Layout`, from its own settings), and what a
failed command's output reads like.

Whether the sandbox made a command fail is told from what hermes-tui knows, the command's
analysis against this layout (`workbench.core.execution.sandbox_refusal`), never from what
the command printed: a planted script that prints `Read-only file system` and exits 1 must
not have a person offered a run outside the sandbox, where it does what it likes. The
output is read here only for the model, as a possibility (`output_suggests`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Layout:
    """What the sandbox lets a command do, from its own settings (real paths)."""

    writable: tuple[str, ...]  # the working directory and approvals.write_roots
    read_only: tuple[str, ...] = ()  # inside those, kept read-only (a project's .hermes)
    hidden: tuple[str, ...] = ()  # covered by empty ones: HERMES_HOME, credentials
    network: bool = True
    home: str = ""  # what `~` is for the command


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
        if SSH_LOGIN.search(line) and ssh_dir(hidden):
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


def ssh_dir(hidden: Iterable[str]) -> str | None:
    """The hidden `~/.ssh`, if one is."""
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
