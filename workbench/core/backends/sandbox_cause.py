"""Did the sandbox make this command fail? Read from what the command printed.

Only a command that failed (a non-zero exit) counts, and only for a reason the sandbox
made: a write refused as read-only (everything outside the working directory and the write
roots is), a network failure while the sandbox has no network (a connection refused too: with
`--unshare-net`, a server on 127.0.0.1 is in another namespace), a hidden place reported
missing or refused, or ssh failing to log in while the sandbox hides `~/.ssh`. The answer
names the cause in words a person can judge; the executor then asks that person whether to
run that one command outside (see `Executor._sandbox_refused`). A wrong "yes" here only
asks a question; a wrong "no" leaves the failure as it is: both fail closed.
"""

from __future__ import annotations

import json
import re

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
QUOTED = 160  # at most this much of the line that shows the cause
STAYS_INSIDE = (
    "It stayed in the sandbox (headless, --yes or approvals off never leave it): a person "
    "can let it out once with x in the workbench, or set terminal.sandbox: false"
)


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


def sandbox_cause(output: str, *, network: bool, hidden: list[str]) -> str | None:
    """Why the sandbox made this output's command fail, in words; None when it did not."""
    for line in output.splitlines():
        if READ_ONLY.search(line):
            return _cause("the sandbox refused a write outside the working directory", line)
        if not network and NETWORK.search(line):
            return _cause("the sandbox has no network (terminal.network: off)", line)
        if MISSING.search(line) and (place := _hidden_in(line, hidden)):
            return _cause(f"the sandbox hides {place}", line)
        if SSH_LOGIN.search(line) and (keys := _ssh_dir(hidden)):
            return _cause(f"the sandbox hides {keys}, so ssh has no key or known hosts", line)
    return None


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


def _ssh_dir(hidden: list[str]) -> str | None:
    return next((p for p in hidden if p.rstrip("/").endswith("/.ssh")), None)


def _cause(what: str, line: str) -> str:
    shown = line.strip()
    shown = shown if len(shown) <= QUOTED else shown[: QUOTED - 1] + "…"
    return f"{what} ({shown})"


def with_sandbox_note(result: str, note: str) -> str:
    """The terminal result with one line about the sandbox added (its `sandbox` field)."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        data = None
    if not isinstance(data, dict):
        return f"{result}\n[sandbox] {note}"
    data["sandbox"] = note
    return json.dumps(data, ensure_ascii=False)
