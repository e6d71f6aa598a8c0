"""Which tool calls need a person's approval before they run, and why.

`terminal` commands go through the destructive-command detector. The file tools are judged
on where their path really is (after symlinks): hermes-tui's own state, credentials and
devices are refused; start-up files, hooks, system paths and anything outside the working
directory and the write roots ask; reading a credential file asks too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from workbench.core.safety import Finding, Severity, Verdict, analyze_command
from workbench.core.safety.places import (
    SECRET_READ,
    PathRisk,
    place_risk,
    read_risk,
    resolved,
    tree_read_risk,
    within,
    write_risk,
)
from workbench.core.tools.paths import resolve_path

FILE_WRITERS = ("write_file", "patch")
FILE_READERS = ("read_file", "search_files")
SKILL_WRITER = "skill_manage"  # writes in a skills folder: judged as a write there (skill_check)


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
    spilled: str | None = None,
) -> GateCheck | None:
    """The approval question for this call, or None when it may run unasked.

    `roots` are directories besides `cwd` where writes need no approval. `spilled`: the
    session's own folder of results too large to send (in hermes-tui's state), which the
    model is told to read back with read_file.
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
        moved = workdir_outside(command, os.fspath(workdir), cwd, roots)
        if moved is not None:
            verdict = replace(verdict, findings=(*verdict.findings, moved))
        return GateCheck(command, verdict) if verdict.dangerous else None
    if name == SKILL_WRITER:
        return skill_check(args, cwd, roots)
    path_arg = args.get("path", "." if name == "search_files" else None)
    if not isinstance(path_arg, str):
        return None
    path = str(resolve_path(path_arg, cwd))
    if name in FILE_WRITERS:
        risks = [("changes", write_risk(path, cwd=cwd, roots=roots, replaces=True))]
        if name == "patch":  # its result shows the lines it changes: a read as well
            risks.append(("reads", read_risk(path)))
        return _path_check(name, path, risks)
    if name == "read_file":
        ours = spilled is not None and within(resolved(path), resolved(spilled))
        return _path_check(name, path, [("reads", None if ours else read_risk(path))])
    content_search = name == "search_files" and args.get("target", "content") != "files"
    if content_search:  # a file, or every file under a folder (one holding secrets asks)
        return _path_check(name, path, [("searches", tree_read_risk(path))])
    return None


def skill_check(args: dict[str, Any], cwd: str, roots: tuple[str, ...]) -> GateCheck | None:
    """skill_manage judged as a write of what it changes (core.skills.manage_target): the
    skills folder in HERMES_HOME is hermes-tui's state, which no other tool may write, but
    writing skills there is this tool's job, so it asks, as any write outside the working
    directory and the write roots does (a session with no one to ask refuses it). A skill
    in an external folder is judged as a write_file there; a call whose target cannot be
    told (a skill not found, a name that is not valid) asks too."""
    from workbench.core import skills

    action, name = args.get("action"), args.get("name")
    if action not in skills.WRITE_ACTIONS:
        return None  # an unknown action writes nothing: the tool says so
    target = skills.manage_target(args)
    if target is None:
        shown = f"{SKILL_WRITER} {action} {name}"
        reason = f"{shown}: where it writes could not be told (no such skill, or a bad name)"
        finding = Finding("outside-write", reason, (0, len(shown)), Severity.NORMAL)
        return GateCheck(shown, Verdict(shown, (finding,)))
    path = str(target)
    real = resolved(path)
    local = skills.local_root()
    if within(real, local.real):
        # the place's own risks, but that of being in HERMES_HOME, then where it is
        risk = place_risk(real, replaces=True, state=False)
        if risk is None and not any(within(real, r) for r in (os.path.realpath(cwd), *roots)):
            risk = PathRisk(
                "outside-write",
                "Hermes's skills folder, outside the working directory and the write roots",
                Severity.NORMAL,
            )
    else:
        risk = write_risk(path, cwd=cwd, roots=roots, replaces=True)
    verb = f"{action} {name}"
    return _path_check(SKILL_WRITER, path, [("changes", risk)], shown=f"{SKILL_WRITER} {verb}")


WORKDIR_OUTSIDE = "workdir-outside"


def workdir_outside(command: str, workdir: str, cwd: str, roots: tuple[str, ...]) -> Finding | None:
    """A terminal call whose `workdir` lies outside the places the session may write (its
    working directory and the write roots): the sandbox still lets it write only those, and
    without the sandbox its relative writes would land outside, so a person decides; `--yes`
    never does."""
    real = resolved(workdir)
    places = [resolved(p) for p in (cwd, *roots)]
    if any(real == p or real.startswith(p.rstrip("/") + "/") for p in places):
        return None
    reason = (
        f"it runs in {workdir}, outside the working directory and the write roots (a "
        "workdir never moves where commands may write)"
    )
    return Finding(WORKDIR_OUTSIDE, reason, (0, len(command)), in_person=True)


def _path_check(
    name: str, path: str, risks: list[tuple[str, PathRisk | None]], shown: str = ""
) -> GateCheck | None:
    found = [(verb, risk) for verb, risk in risks if risk is not None]
    if not found:
        return None
    real = resolved(path)
    where = path if real == path else f"{path} (really {real})"
    shown = f"{shown} → {where}" if shown and shown != path else f"{name} {where}"
    findings = tuple(
        Finding(
            risk.rule,
            f"{name} {verb} {where}: {risk.reason}",
            (0, len(shown)),
            risk.severity,
            (path,) if verb == "changes" else (),
            in_person=risk.rule == SECRET_READ,
        )
        for verb, risk in found
    )
    return GateCheck(shown, Verdict(shown, findings))


# -- one policy for replacing files inside the working directory (issue 22, item 6) ---------

RECOVERABLE_RULES = ("delete", "overwrite")  # the terminal's findings a checkpoint can undo
UNRECOVERABLE = "unrecoverable-overwrite"
NO_CHECKPOINT = "no-checkpoint"
_GLOB = frozenset("*?[")


class Holds(Protocol):
    """This turn's checkpoint (see `checkpoints.turns.Coverage`)."""

    def holds(self, paths: Collection[str]) -> set[str]: ...

    def missing(self, path: str) -> str: ...

    def lost(self) -> str: ...


def with_coverage(
    name: str,
    args: dict[str, Any],
    cwd: str | os.PathLike[str],
    check: GateCheck | None,
    coverage: Holds | None,
) -> GateCheck | None:
    """The gate's question once checkpoints are counted, the same for every tool:
    replacing or deleting an existing file inside the working directory runs unasked when
    this turn's checkpoint holds it (it can be brought back), and asks when none does.

    write_file/patch over such a file not held gets a finding (`unrecoverable-overwrite`);
    a terminal `delete`/`overwrite` finding whose targets are all existing regular files
    inside the working directory (no folders, no glob left unexpanded, none known only at
    run time: an `opaque` finding names only part of what it acts on) that the checkpoint
    holds is dropped. Every other question stays as `check_call` put it; and when the
    turn's snapshot failed (`coverage.lost`), a terminal command that may change files asks
    even if nothing in it did.
    """
    cwd = os.fspath(cwd)
    if name in FILE_WRITERS:
        if check is not None or not isinstance(args.get("path"), str):
            return check
        path = str(resolve_path(args["path"], cwd))
        if not _inside(path, cwd) or not os.path.exists(path):
            return check  # a new file (nothing lost), or outside (check_call judged it)
        if _recoverable_target(path, cwd, follow=True):
            if coverage is not None and path in coverage.holds([path]):
                return None
            why = coverage.missing(path) if coverage is not None else "checkpoints are not in use"
        else:
            why = "it is not a regular file with one name: a checkpoint holds only those"
        shown = f"{name} {path}"
        reason = f"{name} replaces {path}, which no checkpoint holds ({why}): it cannot be undone"
        finding = Finding(UNRECOVERABLE, reason, (0, len(shown)), Severity.NORMAL, (path,))
        return GateCheck(shown, Verdict(shown, (finding,)))
    if name != "terminal" or coverage is None:
        return check
    lost = coverage.lost()
    if check is None and lost:
        # the undo this turn counted on is not there: a command that may change files is
        # asked about, whatever the gate reads in it (`xz a.txt` has no rule of its own)
        shown = str(args.get("command", ""))
        reason = f"no checkpoint holds this turn ({lost}): what it changes could not be undone"
        finding = Finding(NO_CHECKPOINT, reason, (0, len(shown)), Severity.NORMAL)
        return GateCheck(shown, Verdict(shown, (finding,)))
    if check is None:
        return check
    targets = {f: _terminal_targets(f, cwd) for f in check.verdict.findings}
    wanted = {p for paths in targets.values() if paths for p in paths}
    if not wanted:
        return check
    held = coverage.holds(wanted)
    left = tuple(f for f, paths in targets.items() if not paths or not set(paths) <= held)
    if len(left) == len(check.verdict.findings):
        return check
    return GateCheck(check.shown, replace(check.verdict, findings=left)) if left else None


def coverable(
    name: str, args: dict[str, Any], cwd: str | os.PathLike[str], check: GateCheck | None
) -> tuple[str, ...]:
    """The files whose replacing makes a terminal command ask and that a checkpoint of the
    turn would hold (when snapshots keep them): with every finding so covered, it runs
    unasked in a session with checkpoints on. For `approvals test`, which takes none."""
    if name != "terminal" or check is None:
        return ()
    cwd = os.fspath(cwd)
    targets = [_terminal_targets(f, cwd) for f in check.verdict.findings]
    if not targets or any(t is None for t in targets):
        return ()
    return tuple(dict.fromkeys(p for t in targets if t for p in t))


def _terminal_targets(finding: Finding, cwd: str) -> tuple[str, ...] | None:
    """The finding's targets as paths, when each is one a checkpoint could bring back.
    Relative ones are where the shell is when it acts (`finding.where`, which follows the
    call's workdir and its `cd`s), not where the call started."""
    if finding.rule not in RECOVERABLE_RULES or not finding.writes or finding.contextual:
        return None
    if finding.opaque:  # some target is known only at run time: `writes` names only the rest
        return None
    if finding.where is None:  # the folder it acts in (after a `cd`) is not known
        return None
    paths = []
    for written in finding.writes:
        # what it names is known only at run time: a glob, a variable, another home, or
        # `DIR/{}`, the detector's stand-in for each file a search or `xargs` feeds it
        # (even where a file is really named `{}`)
        if _GLOB & set(written) or "$" in written or "{}" in written or written.startswith("~"):
            return None
        path = str(resolve_path(written, finding.where))
        if not _recoverable_target(path, cwd, follow=False):  # rm removes a link itself
            return None
        paths.append(path)
    return tuple(paths)


def _recoverable_target(path: str, cwd: str, *, follow: bool) -> bool:
    """An existing regular file inside the working directory (with `follow`, what a link
    leads to; without, a link is not one) with no other name: a checkpoint holds a path,
    and writing through a hard link changes every other name of the file, which may be
    outside and which no restore gives back."""
    if not _inside(path, cwd):
        return False
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def _inside(path: str, cwd: str) -> bool:
    """Where `path` really is lies under the working directory."""
    return resolved(path).startswith(os.path.realpath(cwd).rstrip("/") + "/")
