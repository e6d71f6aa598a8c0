"""CheckpointStore: snapshots of a working directory in the shadow store, and what they hold.

A snapshot is one commit (no parent) of the project's index, referenced by its own ref
`refs/hermes/<project>/<commit>`, so pruning one is deleting one ref. A turn pays one walk of
the tree (see scan.py); when the walk's signature is the last snapshot's, nothing else runs.
Otherwise: `git add -A` on the project's own index (git's stat cache makes it cheap),
`git write-tree`, and, when the tree differs from the last one, `git commit-tree` and
`git update-ref`. Restoring is in restore.py, pruning in prune.py.
"""

from __future__ import annotations

import builtins  # the class below has a method named list
import contextlib
import logging
import os
import re
import shutil
import struct
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from workbench.core.checkpoints import ledger, prune
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
    Project,
    check_store,
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
_UNREADABLE = re.compile(r"unable to index file '?(.+?)'?$", re.M)
MAX_REASON = 200
DAMAGED = "damaged"  # a marker: a read found the store damaged


class CheckpointStore:
    def __init__(self, home: Path, config: Config | None = None) -> None:
        self.home = Path(home)
        if config is None:
            config = load_config(self.home / "config.yaml")
        self.settings: Settings = settings_from(config)
        self.root = self.home / "checkpoints"
        self.store = self.root / "store"

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def problems(self) -> tuple[str, ...]:
        """What was wrong with the `checkpoints:` keys (each fell back to its default)."""
        return self.settings.problems

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
        """A snapshot whether or not automatic ones are on (a restore's backup), with the
        commit that holds the state now (a new one, or the unchanged last one)."""
        try:
            project = self._project(cwd)
        except CheckpointError as exc:
            return Taken(Snapshot(None, f"failed: {exc}", failed=True))
        try:
            return self._take(project, reason, session, turn)
        except CheckpointError as exc:
            return Taken(Snapshot(None, f"skipped: {exc}"))
        except GitFailed as exc:
            return Taken(Snapshot(None, self._failure(exc), failed=True))
        except OSError as exc:
            what = "disk full" if exc.errno in (28, 122) else (exc.strerror or str(exc))
            return Taken(Snapshot(None, f"failed: {what} ({exc.filename or self.store})", True))
        except Exception as exc:  # a snapshot never breaks the call it precedes
            logger.exception("snapshot of %s failed", project.cwd)
            return Taken(Snapshot(None, f"failed: {type(exc).__name__}: {exc}", failed=True))

    def _take(self, project: Project, reason: str, session: str | None, turn: int | None) -> Taken:
        found = self._scan(project)
        if found.over:
            return Taken(Snapshot(None, f"skipped: {project.cwd}: {found.over}"))
        opened = self._open_store()
        with locked(project.meta_path):
            _drop_stale_lock(project.index)
            meta = project.meta()
            head = meta.get("head")
            if head and meta.get("signature") == found.signature:
                return Taken(Snapshot(None, f"no change since {head[:12]}"), head)
            unreadable = self._stage(project, project.index, found, meta.get("large", ()))
            tree = project.git().text("write-tree").strip()
            meta.update(
                cwd=project.cwd, signature=found.signature, large=found.large,
                last_touch=time.time(),
            )  # fmt: skip
            if head and meta.get("tree") == tree:
                project.save_meta(meta)
                return Taken(Snapshot(None, f"no change since {head[:12]}"), head)
            now = round(time.time(), 6)  # as the commit message keeps it
            files = _index_entries(project.index)
            body = _message(reason, session, turn, files, now)
            commit = project.git().text("commit-tree", tree, stdin=body.encode()).strip()
            project.git().run("update-ref", f"{project.refs}{commit}", commit, "")
            ids = [*meta.get("ids", []), [commit, now]]
            meta.update(head=commit, tree=tree, ids=ids)
            meta.setdefault("created", now)
            dropped = prune.retain(project, meta, self.settings, now)  # never the newest
            project.save_meta(meta)
        checkpoint = Checkpoint(
            commit[:12], project.cwd, now, _one_line(reason), session, turn, files
        )
        notes = [opened] if opened else []
        if unreadable or found.unreadable:
            left = [*unreadable, *found.unreadable]
            notes.append(f"taken without {len(left)} unreadable: " + ", ".join(left[:5]))
        note = "; ".join(notes)
        if dropped:
            logger.info("pruned %d old checkpoint(s) of %s", dropped, project.cwd)
        prune.maybe_maintain(self.store, self.root, self.settings)
        return Taken(Snapshot(checkpoint, note), commit)

    def _open_store(self) -> str:
        """Create the store if missing. One found damaged (here, or by a read that left the
        `damaged` marker) is set aside and a new one started; returns a note saying so."""
        marker = self.root / DAMAGED
        damaged = self.store.exists() and not is_store(self.store)
        if damaged or marker.exists():
            moved = set_aside(self.store) if self.store.exists() else None
            with contextlib.suppress(OSError):
                marker.unlink()
            logger.warning("checkpoint store %s was damaged; set aside as %s", self.store, moved)
            init_store(self.store)
            return f"the damaged checkpoint store was set aside as {moved}; a new one started"
        init_store(self.store)
        return ""

    def _scan(self, project: Project) -> Scan:
        s = self.settings
        if project.cwd in ("/", os.path.realpath(os.path.expanduser("~"))):
            raise CheckpointError(f"{project.cwd} is too broad to snapshot (/ or the home)")
        home = os.path.realpath(self.home)
        if _inside(home, project.cwd) is not None:
            raise CheckpointError(f"{project.cwd} is HERMES_HOME or inside it: not snapshotted")
        skip = _inside(project.cwd, home)
        found = scan(
            project.cwd,
            max_files=s.max_files,
            max_bytes=s.max_file_bytes,
            max_total=s.max_total_size_mb * 1024 * 1024,
            skip=skip,
        )
        return found

    def _stage(
        self, project: Project, index: Path, found: Scan, was_large: Collection[str] = ()
    ) -> list[str]:
        """`git add -A` of the project into `index`, without the files over the size cap
        (nor HERMES_HOME when it is inside); returns the files git could not read."""
        excluded = [*found.large, *([found.skip] if found.skip else [])]
        spec = b"\0".join([b".", *(b":(exclude,literal)" + os.fsencode(p) for p in excluded)])
        git = project.git(index)
        done = git.run(
            "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
            stdin=spec + b"\0", ok=(0, 1),
        )  # fmt: skip
        unreadable: list[str] = []
        if done.returncode == 1:
            err = done.stderr.decode(errors="replace")
            unreadable = _UNREADABLE.findall(err)
            if not unreadable:
                raise GitFailed(["add"], 1, err)
        grown = sorted(set(found.large) - set(was_large))
        if grown:  # a file that passed the size cap since: out of the index too
            names = b"".join(os.fsencode(p) + b"\0" for p in grown)
            git.run("update-index", "--force-remove", "-z", "--stdin", stdin=names)
        return unreadable

    def _failure(self, exc: GitFailed) -> str:
        if exc.kind == "disk-full":
            return f"failed: disk full ({exc.line})"
        if exc.kind == "damaged":
            moved = set_aside(self.store)
            where = f"set aside as {moved}" if moved else "it could not be moved aside"
            return (
                f"failed: the checkpoint store is damaged ({exc.line}); {where}, "
                "a new one starts with the next snapshot"
            )
        return f"failed: {exc.line}"

    # -- reading ---------------------------------------------------------------------

    def list(self, cwd: str | os.PathLike[str]) -> list[Checkpoint]:
        """The project's checkpoints, newest first ([] for a project never snapshotted)."""
        project = self._project(cwd, must_exist=False)
        if not self.store.exists() or not project.meta_path.exists():
            return []
        return self._listed(project)

    def _listed(self, project: Project) -> builtins.list[Checkpoint]:
        if self.store.exists() and not is_store(self.store):
            raise CheckpointError(
                self._damaged(GitFailed(["for-each-ref"], 128, "not a git repository"))
            )
        for attempt in range(2):
            try:
                out = (
                    project.git()
                    .run("for-each-ref", "--format=%(objectname) %(contents)%00", project.refs)
                    .stdout
                )
                break
            except GitFailed as exc:
                if attempt or not _drop_lost_refs(project, exc):
                    raise CheckpointError(self._damaged(exc)) from exc
        found = []
        for record in out.split(b"\0\n"):
            if record.strip():
                found.append(_parse(record.decode("utf-8", "replace"), project.cwd))
        return sorted(found, key=lambda c: c.created, reverse=True)

    def get(self, cwd: str | os.PathLike[str], id: str | None = None) -> Checkpoint:
        """One checkpoint by id (a prefix of 4+ hex digits), or the latest when `id` is None."""
        return self._get(self._project(cwd, must_exist=False), id)[0]

    def _get(self, project: Project, id: str | None) -> tuple[Checkpoint, str]:
        listed = self._listed(project) if self.store.exists() else []
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
        out = project.git().text("for-each-ref", "--format=%(objectname)", project.refs)
        for commit in out.split():
            if commit.startswith(short):
                return commit
        raise CheckpointError(f"no checkpoint {short} of {project.cwd}")

    def changes(self, cwd: str | os.PathLike[str], id: str) -> builtins.list[FileChange]:
        """What differs between the checkpoint and the working directory now."""
        project = self._project(cwd)
        _, commit = self._get(project, id)
        return [FileChange(path, kind) for path, kind, _ in self._diff(project, commit)]

    def _diff(self, project: Project, commit: str) -> builtins.list[tuple[str, str, str]]:
        """(path, kind, blob id now) for each file that differs from `commit` now."""
        now = self._now_tree(project)
        try:
            out = (
                project.git()
                .run("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", commit, now)
                .stdout
            )
        except GitFailed as exc:
            raise CheckpointError(self._damaged(exc)) from exc
        parts = out.split(b"\0")
        found = []
        for head, path in zip(parts[0::2], parts[1::2], strict=False):
            fields = head.decode().lstrip(":").split()
            if len(fields) < 5 or "160000" in fields[:2]:
                continue  # a nested repository's commit: nothing of its files is held
            kind = {"A": "added", "D": "deleted"}.get(fields[4][0], "changed")
            found.append((os.fsdecode(path), kind, fields[3]))
        return sorted(found)

    def _now_tree(self, project: Project) -> str:
        """The tree of the working directory as it is now, staged in a copy of the
        project's index (its stat cache), never in the index itself."""
        found = self._scan(project)
        if found.over:
            raise CheckpointError(f"{project.cwd}: {found.over}")
        fd, name = tempfile.mkstemp(prefix=f"{project.key}.", dir=project.index.parent)
        os.close(fd)
        temp = Path(name)
        try:
            if project.index.exists():
                # copy2 keeps the index's mtime: git trusts a file's cached stat only when
                # it is older than the index, so a fresh mtime would hide a same-size edit
                # made in the snapshot's second.
                shutil.copy2(project.index, temp)
            else:
                temp.unlink()
            self._stage(project, temp, found, ())
            return project.git(temp).text("write-tree").strip()
        except GitFailed as exc:
            raise CheckpointError(self._damaged(exc)) from exc
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()

    def file_diff(self, cwd: str | os.PathLike[str], id: str, path: str) -> FileDiff:
        """The file as the checkpoint holds it (old) against the file now (new)."""
        from workbench.core.checkpoints.restore import file_diff

        project = self._project(cwd)
        _, commit = self._get(project, id)
        try:
            return file_diff(project, commit, self.relative(project.cwd, path))
        except GitFailed as exc:
            raise CheckpointError(self._damaged(exc)) from exc

    # -- restoring -------------------------------------------------------------------

    def plan_restore(
        self, cwd: str | os.PathLike[str], id: str | None = None, files: Sequence[str] = ()
    ) -> RestorePlan:
        from workbench.core.checkpoints.restore import plan

        project = self._project(cwd)
        checkpoint, commit = self._get(project, id)
        wanted = [self.relative(project.cwd, f) for f in files]
        try:
            return plan(self, project, checkpoint, commit, wanted)
        except GitFailed as exc:
            raise CheckpointError(self._damaged(exc)) from exc

    def restore(self, plan: RestorePlan, *, overwrite: Collection[str] = ()) -> RestoreResult:
        from workbench.core.checkpoints.restore import restore

        project = self._project(plan.checkpoint.cwd)
        _, commit = self._get(project, plan.checkpoint.id)
        keep = {self.relative(project.cwd, p) for p in overwrite}
        try:
            return restore(self, project, plan, commit, keep)
        except GitFailed as exc:
            raise CheckpointError(self._damaged(exc) + "; nothing was restored") from exc

    # -- the ledger and coverage -----------------------------------------------------

    def record_write(self, cwd: str | os.PathLike[str], path: str) -> None:
        """The agent wrote `path` (its content now goes in the ledger); never raises."""
        try:
            project = self._project(cwd)
            rel = self.relative(project.cwd, path)
            ledger.record(project.ledger_path, rel, ledger.blob_id(os.path.join(project.cwd, rel)))
        except (CheckpointError, OSError) as exc:
            logger.debug("not recorded in the ledger: %s (%s)", path, exc)

    def record_changed_since(self, cwd: str | os.PathLike[str], commit: str) -> int:
        """Every file that differs from `commit` now goes in the ledger as the agent's
        (added or changed: its blob now; deleted: None): what a command the gate could not
        follow left is the agent's, not a hand edit. One scan; never raises; the count."""
        try:
            project = self._project(cwd)
            found = self._diff(project, commit)
            for rel, kind, blob in found:
                ledger.record(project.ledger_path, rel, None if kind == "deleted" else blob)
        except (CheckpointError, OSError) as exc:
            logger.debug("changes since %s not recorded in the ledger: %s", commit[:12], exc)
            return 0
        return len(found)

    def held(self, cwd: str | os.PathLike[str], commit: str, paths: Collection[str]) -> set[str]:
        """Of `paths` (absolute, inside cwd), those the checkpoint `commit` holds with the
        content they have now, or whose content now the agent wrote (the ledger): either
        way, replacing them loses nothing."""
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
            out = (
                project.git()
                .run("--literal-pathspecs", "ls-tree", "-r", "-z", commit, "--", *rels)
                .stdout
            )
        except GitFailed:
            return set()
        stored = {}
        for record in out.split(b"\0"):
            if b"\t" in record:
                head, name = record.split(b"\t", 1)
                stored[os.fsdecode(name)] = head.split()[2].decode()
        entries = ledger.load(project.ledger_path)
        result = set()
        for rel, path in rels.items():
            blob = ledger.blob_id(os.path.join(project.cwd, rel))
            if blob is not None and (
                stored.get(rel) == blob or ledger.agent_wrote(entries, rel, blob)
            ):
                result.add(path)
        return result

    # -- helpers ---------------------------------------------------------------------

    def _project(self, cwd: str | os.PathLike[str], *, must_exist: bool = True) -> Project:
        raw = os.fspath(cwd)
        real = os.path.realpath(raw)
        if must_exist and not os.path.isdir(real):
            what = "does not exist" if not os.path.lexists(real) else "is not a directory"
            raise CheckpointError(f"the working directory {raw} {what}")
        return Project(self.store, real, project_key(real))

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

    def _damaged(self, exc: GitFailed) -> str:
        if exc.kind == "damaged":
            problem = check_store(self.store) or exc.line
            with contextlib.suppress(OSError):  # the next snapshot sets the store aside
                atomic_write_text(self.root / DAMAGED, problem + "\n", mode=0o600)
            return (
                f"the checkpoint store {self.store} is damaged ({problem}); the next "
                "snapshot sets it aside and starts a new one"
            )
        if exc.kind == "disk-full":
            return f"the disk is full ({exc.line})"
        return exc.line


class Taken:
    """A snapshot and the commit that holds the state now (None when none does)."""

    __slots__ = ("commit", "snapshot")

    def __init__(self, snapshot: Snapshot, commit: str | None = None) -> None:
        self.snapshot, self.commit = snapshot, commit


def _drop_lost_refs(project: Project, exc: GitFailed) -> bool:
    """Some checkpoints' commits are gone from the store (refs to missing objects), others
    are there: the lost ones hold nothing to restore, so their refs are deleted and the
    others stay usable, rather than the whole store, every project's checkpoints, being set
    aside. When none is left the store is damaged (False)."""
    if exc.kind != "damaged":
        return False
    try:
        git = project.git()
        listed = git.text("for-each-ref", "--format=%(objectname) %(refname)", project.refs)
        refs = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
        asked = "".join(f"{oid}\n" for oid in refs).encode()
        found = git.run("cat-file", "--batch-check", stdin=asked).stdout.decode()
        lost = {line.split()[0] for line in found.splitlines() if line.endswith(" missing")}
        if not lost or len(lost) == len(refs):
            return False
        for oid in lost:
            git.run("update-ref", "-d", "--no-deref", refs[oid])
    except GitFailed:
        return False
    logger.warning("dropped %d checkpoint(s) whose commits are missing from the store", len(lost))
    return True


def _drop_stale_lock(index: Path) -> None:
    """git's `<index>.lock` found while holding the project's lock was left by a process
    killed during `git add` (only a holder of that lock stages into the index): without
    removing it every later snapshot, and so every restore's backup, would fail."""
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


def _index_entries(index: Path) -> int:
    """The number of entries in a git index file (its header), without a git process."""
    try:
        with open(index, "rb") as handle:
            header = handle.read(12)
        return struct.unpack(">I", header[8:12])[0] if header[:4] == b"DIRC" else 0
    except OSError:
        return 0
