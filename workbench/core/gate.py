"""Which tool calls need a person's approval before they run, and why.

`terminal` commands go through the destructive-command detector; `write_file` and `patch`
into shell start-up files, credentials, autostart entries, git hooks and system paths need
approval too (W-A6), as the shell path would for the same write.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.core.paths import resolve_path
from workbench.core.safety import Finding, Severity, Verdict, analyze_command, sensitive_path

FILE_WRITERS = ("write_file", "patch")


@dataclass(frozen=True)
class GateCheck:
    shown: str  # what the person is asked about, in full
    verdict: Verdict


def check_call(
    name: str, args: dict[str, Any], cwd: str | os.PathLike[str], recent_writes: Iterable[str] = ()
) -> GateCheck | None:
    """The approval question for this call, or None when it may run unasked."""
    if name == "terminal":
        command = str(args.get("command", ""))
        workdir = resolve_path(args["workdir"], cwd) if args.get("workdir") else cwd
        verdict = analyze_command(command, cwd=workdir, recent_writes=frozenset(recent_writes))
        return GateCheck(command, verdict) if verdict.dangerous else None
    if name in FILE_WRITERS and isinstance(args.get("path"), str):
        path = str(resolve_path(args["path"], cwd))
        if sensitive_path(os.path.realpath(path)) or sensitive_path(path):
            shown = f"{name} {path}"
            finding = Finding(
                "sensitive-write",
                f"{name} changes {path}: a start-up, credential, hook or system file",
                (0, len(shown)),
                Severity.HIGH,
                (path,),
            )
            return GateCheck(shown, Verdict(shown, (finding,)))
    return None
