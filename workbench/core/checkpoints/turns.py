"""One snapshot a turn, before the first call that may change files, for the executor.

A turn is the agent loop's turn (a person's message and every round of tool calls it
takes), or, outside one, an `Executor.run` batch: one call made by hand (`hermes-tui call`,
the run form, a replayed case). The first call of it that may
change files (`may_change`) snapshots the working directory; every later call of the turn
uses that checkpoint to know which files replacing would lose nothing (`Coverage`), which
the write policy in the gate reads.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from workbench.core.checkpoints.events import CheckpointSkipped, CheckpointTaken
from workbench.core.checkpoints.scan import Scan
from workbench.core.checkpoints.store import CheckpointStore
from workbench.core.policy.gate import SKILL_WRITER, check_call, coverable
from workbench.core.safety import analyze_command
from workbench.core.safety.analyzer import STATE_READERS
from workbench.core.tools.events import ToolSource
from workbench.core.tools.paths import resolve_path

FILE_WRITERS = ("write_file", "patch")
# Besides the detector's readers (programs that only read what they are given): commands
# that change no file. Anything else a terminal runs may, and is snapshotted before.
_ALSO_READ = frozenset(
    {"cd", "pwd", "true", "false", ":", "which", "type", "command", "date", "whoami", "id",
     "uname", "hostname", "printenv", "sleep", "locate", "man"}
)  # fmt: skip
# git subcommands that only read the repository (`git status` may refresh the user's index,
# which is git's own cache, not a file the person made)
_GIT_READS = frozenset(
    {"status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
     "describe", "shortlog", "cat-file", "reflog", "whatchanged", "version", "help"}
)  # fmt: skip
_FIND_ACTS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fls")
# Programs every write of which the detector names (`Verdict.touched`, a finding's
# `writes`): for a command of these and readers alone, what it changed is known, so a
# file that changed while it ran and that it does not name is the person's.
_EXACT_WRITERS = frozenset(
    {"rm", "unlink", "mv", "cp", "ln", "touch", "truncate", "mkdir", "rmdir", "chmod", "tee", "sed"}
)  # fmt: skip
_RECURSIVE = frozenset({"-r", "-R", "--recursive", "-a", "--archive"})
_CHMOD_OPTIONS = frozenset(
    {"-c", "-f", "-v", "--changes", "--silent", "--quiet", "--verbose", "--", "--preserve-root",
     "--no-preserve-root"}
)  # fmt: skip


def may_change(registry: Any, name: str, args: dict[str, Any], cwd: str) -> bool:
    """Whether the call may change files: write_file, patch and skill_manage, a terminal command not
    known to only read, an MCP or plugin tool that does not declare itself read-only."""
    if name in FILE_WRITERS or name == SKILL_WRITER:
        return True
    if name == "terminal":
        workdir = resolve_path(args["workdir"], cwd) if args.get("workdir") else cwd
        return not reads_only(str(args.get("command", "")), str(workdir))
    entry = registry.get_entry(name) if registry is not None else None
    if entry is None or entry.source not in (ToolSource.MCP, ToolSource.PLUGIN):
        return False  # the built-in readers, web tools and the agent's own tools
    return (getattr(entry, "annotations", None) or {}).get("readOnlyHint") is not True


def reads_only(command: str, cwd: str) -> bool:
    """The detector's reading of the command: nothing found, no file written by a
    redirection, and every program it runs one that only reads."""
    verdict = analyze_command(command, cwd=cwd)
    if verdict.findings or verdict.touched or not verdict.ran:
        return False
    return all(_reader(words) for words in verdict.ran)


def written_exactly(command: str, cwd: str) -> frozenset[str] | None:
    """Every place the command may change, when its reading names them all (readers and
    the exact writers only, nothing known only at run time, no folder change before a
    write, nothing recursive), as real paths; None when what it changes is not known."""
    verdict = analyze_command(command, cwd=cwd)
    if verdict.opaque or not verdict.ran:
        return None
    for words in verdict.ran:
        if _reader(words):
            continue
        if not words or words[0] is None or os.path.basename(words[0]) not in _EXACT_WRITERS:
            return None
        if any(w is None or w in _RECURSIVE for w in words[1:]):
            return None
    places = {os.path.realpath(p) for p in verdict.touched if p.startswith("/")}
    for words in verdict.ran:  # the analysis reads no write in a mode change: its operands
        if words and words[0] is not None and os.path.basename(words[0]) == "chmod":
            places |= {os.path.realpath(resolve_path(w, cwd)) for w in _chmod_files(words[1:])}
    for finding in verdict.findings:
        if finding.writes and finding.where is None:
            return None
        for written in finding.writes:
            places.add(os.path.realpath(resolve_path(written, finding.where or cwd)))
    return frozenset(places)


def _chmod_files(args: tuple[str | None, ...]) -> list[str]:
    """chmod's file operands: all but the mode (the first word not one of its options, `-x`
    being a mode), or all of them after `--reference`."""
    files = [w for w in args if w is not None and w not in _CHMOD_OPTIONS]
    if any(w.startswith("--reference") for w in files):
        return [w for w in files if not w.startswith("--")]
    return files[1:]


def _reader(words: tuple[str | None, ...]) -> bool:
    if not words or words[0] is None:
        return False
    program, rest = os.path.basename(words[0]), words[1:]
    if program == "git":
        sub = next((w for w in rest if w is not None and not w.startswith("-")), None)
        return sub in _GIT_READS
    if program == "find":
        return not any(w in _FIND_ACTS for w in rest)
    if program in ("sort", "tree"):  # `sort -o FILE`, `tree -o FILE` write
        return not any(w is None or w.startswith(("-o", "--output")) for w in rest)
    return program in STATE_READERS or program in _ALSO_READ


@dataclass(frozen=True)
class Coverage:
    """What this turn's checkpoint holds: replacing a file it holds loses nothing."""

    store: CheckpointStore | None
    cwd: str
    commit: str | None  # None: no checkpoint holds this turn's state
    why: str = ""  # why none does ("checkpoints are off", "skipped: …", "failed: …")
    failed: bool = False  # the snapshot was to be taken and could not be

    def holds(self, paths: Collection[str]) -> set[str]:
        if self.store is None or self.commit is None or not paths:
            return set()
        return self.store.held(self.cwd, self.commit, paths)

    def missing(self, path: str) -> str:
        """Why `path` is not held, for the approval question."""
        if self.commit is None:
            return self.why or "no checkpoint was taken"
        return "it is left out of checkpoints (excluded, over the size cap, or unreadable)"

    def lost(self) -> str:
        """Why no checkpoint holds this turn although one was to ("" when one does, or
        when none was to: checkpoints off, a project past the caps): then whatever a
        command changes asks first (see `gate.with_coverage`)."""
        if not self.failed or self.commit is not None:
            return ""
        return self.why or "the snapshot failed"


@dataclass(frozen=True)
class Watch:
    """The files as they were just before a command ran, in a turn with a checkpoint."""

    coverage: Coverage
    before: Scan
    only: frozenset[str] | None = None  # what it may change, when its reading names it all


@dataclass(frozen=True)
class Prepared:
    coverage: Coverage | None  # None: the call changes no files
    event: object | None = None  # CheckpointTaken / CheckpointSkipped, once a turn
    refusal: str = ""  # checkpoints.required and the snapshot failed: the call must not run


class TurnCheckpoints:
    """The executor's checkpoints: a turn counter and the turn's coverage per directory."""

    def __init__(self, store: CheckpointStore, session: str | None = None) -> None:
        self.store = store
        self.session = session
        self.turn = 0
        self._lock = threading.Lock()
        self._coverage: dict[str, Coverage] = {}
        self._in_turn = False

    def begin_turn(self) -> None:
        """The agent loop's turn starts (a person's message): its rounds share one snapshot,
        taken before the first change of any of them."""
        with self._lock:
            self._in_turn = True
            self._start()

    def end_turn(self) -> None:
        with self._lock:
            self._in_turn = False

    def new_batch(self) -> None:
        """An `Executor.run` batch: a turn of its own, unless the agent loop's turn holds it."""
        with self._lock:
            if not self._in_turn:
                self._start()

    def _start(self) -> None:
        self.turn += 1
        self._coverage.clear()

    def prepare(
        self,
        registry: Any,
        name: str,
        args: dict[str, Any],
        cwd: str,
        blocked: Callable[[], bool] = lambda: False,
    ) -> Prepared:
        """Before a call: the turn's snapshot if this is its first call that may change
        files, unless it is `blocked` (a call never allowed to run changes nothing)."""
        if not may_change(registry, name, args, cwd) or blocked():
            return Prepared(None)
        with self._lock:  # parallel calls of one turn: the first snapshots, the others wait
            known = self._coverage.get(cwd)
            if known is not None and not self._loses(known, name, args, cwd):
                return Prepared(known)
            coverage, event, refusal = self._snapshot(name, args, cwd)
            self._coverage[cwd] = coverage
            if known is not None and isinstance(event, CheckpointSkipped) and not event.failed:
                event = None  # a second look that found nothing new: no line for it
            return Prepared(coverage, event, refusal)

    @staticmethod
    def _loses(coverage: Coverage, name: str, args: dict[str, Any], cwd: str) -> bool:
        """Whether the call would replace a file whose content now the turn's checkpoint
        does not hold (a program the executor could not follow changed it since): then a
        new snapshot is taken first, so replacing it still loses nothing."""
        if coverage.commit is None:
            return False  # none could be taken: another try would not do better
        targets = replaced(name, args, cwd)
        return bool(targets) and not set(targets) <= coverage.holds(targets)

    def _snapshot(self, name: str, args: dict[str, Any], cwd: str) -> tuple[Coverage, object, str]:
        if not self.store.enabled:
            why = "checkpoints are off (checkpoints.enabled: false)"
            return Coverage(self.store, cwd, None, why), None, ""
        taken = self.store.take(
            cwd, reason=_reason(name, args), session=self.session or None, turn=self.turn
        )
        snap = taken.snapshot
        coverage = Coverage(self.store, cwd, taken.commit, snap.note, failed=snap.failed)
        if snap.checkpoint is not None:
            event: object = CheckpointTaken(snap.checkpoint)
        else:
            event = CheckpointSkipped(cwd, snap.note, snap.failed)
        refusal = ""
        if snap.failed and self.store.settings.required:
            refusal = f"the snapshot before it {snap.note} (checkpoints.required is on)"
        return coverage, event, refusal

    def watch(self, coverage: Coverage | None, command: str = "", cwd: str = "") -> Watch | None:
        """Before a terminal command that may change files, in a turn with a checkpoint:
        the stat of every file, so that afterwards only what changed while it ran is taken
        for the agent's, and of that only what it names when its reading names every
        place it changes (see `record_changes`)."""
        if coverage is None or coverage.commit is None or coverage.store is None:
            return None
        before = coverage.store.watch(coverage.cwd)
        if before is None:
            return None
        return Watch(coverage, before, written_exactly(command, cwd) if command else None)

    def record_changes(self, watch: Watch | None) -> None:
        """After the command: every file whose stat changed while it ran is the agent's in
        the ledger (a restore must not take the changes of a program the gate could not
        follow for hand edits), and only those it names when its reading names every place
        it changes. What the person changed before it ran, or between two calls, stays
        theirs, and so does what they change while it runs when the command names its
        writes; beside a program whose writes are not known (`make`, a script), an edit made
        while it runs cannot be told from its own and is taken for the agent's (the
        restore's backup still holds it)."""
        if watch is None:
            return
        if watch.coverage.store is not None:
            watch.coverage.store.changed_since(watch.coverage.cwd, watch.before, watch.only)

    def record(self, cwd: str, paths: Collection[str]) -> None:
        """The files a call wrote, into the ledger (those inside the working directory)."""
        for path in paths:
            if _regular_inside(cwd, path):
                self.store.record_write(cwd, path)


def replaced(name: str, args: dict[str, Any], cwd: str) -> tuple[str, ...]:
    """The existing files inside the working directory the call would replace or delete,
    as far as the gate can tell (see `gate.with_coverage`)."""
    if name in FILE_WRITERS and isinstance(args.get("path"), str):
        path = str(resolve_path(args["path"], cwd))
        return (path,) if _regular_inside(cwd, os.path.realpath(path)) else ()
    if name == "terminal":
        return coverable(name, args, cwd, check_call(name, args, cwd))
    return ()


def _regular_inside(cwd: str, path: str) -> bool:
    real_cwd = os.path.realpath(cwd)
    real = os.path.realpath(path)
    if not real.startswith(real_cwd.rstrip("/") + "/"):
        return False
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _reason(name: str, args: dict[str, Any]) -> str:
    if name == "terminal":
        return f"terminal: {str(args.get('command', ''))[:120]}"
    path = args.get("path")
    return f"{name} {path}" if isinstance(path, str) else name
