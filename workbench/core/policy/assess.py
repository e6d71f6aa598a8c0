"""What the approval path knows about one call before rules are read: its facts and the
question the detector (or the file gate, or an untrusted MCP server) raises about it.

The executor and `hermes-tui approvals test` both use this, so the simulator says exactly
what a real call would meet.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from workbench.core.policy.gate import (
    FILE_WRITERS,
    SKILL_WRITER,
    GateCheck,
    Holds,
    check_call,
    with_coverage,
)
from workbench.core.policy.rules import CallFacts
from workbench.core.safety import Finding, Severity, Verdict, analyze_command
from workbench.core.safety.parser import home_dir
from workbench.core.safety.places import (
    SECRET_READ,
    PathRisk,
    place_risk,
    read_risk,
    resolved,
    state_roots,
    within,
)
from workbench.core.tools.events import ToolSource
from workbench.core.tools.paths import resolve_path

UNTRUSTED_RULE = "untrusted-mcp"


def facts_for(registry: Any, name: str, args: dict[str, Any]) -> CallFacts:
    entry = registry.get_entry(name) if registry is not None else None
    command = str(args.get("command", "")) if name == "terminal" else None
    if entry is None:
        return CallFacts(name, command=command)
    server = entry.owner if entry.source is ToolSource.MCP else ""
    return CallFacts(name, entry.toolset, server, command)


def assess(
    registry: Any,
    name: str,
    args: dict[str, Any],
    cwd: str | os.PathLike[str],
    recent_writes: Iterable[str] = (),
    roots: Iterable[str] = (),
    coverage: Holds | None = None,
    *,
    checkpoints: bool = False,
    spilled: str | None = None,
) -> tuple[CallFacts, GateCheck | None]:
    """The call's facts, and what needs approval in it (None: nothing).

    With `checkpoints` (the executor has them, on or off), replacing a file inside the
    working directory follows the one write policy (`gate.with_coverage`): `coverage` is the
    turn's checkpoint, None when no checkpoint holds anything. `spilled`: the session's
    folder of spilled results, which read_file reads back unasked."""
    facts = facts_for(registry, name, args)
    check = check_call(name, args, cwd, recent_writes, roots, spilled)
    if checkpoints:
        check = with_coverage(name, args, cwd, check, coverage)
    if check is None:
        check = app_state_check(registry, name, args, cwd)
    if check is None:
        check = guarded_place_check(registry, name, args, cwd)
    if check is None:
        check = untrusted_check(registry, name, args)
    return facts, check


def written_by(
    registry: Any, name: str, args: dict[str, Any], cwd: str | os.PathLike[str]
) -> set[str]:
    """The files a call that ran wrote, as real paths: running one later in the session
    asks, whichever tool wrote it (write_file, a terminal command appending to a new file, an
    MCP server's tool)."""
    if name in FILE_WRITERS and isinstance(args.get("path"), str):
        return {resolved(resolve_path(args["path"], cwd))}
    if name == SKILL_WRITER:  # a skill's script it wrote asks when run, as any file written
        from workbench.core.skills import manage_target

        target = manage_target(args)
        return {resolved(target)} if target is not None else set()
    if name == "terminal":
        workdir = resolve_path(args["workdir"], cwd) if args.get("workdir") else cwd
        verdict = analyze_command(str(args.get("command", "")), cwd=workdir)
        return {resolved(p) for p in verdict.touched if p.startswith("/")}
    entry = registry.get_entry(name) if registry is not None else None
    if entry is None or entry.source is not ToolSource.MCP:
        return set()
    if (getattr(entry, "annotations", None) or {}).get("readOnlyHint") is True:
        return set()
    places = (resolve_path(v.removeprefix("file://"), cwd) for v in _texts(args) if v.strip())
    return {resolved(p) for p in places if os.path.isfile(p)}


def app_state_check(
    registry: Any, name: str, args: dict[str, Any], cwd: str | os.PathLike[str]
) -> GateCheck | None:
    """An MCP tool given a path in hermes-tui's own state is refused, whatever is approved.

    The file gate knows only the built-in tools' arguments; a server's tool (a filesystem
    server whose root is the folder the workbench runs in, often the home holding
    `~/.hermes`) would otherwise write config.yaml, the history or the rules, unasked when
    the server is trusted. Every text argument is looked at as a path.
    """
    entry = registry.get_entry(name) if registry is not None else None
    if entry is None or entry.source is not ToolSource.MCP:
        return None
    for value in _texts(args):
        path = resolve_path(value.removeprefix("file://"), cwd)
        if _in_state(str(path)):
            shown = f"{name} {json.dumps(args, ensure_ascii=False)}"
            reason = f"{name} is given {value}, in hermes-tui's own state (HERMES_HOME)"
            finding = Finding("app-state", reason, (0, len(name)), Severity.HARDLINE)
            return GateCheck(shown, Verdict(shown, (finding,)))
    return None


def guarded_place_check(
    registry: Any, name: str, args: dict[str, Any], cwd: str | os.PathLike[str]
) -> GateCheck | None:
    """An MCP tool given a place the built-in file tools guard asks, trusted server or not.

    A filesystem server rooted at the home would otherwise write `~/.ssh/authorized_keys`,
    `~/.bashrc` or a git hook, or read a private key, unasked. Whether the tool reads or
    writes is not known, so a key's or a start-up file's name asks (with high severity)
    rather than being refused; a tool that declares itself read-only asks only for
    credentials. A relative path is taken from the working folder and from the home, where
    such a server is often rooted.
    """
    entry = registry.get_entry(name) if registry is not None else None
    if entry is None or entry.source is not ToolSource.MCP:
        return None
    reads_only = (getattr(entry, "annotations", None) or {}).get("readOnlyHint") is True
    for value in _texts(args):
        for i, path in enumerate(_places(value, cwd)):
            # taken from the home, a name is read only where there is something to read
            # (`.github/ci.yml` names no secret of a home that holds no `.github`)
            reads = i == 0 or os.path.lexists(path)
            risk = _guarded(path, reads=reads, writes=not reads_only)
            if risk is not None:
                shown = f"{name} {json.dumps(args, ensure_ascii=False)}"
                reason = f"{name} is given {value}: {risk.reason}"
                personal = risk.rule == SECRET_READ  # a read of a secret: a person decides
                finding = Finding(
                    risk.rule, reason, (0, len(name)), Severity.HIGH, (value,), in_person=personal
                )
                return GateCheck(shown, Verdict(shown, (finding,)))
    return None


def _places(value: str, cwd: str | os.PathLike[str]) -> list[str]:
    value = value.removeprefix("file://")
    if not value.strip() or "\n" in value:
        return []
    places = [str(resolve_path(value, cwd))]
    if not value.startswith(("/", "~", "$")):
        places.append(str(resolve_path(value, home_dir())))
    return places


def _guarded(path: str, *, reads: bool, writes: bool) -> PathRisk | None:
    """Reading `path`, when it is a secret place (whatever the tool does with it, only a
    person may allow that), or what writing it would be, when the file tools guard it
    (high severity or more)."""
    risk = read_risk(path) if reads else None
    if risk is not None or not writes:
        return risk
    for place in dict.fromkeys((os.path.normpath(path), resolved(path))):
        risk = place_risk(place)
        if risk is not None and risk.severity >= Severity.HIGH:
            return risk
    return None


def _in_state(path: str) -> bool:
    places = dict.fromkeys((os.path.normpath(path), resolved(path)))
    return any(within(p, root) for p in places for root in state_roots())


def _texts(value: Any, depth: int = 0) -> Iterable[str]:
    """The arguments' text values, each a path a server could take (`hermes-home` below the
    folder it runs in is one), bounded."""
    if depth > 8:
        return
    if isinstance(value, str):
        if len(value) <= 4096 and "\0" not in value:
            yield value
    elif isinstance(value, dict):
        for item in list(value.values())[:256]:
            yield from _texts(item, depth + 1)
    elif isinstance(value, list):
        for item in value[:256]:
            yield from _texts(item, depth + 1)


def untrusted_check(registry: Any, name: str, args: dict[str, Any]) -> GateCheck | None:
    """A tool of an MCP server marked `trust: untrusted` asks unless it declares itself
    read-only (`readOnlyHint`)."""
    entry = registry.get_entry(name) if registry is not None else None
    if entry is None or not getattr(entry, "untrusted", False):
        return None
    if (getattr(entry, "annotations", None) or {}).get("readOnlyHint") is True:
        return None
    shown = f"{name} {json.dumps(args, ensure_ascii=False)}"
    reason = (
        f"{name} comes from MCP server {entry.owner}, which is not trusted "
        "(trust: untrusted), and does not declare itself read-only"
    )
    finding = Finding(UNTRUSTED_RULE, reason, (0, len(name)), Severity.NORMAL)
    return GateCheck(shown, Verdict(shown, (finding,)))
