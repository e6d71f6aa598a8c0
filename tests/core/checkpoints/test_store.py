"""The store: snapshots, listing, changes, diffs and restores, on real files with real git."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.core.checkpoints.conftest import git, make_store
from workbench.core.checkpoints import CheckpointError, CheckpointStore, FileChange


def test_a_snapshot_is_listed_and_an_unchanged_tree_takes_none(
    store: CheckpointStore, project: Path
) -> None:
    first = store.snapshot(project, reason="write_file src/app.py", session="s1", turn=3)
    assert first.checkpoint is not None and first.note == "" and not first.failed
    taken = first.checkpoint
    assert taken.cwd == str(project.resolve()) and taken.files == 4
    assert (taken.reason, taken.session, taken.turn) == ("write_file src/app.py", "s1", 3)
    again = store.snapshot(project, reason="patch src/app.py")
    assert again.checkpoint is None and again.note == f"no change since {taken.id}"
    assert store.list(project) == [taken]
    assert store.get(project) == taken and store.get(project, taken.id[:6]) == taken


def test_a_touched_but_unchanged_file_takes_no_checkpoint(
    store: CheckpointStore, project: Path
) -> None:
    first = store.snapshot(project, reason="one").checkpoint
    assert first is not None
    (project / "README.md").write_text("# demo\n")  # same bytes, new mtime
    assert store.snapshot(project, reason="two").note == f"no change since {first.id}"


def test_list_is_newest_first_and_empty_for_a_new_project(
    store: CheckpointStore, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert store.list(other) == []
    ids = []
    for n in range(3):
        (project / "README.md").write_text(f"# v{n}\n")
        ids.append(store.snapshot(project, reason=f"turn {n}").checkpoint.id)
    assert [c.id for c in store.list(project)] == ids[::-1]


def test_changes_and_file_diff_compare_the_checkpoint_with_now(
    store: CheckpointStore, project: Path
) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "src" / "app.py").write_text("print('bye')\n")
    (project / "README.md").unlink()
    (project / "new.txt").write_text("new\n")
    assert store.changes(project, taken.id) == [
        FileChange("README.md", "deleted"),
        FileChange("new.txt", "added"),
        FileChange("src/app.py", "changed"),
    ]
    diff = store.file_diff(project, taken.id, "src/app.py")
    assert diff.lines[-2:] == ("-print('hello')", "+print('bye')")
    assert (diff.added, diff.removed) == (1, 1)
    assert store.file_diff(project, taken.id, str(project / "new.txt")).created
    assert store.file_diff(project, taken.id, "README.md").removed == 1


def test_a_restore_brings_back_changed_and_deleted_files_and_removes_added_ones(
    store: CheckpointStore, project: Path
) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "src" / "app.py").write_text("broken\n")
    store.record_write(project, "src/app.py")
    (project / "README.md").unlink()
    (project / "run.sh").write_text("rm -rf /\n")
    store.record_write(project, str(project / "run.sh"))
    (project / "junk").mkdir()
    (project / "junk" / "made.txt").write_text("made by the agent\n")
    store.record_write(project, "junk/made.txt")
    plan = store.plan_restore(project, taken.id)
    assert plan.writes == ("README.md", "run.sh", "src/app.py")
    assert plan.deletes == ("junk/made.txt",) and plan.hand_edited == ()
    result = store.restore(plan)
    assert result.written == plan.writes and result.deleted == plan.deletes
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    assert (project / "README.md").read_text() == "# demo\n"
    assert (project / "run.sh").read_text() == "#!/bin/sh\necho run\n"
    assert stat.S_IMODE((project / "run.sh").stat().st_mode) == 0o755  # its mode kept
    assert not (project / "junk").exists()  # the folder the restore emptied goes too
    assert store.changes(project, taken.id) == []


def test_a_hand_edit_is_kept_unless_named_in_overwrite(
    store: CheckpointStore, project: Path
) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "src" / "app.py").write_text("agent\n")
    store.record_write(project, "src/app.py")
    (project / "src" / "util.py").write_text("by hand\n")  # not the agent's
    (project / "notes.txt").write_text("mine\n")
    plan = store.plan_restore(project, taken.id)
    assert plan.hand_edited == ("notes.txt", "src/util.py")
    result = store.restore(plan)
    assert result.written == ("src/app.py",) and result.kept == ("notes.txt", "src/util.py")
    assert (project / "src" / "util.py").read_text() == "by hand\n"
    assert (project / "notes.txt").read_text() == "mine\n"
    again = store.restore(store.plan_restore(project, taken.id), overwrite=["src/util.py"])
    assert again.written == ("src/util.py",) and again.kept == ("notes.txt",)
    assert (project / "src" / "util.py").read_text().startswith("def add")


def test_a_file_the_agent_wrote_in_an_earlier_turn_is_not_a_hand_edit(
    store: CheckpointStore, project: Path
) -> None:
    first = store.snapshot(project, reason="turn 1").checkpoint
    (project / "README.md").write_text("turn 1 wrote this\n")
    store.record_write(project, "README.md")
    store.snapshot(project, reason="turn 2")
    (project / "README.md").write_text("turn 2 wrote this\n")
    store.record_write(project, "README.md")
    (project / "README.md").write_text("turn 1 wrote this\n")  # back to an earlier write
    assert store.plan_restore(project, first.id).hand_edited == ()


def test_a_hand_edit_a_later_checkpoint_holds_is_still_a_hand_edit(
    store: CheckpointStore, project: Path
) -> None:
    first = store.snapshot(project, reason="turn 1").checkpoint
    (project / "README.md").write_text("typed by the person between turns\n")
    store.snapshot(project, reason="turn 2")
    assert store.plan_restore(project, first.id).hand_edited == ("README.md",)


def test_a_restore_is_undone_by_restoring_its_backup(store: CheckpointStore, project: Path) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "src" / "app.py").write_text("the agent's version\n")
    (project / "extra.txt").write_text("extra\n")
    result = store.restore(
        store.plan_restore(project, taken.id), overwrite=["src/app.py", "extra.txt"]
    )
    assert result.backup is not None and result.backup.reason == f"before restore of {taken.id}"
    assert not (project / "extra.txt").exists()
    store.restore(store.plan_restore(project, result.backup.id), overwrite=["src/app.py"])
    assert (project / "src" / "app.py").read_text() == "the agent's version\n"
    assert (project / "extra.txt").read_text() == "extra\n"


def test_restoring_one_file_touches_no_other(store: CheckpointStore, project: Path) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "src" / "app.py").write_text("x\n")
    (project / "src" / "util.py").write_text("y\n")
    plan = store.plan_restore(project, taken.id, files=["src/app.py"])
    assert (plan.writes, plan.deletes) == (("src/app.py",), ())
    store.restore(plan, overwrite=["src/app.py"])
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    assert (project / "src" / "util.py").read_text() == "y\n"


def test_a_symlinked_file_is_restored_as_the_link(store: CheckpointStore, project: Path) -> None:
    os.symlink("src/app.py", project / "link.py")
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "link.py").unlink()
    (project / "link.py").write_text("a file now\n")
    store.restore(store.plan_restore(project, taken.id), overwrite=["link.py"])
    assert os.readlink(project / "link.py") == "src/app.py"


def test_excluded_files_are_not_held_and_never_touched_by_a_restore(
    home: Path, project: Path
) -> None:
    store = make_store(home, max_file_size_mb=1)
    (project / ".env").write_text("API_KEY=secret\n")
    (project / "node_modules" / "x").mkdir(parents=True)
    (project / "node_modules" / "x" / "index.js").write_text("x\n")
    (project / "big.bin").write_bytes(b"\1" * (2 << 20))
    (project / "debug.log").write_text("log\n")
    taken = store.snapshot(project, reason="before").checkpoint
    assert taken.files == 4
    (project / ".env").write_text("API_KEY=changed\n")
    (project / "big.bin").write_bytes(b"\2" * (2 << 20))
    assert store.changes(project, taken.id) == []
    store.restore(store.plan_restore(project, taken.id))
    assert (project / ".env").read_text() == "API_KEY=changed\n"


def test_a_file_grown_past_the_size_cap_leaves_the_snapshots(home: Path, project: Path) -> None:
    store = make_store(home, max_file_size_mb=1)
    (project / "data.csv").write_text("a,b\n")
    first = store.snapshot(project, reason="one").checkpoint
    assert first.files == 5
    (project / "data.csv").write_bytes(b"x" * (2 << 20))
    second = store.snapshot(project, reason="two").checkpoint
    assert second.files == 4
    plan = store.plan_restore(project, first.id)
    assert plan.writes == ("data.csv",) and plan.hand_edited == ("data.csv",)


def test_a_project_over_the_file_cap_is_skipped_with_one_line(home: Path, project: Path) -> None:
    store = make_store(home, max_files=3)
    snap = store.snapshot(project, reason="x")
    assert snap.checkpoint is None and not snap.failed
    assert snap.note == f"skipped: {project.resolve()}: over 3 files (checkpoints.max_files)"
    assert store.list(project) == []


def test_retention_keeps_max_snapshots(home: Path, project: Path) -> None:
    store = make_store(home, max_snapshots=3)
    for n in range(5):
        (project / "README.md").write_text(f"v{n}\n")
        store.snapshot(project, reason=f"turn {n}")
    assert [c.reason for c in store.list(project)] == ["turn 4", "turn 3", "turn 2"]


def test_checkpoints_off_takes_nothing(home: Path, project: Path) -> None:
    store = make_store(home, enabled=False)
    assert not store.enabled
    snap = store.snapshot(project, reason="x")
    assert snap.checkpoint is None and "off" in snap.note
    assert not (home / "checkpoints").exists()


def test_bad_settings_fall_back_with_a_message(home: Path) -> None:
    store = make_store(home, max_snapshots="many", enabled="maybe", max_file_size_mb=-1)
    assert store.enabled and store.settings.max_snapshots == 20
    assert store.settings.max_file_size_mb == 10
    assert len(store.problems) == 3
    assert "checkpoints.max_snapshots: 'many' is not valid; using 20" in store.problems


def test_the_store_is_private(store: CheckpointStore, project: Path, home: Path) -> None:
    store.snapshot(project, reason="x")
    for path in (home / "checkpoints", store.location(project)):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700


# -- bad input ------------------------------------------------------------------------


def test_a_working_directory_that_is_not_a_directory(store: CheckpointStore, project: Path) -> None:
    snap = store.snapshot(project / "README.md", reason="x")
    assert snap.failed and "is not a directory" in snap.note
    with pytest.raises(CheckpointError, match="is not a directory"):
        store.changes(project / "README.md", "abcd")
    with pytest.raises(CheckpointError, match="does not exist"):
        store.plan_restore(project / "missing")


def test_an_unknown_id_and_a_path_outside_are_refused(
    store: CheckpointStore, project: Path, tmp_path: Path
) -> None:
    taken = store.snapshot(project, reason="x").checkpoint
    with pytest.raises(CheckpointError, match="no checkpoint 0000000"):
        store.plan_restore(project, "0000000")
    with pytest.raises(CheckpointError, match="not a checkpoint id"):
        store.get(project, "--patch")
    (tmp_path / "outside.txt").write_text("o\n")
    for bad in ("../outside.txt", str(tmp_path / "outside.txt"), "src/../../outside.txt"):
        with pytest.raises(CheckpointError, match="not inside the working directory"):
            store.plan_restore(project, taken.id, files=[bad])
    with pytest.raises(CheckpointError, match="not in checkpoint"):
        store.plan_restore(project, taken.id, files=["nowhere.txt"])
    with pytest.raises(CheckpointError, match="no checkpoints"):
        store.get(tmp_path)


def test_a_restore_through_a_link_leading_outside_changes_nothing(
    store: CheckpointStore, project: Path, tmp_path: Path
) -> None:
    taken = store.snapshot(project, reason="x").checkpoint
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "src" / "app.py").unlink()
    (project / "src" / "util.py").unlink()
    (project / "src").rmdir()
    os.symlink(outside, project / "src")
    (project / "README.md").write_text("changed\n")
    plan = store.plan_restore(project, taken.id)
    with pytest.raises(CheckpointError, match="leads outside"):
        store.restore(plan, overwrite=plan.hand_edited)
    assert list(outside.iterdir()) == []
    assert (project / "README.md").read_text() == "changed\n"


def test_a_damaged_store_is_reported_then_set_aside(
    store: CheckpointStore, project: Path, home: Path
) -> None:
    taken = store.snapshot(project, reason="x").checkpoint
    (store.location(project) / "HEAD").unlink()
    with pytest.raises(CheckpointError, match="damaged"):
        store.list(project)
    (project / "README.md").write_text("changed\n")
    fresh = store.snapshot(project, reason="y")
    assert fresh.checkpoint is not None and fresh.checkpoint.id != taken.id
    assert len(list((home / "checkpoints").glob("*.damaged-*"))) == 1
    assert [c.reason for c in store.list(project)] == ["y"]


def test_corrupt_objects_are_reported_then_the_store_is_set_aside(
    store: CheckpointStore, project: Path, home: Path
) -> None:
    store.snapshot(project, reason="x")
    objects = store.location(project) / "objects"
    for path in objects.rglob("*"):
        if path.is_file() and len(path.parent.name) == 2:
            path.chmod(0o644)
            path.write_bytes(b"garbage")
    (project / "README.md").write_text("changed\n")
    with pytest.raises(CheckpointError, match=r"damaged.*next snapshot sets it aside"):
        store.file_diff(project, store.get(project).id, "README.md")
    with pytest.raises(CheckpointError, match="damaged"):
        store.restore(store.plan_restore(project), overwrite=["README.md"])
    assert (project / "README.md").read_text() == "changed\n"
    snap = store.snapshot(project, reason="y")
    assert snap.checkpoint is not None and "was set aside as" in snap.note, snap.note
    assert [c.reason for c in store.list(project)] == ["y"]


# -- the user's own repository ---------------------------------------------------------


def test_the_users_repository_is_untouched(store: CheckpointStore, project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "first")
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {project}/HOOK-RAN\n")
    hook.chmod(0o755)
    (project / "src" / "app.py").write_text("edited\n")
    git(project, "add", "src/app.py")  # something staged
    before = {
        "status": git(project, "status", "--porcelain=v2", "--branch"),
        "index": (project / ".git" / "index").read_bytes(),
        "config": (project / ".git" / "config").read_bytes(),
        "refs": git(project, "for-each-ref"),
        "tree": sorted(str(p) for p in (project / ".git").rglob("*")),
    }
    taken = store.snapshot(project, reason="x").checkpoint
    (project / "README.md").write_text("agent\n")
    store.restore(store.plan_restore(project, taken.id), overwrite=["README.md"])
    after = {
        "status": git(project, "status", "--porcelain=v2", "--branch"),
        "index": (project / ".git" / "index").read_bytes(),
        "config": (project / ".git" / "config").read_bytes(),
        "refs": git(project, "for-each-ref"),
        "tree": sorted(str(p) for p in (project / ".git").rglob("*")),
    }
    assert after == before
    assert not (project / "HOOK-RAN").exists()
    assert ".git" not in str(store.changes(project, taken.id))


def test_the_users_git_configuration_is_never_read(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signing, hooks and ignore files of the user's own git setup play no part."""
    user = tmp_path / "user-home"
    (user / ".config" / "git").mkdir(parents=True)
    (user / ".config" / "git" / "ignore").write_text("*\n")  # would ignore everything
    hooks = user / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "pre-auto-gc", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {tmp_path}/HOOK-RAN\n")
        (hooks / name).chmod(0o755)
    (user / ".gitconfig").write_text(
        f"[commit]\n\tgpgSign = true\n[core]\n\thooksPath = {hooks}\n"
        "[gpg]\n\tprogram = /bin/false\n"
    )
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user / ".config"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # inherited: never used
    store = make_store(home)
    taken = store.snapshot(project, reason="x").checkpoint
    assert taken is not None and taken.files == 4
    (project / "README.md").write_text("changed\n")
    store.restore(store.plan_restore(project), overwrite=["README.md"])
    assert (project / "README.md").read_text() == "# demo\n"
    assert not (tmp_path / "HOOK-RAN").exists() and not (tmp_path / "elsewhere").exists()


def test_everything_in_the_store_is_private(home: Path, project: Path) -> None:
    store = make_store(home)
    store.snapshot(project, reason="x")
    store.record_write(project, "README.md")
    (project / "README.md").write_text("y\n")
    store.restore(store.plan_restore(project), overwrite=["README.md"])
    for path in (home / "checkpoints").rglob("*"):
        want = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.lstat().st_mode) & ~want == 0, path
