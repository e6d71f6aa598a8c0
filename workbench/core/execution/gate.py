"""Which tool calls need a person's approval before they run, and why.

`terminal` commands go through the destructive-command detector. The file tools are judged
on where their path really is (after symlinks): hermes-tui's own state, credentials and
devices are refused; start-up files, hooks, system paths and anything outside the working
directory and the write roots ask; reading a credential file asks too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.core.safety import Finding, Verdict, analyze_command
from workbench.core.safety.places import (
    PathRisk,
    read_risk,
    resolved,
    tree_read_risk,
    write_risk,
)
from workbench.core.tools.paths import resolve_path

FILE_WRITERS = ("write_file", "patch")
FILE_READERS = ("read_file", "search_files")


@dataclass(frozen=True)
class GateCheck:
    shown: str  # what the person is asked about, in full
    verdict: Verdict


def check_call(
    name: str,
    args: dict[str, Any],
    cwd: str | os.PathLike[str],
    recent_writes: Iterable[str] = (),
    roots: Iterable[str] = (),
) -> GateCheck | None:
    """The approval question for this call, or None when it may run unasked.

    `roots` are directories besides `cwd` where writes need no approval.
    """
    cwd, roots = os.fspath(cwd), tuple(os.fspath(r) for r in roots)
    if name == "terminal":
        command = str(args.get("command", ""))
        workdir = resolve_path(args["workdir"], cwd) if args.get("workdir") else cwd
        verdict = analyze_command(
            command,
            cwd=workdir,
            recent_writes=frozenset(recent_writes),
            write_roots=(cwd, *roots),
        )
        return GateCheck(command, verdict) if verdict.dangerous else None
    path_arg = args.get("path", "." if name == "search_files" else None)
    if not isinstance(path_arg, str):
        return None
    path = str(resolve_path(path_arg, cwd))
    if name in FILE_WRITERS:
        return _path_check(
            name, path, "changes", write_risk(path, cwd=cwd, roots=roots, replaces=True)
        )
    if name == "read_file":
        return _path_check(name, path, "reads", read_risk(path))
    content_search = name == "search_files" and args.get("target", "content") != "files"
    if content_search:  # a file, or every file under a folder (one holding credentials asks)
        return _path_check(name, path, "searches", tree_read_risk(path))
    return None


def _path_check(name: str, path: str, verb: str, risk: PathRisk | None) -> GateCheck | None:
    if risk is None:
        return None
    real = resolved(path)
    where = path if real == path else f"{path} (really {real})"
    shown = f"{name} {where}"
    finding = Finding(
        risk.rule,
        f"{name} {verb} {where}: {risk.reason}",
        (0, len(shown)),
        risk.severity,
        (path,) if verb == "changes" else (),
    )
    return GateCheck(shown, Verdict(shown, (finding,)))
