"""CheckpointStore: snapshots of a working directory in its own store, and what they hold.

A snapshot is one commit of the project's index, referenced by its own ref
`refs/checkpoints/<commit>`, so pruning one is deleting one ref; its one parent holds what
git's trees do not (the files' modes, see side.py). A turn pays one walk of the tree (see
scan.py); when the walk's signature is the last snapshot's, nothing else runs. Otherwise the
files whose stat changed are read and their blobs written (stage.py), the index is changed
for them (`git update-index --index-info`), and when its tree or the modes differ from the
last snapshot's, `git commit-tree` and `git update-ref` make the checkpoint. Restoring is in
restore.py, comparing in compare.py, pruning in prune.py.

Whatever fails, the store is damaged only when the store itself says so (`shadow.damage`):
a failure of the project's making (a file that cannot be read, a name git refuses) is that
project's failed or partial snapshot, said, and the store is left as it is.
"""

from __future__ import annotations

import builtins  # the class below has a method named list
import contextlib
import logging
import os
import re
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from workbench.core.checkpoints import compare, ledger, migrate, prune, side, stage
from workbench.core.checkpoints.compare import Change, Now
from workbench.core.checkpoints.git import GitFailed
from workbench.core.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    FileChange,
    RestorePlan,
    RestoreResult,
    Snapshot,
)
from workbench.core.checkpoints.scan import Scan, scan
from workbench.core.checkpoints.settings import Settings, settings_from
from workbench.core.checkpoints.shadow import (
    DAMAGED,
    REFS,
    Project,
    damage,
    init_store,
    is_store,
    project_key,
    set_aside,
)
from workbench.core.config import Config, load_config
from workbench.core.edits.diffs import FileDiff
from workbench.core.storage.atomic import atomic_write_text, locked

logger = logging.getLogger(__name__)

_HEX = re.compile(r"[0-9a-f]{4,40}")
MAX_REASON = 200
SIDE_TEXTS = 64  # data of this many checkpoints kept in memory (a commit never changes)


class CheckpointStore:
    def __init__(self, home: Path, config: Config | None = None) -> None:
        self.home = Path(home)
        if config is None:
            config = load_config(self.home / "config.yaml")
        self.settings: Settings = settings_from(config)
        self.root = self.home.absolute() / "checkpoints"  # git runs in the project
        self._side_texts: dict[str, str | None] = {}

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def problems(self) -> tuple[str, ...]:
        """What was wrong with the `checkpoints:` keys (each fell back to its default)."""
        return self.settings.problems

    def location(self, cwd: str | os.PathLike[str]) -> Path:
        """The folder of the project's own store (it may not exist yet)."""
        return self._project(cwd, must_exist=False).store

    # -- taking ----------------------------------------------------------------------

    def snapshot(
        self, cwd: str | os.PathLike[str], *, reason: str, session: str | None = None,
        turn: int | None = None,
    ) -> Snapshot:  # fmt: skip
        """Snapshot `cwd` now; never raises (a failure is `Snapshot(failed=True)`)."""
        if not self.enabled:
            return Snapshot(None, "checkpoints are off (checkpoints.enabled: false)")
        return self.take(cwd, reason=reason, session=session, turn=turn).snapshot

    def take(
        self, cwd: str | os.PathLike[str], *, reason: str, session: str | None = None,
        turn: int | None = None,
    ) -> Taken:  # fmt: skip
        """A snapshot whether or not automatic ones are on, with the commit that holds the
        state now (a new one, or the unchanged last one)."""
        try:
            project = self._project(cwd)
        except CheckpointError as exc:
            return Taken(Snapshot(None, f"failed: {exc}", failed=True))
        try:
            return self._take(project, reason, session, turn)
        except CheckpointError as exc:
            return Taken(Snapshot(None, f"skipped: {exc}"))
        except GitFailed as exc:
            return Taken(Snapshot(None, self._failure(project, exc), failed=True))
        except OSError as exc:
            what = "disk full" if exc.errno in (28, 122) else (exc.strerror or str(exc))
            where = exc.filename or project.store
            return Taken(Snapshot(None, f"failed: {what} ({where})", True))
        except Exception as exc:  # a snapshot never breaks the call it precedes
            logger.exception("snapshot of %s failed", project.cwd)
            return Taken(Snapshot(None, f"failed: {type(exc).__name__}: {exc}", failed=True))

    def _take(self, project: Project, reason: str, session: str | None, turn: int | None) -> Taken:
        found = self._scan(project)
        if found.over:
            return Taken(Snapshot(None, f"skipped: {project.cwd}: {found.over}"))
        notes = [self._open(project)]
        with locked(project.meta_path):
            _drop_stale_lock(project.index)
            meta = project.meta()
            moved = meta.pop(migrate.NOTE, "")
            if moved:  # said once
                notes.append(moved)
                project.save_meta(meta)
            head = meta.get("head")
            if head and _SEEN.get(project.store) == (found.signature, head):
                return Taken(Snapshot(None, f"no change since {head[:12]}"), head)
            cache = stage.load_cache(project)
            state = stage.current(
                project, found, cache, limit=self.settings.max_file_bytes, write=True
            )
            tree = stage.write_index(project, cache, state)
            data = side.encode(side.from_stamps({r: found.entries[r] for r in state.files}))
            parent = self._side_commit(project, meta, data)
            meta["cwd"] = project.cwd
            if head and meta.get("tree") == tree and meta.get("side") == parent:
                _seen(project, found, head)
                return Taken(Snapshot(None, f"no change since {head[:12]}"), head)
            checkpoint = self._commit(
                project, meta, tree, parent, reason, session, turn, len(state.files)
            )
            meta.update(head=meta["ids"][-1][0], tree=tree, side=parent)
            dropped = prune.retain(project, meta, self.settings, checkpoint.created)
            project.save_meta(meta)
            _seen(project, found, meta["head"])
        left = [*state.unreadable, *found.unreadable]
        if left:
            notes.append(f"taken without {len(left)} unreadable: " + ", ".join(left[:5]))
        if state.refused:
            names = ", ".join(state.refused[:5])
            notes.append(f"taken without {len(state.refused)} name(s) git refuses: {names}")
        if dropped:
            logger.info("pruned %d old checkpoint(s) of %s", dropped, project.cwd)
        prune.maybe_maintain(self.root, self.settings)
        return Taken(Snapshot(checkpoint, "; ".join(n for n in notes if n)), meta["head"])

    def _side_commit(self, project: Project, meta: dict[str, Any], data: str) -> str:
        """The data commit for `data`: the last one when the data is the same."""
        digest = side.digest(data)
        if meta.get("side_digest") == digest and meta.get("side"):
            return str(meta["side"])
        commit = side.write(project.git(), data)
        meta["side_digest"] = digest
        return commit

    def _commit(
        self, project: Project, meta: dict[str, Any], tree: str, parent: str, reason: str,
        session: str | None, turn: int | None, files: int,
    ) -> Checkpoint:  # fmt: skip
        """A checkpoint of `tree` with its data commit `parent`: its commit, its ref, its
        place in the project's list (the caller holds the project's lock and saves `meta`)."""
        now = round(time.time(), 6)  # as the commit message keeps it
        body = _message(reason, session, turn, files, now).encode()
        git = project.git()
        commit = git.text("commit-tree", tree, "-p", parent, stdin=body).strip()
        git.run("update-ref", f"{REFS}{commit}", commit, "")
        meta["ids"] = [*meta.get("ids", []), [commit, now]]
        meta.setdefault("created", now)
        return Checkpoint(commit[:12], project.cwd, now, _one_line(reason), session, turn, files)

    def _open(self, project: Project) -> str:
        """The project's store, ready for a snapshot; returns a note when there is one to
        say. One found damaged (here, or by a read that left the marker) is set aside and a
        new one started; one not made yet takes the project's checkpoints from the store
        earlier versions shared, if it has some."""
        note = ""
        store = project.store
        if store.exists() and (not is_store(store) or (store / DAMAGED).exists()):
            moved = set_aside(store)
            logger.warning("checkpoint store %s was damaged; set aside as %s", store, moved)
            note = f"the damaged checkpoint store was set aside as {moved}; a new one started"
        self._create(project)
        return note

    def _create(self, project: Project) -> None:
        if is_store(project.store):
            return
        moving = migrate.pending(self.root, project.key)
        init_store(project.store, migrate.filler(self.root, project.key) if moving else None)
        if moving:
            migrate.forget(self.root, project.key)

    def _scan(self, project: Project, *, capped: bool = True) -> Scan:
        s = self.settings
        if project.cwd in ("/", os.path.realpath(os.path.expanduser("~"))):
            raise CheckpointError(f"{project.cwd} is too broad to snapshot (/ or the home)")
        home = os.path.realpath(self.home)
        if _inside(home, project.cwd) is not None:
            raise CheckpointError(f"{project.cwd} is HERMES_HOME or inside it: not snapshotted")
        return scan(
            project.cwd,
            max_files=s.max_files if capped else 0,
            max_bytes=s.max_file_bytes,
            max_total=s.max_total_size_mb * 1024 * 1024 if capped else 0,
            skip=_inside(project.cwd, home),
        )

    def _failure(self, project: Project, exc: GitFailed) -> str:
        problem = damage(project.store)
        if problem:
            moved = set_aside(project.store)
            where = f"set aside as {moved}" if moved else "it could not be moved aside"
            return (
                f"failed: the checkpoint store of {project.cwd} is damaged ({problem}); "
                f"{where}, a new one starts with the next snapshot"
            )
        if exc.disk_full:
            return f"failed: disk full ({exc.line})"
        return f"failed: {exc.line}"

    # -- reading ---------------------------------------------------------------------

    def list(self, cwd: str | os.PathLike[str]) -> list[Checkpoint]:
        """The project's checkpoints, newest first ([] for a project never snapshotted)."""
        project = self._readable(cwd)
        return self._listed(project) if project.store.exists() else []

    def _readable(self, cwd: str | os.PathLike[str], *, must_exist: bool = False) -> Project:
        """The project, its checkpoints moved from the shared store if they were there."""
        project = self._project(cwd, must_exist=must_exist)
        if not project.store.exists() and migrate.pending(self.root, project.key):
            try:
                self._create(project)
            except (GitFailed, OSError) as exc:
                raise CheckpointError(f"the checkpoints of {project.cwd} could not be moved to "
                                      f"their own store: {exc}") from exc  # fmt: skip
        return project

    def _listed(self, project: Project) -> builtins.list[Checkpoint]:
        for attempt in range(2):
            try:
                out = (
                    project.git()
                    .run("for-each-ref", "--format=%(objectname) %(contents)%00", REFS)
                    .stdout
                )
                break
            except GitFailed as exc:
                # judging drops refs whose commits are lost; then the list is read again
                said, damaged = self._judged(project, exc)
                if attempt or damaged:
                    raise CheckpointError(said) from exc
        found = []
        for record in out.split(b"\0\n"):
            if record.strip():
                found.append(_parse(record.decode("utf-8", "replace"), project.cwd))
        return sorted(found, key=lambda c: c.created, reverse=True)

    def get(self, cwd: str | os.PathLike[str], id: str | None = None) -> Checkpoint:
        """One checkpoint by id (a prefix of 4+ hex digits), or the latest when `id` is None."""
        return self._get(self._readable(cwd), id)[0]

    def _get(self, project: Project, id: str | None) -> tuple[Checkpoint, str]:
        listed = self._listed(project) if project.store.exists() else []
        if not listed:
            raise CheckpointError(f"there are no checkpoints of {project.cwd}")
        if id is None:
            chosen = listed[0]
        else:
            wanted = id.strip().lower()
            if not _HEX.fullmatch(wanted):
                raise CheckpointError(f"{id!r} is not a checkpoint id (4 to 40 hex digits)")
            matches = [c for c in listed if c.id.startswith(wanted[:12])]
            matches = [
                c
                for c in matches
                if len(wanted) <= 12 or self._full(project, c.id).startswith(wanted)
            ]
            if not matches:
                raise CheckpointError(f"no checkpoint {id} of {project.cwd}")
            if len(matches) > 1:
                raise CheckpointError(f"{id} names {len(matches)} checkpoints: give more digits")
            chosen = matches[0]
        return chosen, self._full(project, chosen.id)

    def _full(self, project: Project, short: str) -> str:
        ids: list[tuple[str, float]] = project.meta().get("ids", [])  # [commit, created]
        for commit, _ in ids:
            if commit.startswith(short):
                return commit
        out = project.git().text("for-each-ref", "--format=%(objectname)", REFS)
        for commit in out.split():
            if commit.startswith(short):
                return commit
        raise CheckpointError(f"no checkpoint {short} of {project.cwd}")

    def changes(self, cwd: str | os.PathLike[str], id: str) -> builtins.list[FileChange]:
        """What differs between the checkpoint and the working directory now."""
        project = self._readable(cwd, must_exist=True)
        _, commit = self._get(project, id)
        return [FileChange(c.path, c.kind) for c in self._diff(project, commit)]

    def _diff(
        self, project: Project, commit: str, wanted: Sequence[str] = ()
    ) -> builtins.list[Change]:
        """Each file that differs from `commit` now (of `wanted`, when given)."""
        try:
            held = compare.listing(project, commit)
            data = self._side(project, commit, held)
            now = compare.named(project, held, wanted) if wanted else None
            if now is None:
                now = self._now(project)
        except GitFailed as exc:
            raise CheckpointError(self._damaged(project, exc)) from exc
        return compare.differences(held, data, now, wanted)

    def _now(self, project: Project) -> Now:
        """The working directory as a snapshot would hold it now, whatever the caps (they
        decide what a new snapshot takes, never what an old one is compared with); nothing
        is written, and the project's index is left as it is."""
        found = self._scan(project, capped=False)
        cache = stage.load_cache(project, keep=True)
        state = stage.current(
            project, found, cache, limit=self.settings.max_file_bytes, write=False
        )
        return Now(state.files, found.entries)

    def _side(
        self, project: Project, commit: str, held: dict[str, tuple[str, str]]
    ) -> side.Side | None:
        """The checkpoint's data (its modes, its scope), None for one of an earlier version."""
        if commit not in self._side_texts:
            if len(self._side_texts) >= SIDE_TEXTS:
                self._side_texts.clear()
            self._side_texts[commit] = side.read_text(project.git(), commit)
        text = self._side_texts[commit]
        return side.decode(text, {p: m for p, (m, _) in held.items()}) if text else None

    def file_diff(self, cwd: str | os.PathLike[str], id: str, path: str) -> FileDiff:
        """The file as the checkpoint holds it (old) against the file now (new)."""
        from workbench.core.checkpoints.restore import file_diff

        project = self._readable(cwd, must_exist=True)
        _, commit = self._get(project, id)
        rel = self.relative(project.cwd, path)
        try:
            held = compare.listing(project, commit, [rel])
            data = self._side(project, commit, held)
            return file_diff(project, commit, rel, data, held.get(rel))
        except GitFailed as exc:
            raise CheckpointError(self._damaged(project, exc)) from exc

    # -- restoring -------------------------------------------------------------------

    def plan_restore(
        self, cwd: str | os.PathLike[str], id: str | None = None, files: Sequence[str] = ()
    ) -> RestorePlan:
        from workbench.core.checkpoints.restore import plan

        project = self._readable(cwd, must_exist=True)
        checkpoint, commit = self._get(project, id)
        wanted = [self.relative(project.cwd, f) for f in files]
        try:
            return plan(self, project, checkpoint, commit, wanted)
        except GitFailed as exc:
            raise CheckpointError(self._damaged(project, exc)) from exc

    def restore(self, plan: RestorePlan, *, overwrite: Collection[str] = ()) -> RestoreResult:
        from workbench.core.checkpoints.restore import restore

        project = self._readable(plan.checkpoint.cwd, must_exist=True)
        _, commit = self._get(project, plan.checkpoint.id)
        keep = {self.relative(project.cwd, p) for p in overwrite}
        try:
            return restore(self, project, plan, commit, keep)
        except GitFailed as exc:
            raise CheckpointError(self._damaged(project, exc) + "; nothing was restored") from exc

    # -- the ledger and coverage -----------------------------------------------------

    def record_write(self, cwd: str | os.PathLike[str], path: str) -> None:
        """The agent wrote `path` (its content now goes in the ledger); never raises."""
        try:
            project = self._project(cwd)
            rel = self.relative(project.cwd, path)
            if project.store.exists():
                left = ledger.now(os.path.join(project.cwd, rel))
                ledger.record(project.ledger_path, {rel: left})
        except (CheckpointError, OSError) as exc:
            logger.debug("not recorded in the ledger: %s (%s)", path, exc)

    def watch(self, cwd: str | os.PathLike[str]) -> Scan | None:
        """The stat of every file now, before a command runs (see `changed_since`)."""
        try:
            return self._scan(self._project(cwd), capped=False)
        except (CheckpointError, OSError) as exc:
            logger.debug("no watch of %s: %s", cwd, exc)
            return None

    def changed_since(
        self,
        cwd: str | os.PathLike[str],
        before: Scan,
        only: Collection[str] | None = None,
    ) -> int:
        """Every file whose stat changed since `before` (taken just before a command ran)
        goes in the ledger as the agent's: what a program the gate could not follow left is
        not a hand edit. Files changed before the command, by the person, are not; nor, with
        `only` (the real places the command names, when they are all it may change), those
        that are not, or lie under, one of them. The count; never raises."""
        try:
            project = self._project(cwd)
            after = self._scan(project, capped=False)
            named = tuple(only) if only is not None else None

            def its(rel: str) -> bool:
                if named is None:
                    return True
                path = os.path.join(project.cwd, rel)
                return any(path == p or path.startswith(p.rstrip("/") + "/") for p in named)

            left: dict[str, str | None] = {
                r: None for r in before.entries if r not in after.entries and its(r)
            }
            for rel, stamp in after.entries.items():
                if before.entries.get(rel) != stamp and its(rel):
                    left[rel] = ledger.now(os.path.join(project.cwd, rel))
            ledger.record(project.ledger_path, left)
        except (CheckpointError, OSError) as exc:
            logger.debug("changes since the watch of %s not recorded: %s", cwd, exc)
            return 0
        return len(left)

    def held(self, cwd: str | os.PathLike[str], commit: str, paths: Collection[str]) -> set[str]:
        """Of `paths` (absolute, inside cwd), those the checkpoint `commit` holds with the
        content and mode they have now, or whose content and mode now the agent left (the
        ledger): either way, replacing them loses nothing."""
        try:
            project = self._project(cwd)
        except CheckpointError:
            return set()
        rels = {}
        for path in paths:
            rel = _inside(project.cwd, os.path.realpath(path))
            if rel:
                rels[rel] = path
        if not rels:
            return set()
        try:
            stored = compare.listing(project, commit, builtins.list(rels))
            data = self._side(project, commit, stored)
            now = compare.named(project, stored, [r for r in rels if r in stored])
        except GitFailed:
            return set()
        entries = ledger.load(project.ledger_path)
        result = set()
        for rel, path in rels.items():
            seen = ledger.now(os.path.join(project.cwd, rel))
            if seen is None or seen == ledger.UNREADABLE:
                continue
            unchanged = (
                now is not None
                and rel in now.files
                and not compare.differences(stored, data, now, [rel])
            )
            if unchanged or ledger.agent_wrote(entries, rel, seen):
                result.add(path)
        return result

    # -- helpers ---------------------------------------------------------------------

    def _project(self, cwd: str | os.PathLike[str], *, must_exist: bool = True) -> Project:
        raw = os.fspath(cwd)
        real = os.path.realpath(raw)
        if must_exist and not os.path.isdir(real):
            what = "does not exist" if not os.path.lexists(real) else "is not a directory"
            raise CheckpointError(f"the working directory {raw} {what}")
        return Project(self.root, real, project_key(real))

    @staticmethod
    def relative(cwd: str, path: str) -> str:
        """`path` (relative to cwd, or absolute inside it) as a '/'-separated relative path."""
        if not isinstance(path, str) or not path.strip() or "\0" in path:
            raise CheckpointError(f"{path!r} is not a file path")
        full = path if os.path.isabs(path) else os.path.join(cwd, path)
        # the parent resolved (a link on the way out is seen), the name kept as it is
        parent = os.path.realpath(os.path.dirname(os.path.normpath(full)))
        full = os.path.join(parent, os.path.basename(os.path.normpath(full)))
        rel = _inside(cwd, full)
        if not rel:
            raise CheckpointError(f"{path} is not inside the working directory {cwd}")
        return rel

    def _damaged(self, project: Project, exc: GitFailed, objects: Collection[str] = ()) -> str:
        return self._judged(project, exc, objects)[0]

    def _judged(
        self, project: Project, exc: GitFailed, objects: Collection[str] = ()
    ) -> tuple[str, bool]:
        """What a read's failure means, and whether the store is damaged: it is when the
        store says so (see `shadow.damage`; the next snapshot sets it aside). Else a full
        disk, or git's own line."""
        problem = damage(project.store, objects)
        if problem:
            with contextlib.suppress(OSError):  # the next snapshot sets the store aside
                atomic_write_text(project.store / DAMAGED, problem + "\n", mode=0o600)
            return (
                f"the checkpoint store {project.store} is damaged ({problem}); the next "
                "snapshot sets it aside and starts a new one"
            ), True
        if exc.disk_full:
            return f"the disk is full ({exc.line})", False
        return exc.line, False


# The walk's signature of each project's tree as its last snapshot found it, with the
# checkpoint that holds that tree: the same signature again (only this process's walks
# make it) needs no other look. A racy walk's is not kept: a change in the same clock tick
# would leave the signature as it was.
_SEEN: dict[Path, tuple[str, str]] = {}


def _seen(project: Project, found: Scan, head: str) -> None:
    if found.racy:
        _SEEN.pop(project.store, None)
    else:
        _SEEN[project.store] = (found.signature, head)


class Taken:
    """A snapshot and the commit that holds the state now (None when none does)."""

    __slots__ = ("commit", "snapshot")

    def __init__(self, snapshot: Snapshot, commit: str | None = None) -> None:
        self.snapshot, self.commit = snapshot, commit


def _drop_stale_lock(index: Path) -> None:
    """git's `<index>.lock` found while holding the project's lock was left by a process
    killed while it changed the index (only a holder of that lock does): without removing
    it every later snapshot would fail."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{index}.lock")
        logger.warning("removed %s.lock, left by a snapshot that was killed", index)


def _inside(root: str, path: str) -> str | None:
    """`path` relative to `root` ('/'-separated), "" for root itself, None when outside."""
    path = os.path.normpath(path)
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _one_line(text: str) -> str:
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line[:MAX_REASON]


def _message(reason: str, session: str | None, turn: int | None, files: int, at: float) -> str:
    lines = [_one_line(reason) or "snapshot", ""]
    if session:
        lines.append(f"session: {_one_line(session)}")
    if turn is not None:
        lines.append(f"turn: {int(turn)}")
    lines += [f"files: {files}", f"created: {at:.6f}"]
    return "\n".join(lines) + "\n"


def _parse(record: str, cwd: str) -> Checkpoint:
    commit, _, message = record.strip("\n").partition(" ")
    reason, _, body = message.partition("\n")
    fields = dict(line.split(": ", 1) for line in body.splitlines() if ": " in line)

    def number(key: str, kind: type[float] | type[int]) -> float | int | None:
        try:
            return kind(fields[key])
        except (KeyError, ValueError):
            return None

    return Checkpoint(
        commit[:12],
        cwd,
        float(number("created", float) or 0.0),
        reason.strip(),
        fields.get("session") or None,
        number("turn", int),  # type: ignore[arg-type]
        int(number("files", int) or 0),
    )
