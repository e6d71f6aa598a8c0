"""What a project holds that git itself would stop at: nested repositories, files git would
not read or name, a FIFO where git reads its rules. Each is a folder or a file the snapshot
handles (held, or left out and said), never a failed snapshot or restore."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.core.checkpoints.conftest import git
from workbench.core.checkpoints import CheckpointStore


def _held(store: CheckpointStore, project: Path) -> set[str]:
    """The paths the latest checkpoint holds (git's own listing of its tree)."""
    commit = store._full(store._project(project), store.get(project).id)
    out = subprocess.run(
        ["git", "--git-dir", str(store.location(project)), "ls-tree", "-r", "-z",
         "--name-only", commit],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


@pytest.mark.parametrize("name", ["vendor", "corrupt"])
def test_a_nested_repository_without_a_commit_is_a_folder(
    store: CheckpointStore, project: Path, name: str
) -> None:
    """`git init -q vendor` made every snapshot and restore fail ("does not have a commit
    checked out"), and `git init -q corrupt` had the whole store set aside."""
    first = store.snapshot(project, reason="before").checkpoint
    git(project, "init", "-q", name)
    (project / name / "lib.c").write_text("int x;\n")
    (project / "README.md").write_text("changed\n")
    second = store.snapshot(project, reason="after")
    assert second.checkpoint is not None and not second.failed, second.note
    assert second.note == ""
    held = _held(store, project)
    assert f"{name}/lib.c" in held and not any(".git" in p.split("/") for p in held)
    plan = store.plan_restore(project, first.id)
    assert plan.deletes == (f"{name}/lib.c",)
    store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "README.md").read_text() == "# demo\n"
    assert (project / name / ".git" / "HEAD").is_file()  # its own git folder untouched
    assert [c.id for c in store.list(project)][-1] == first.id


def test_a_clone_and_a_submodule_are_held_as_files(
    store: CheckpointStore, project: Path, tmp_path: Path
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "mod.py").write_text("VALUE = 1\n")
    git(upstream, "init", "-q")
    git(upstream, "add", "mod.py")
    git(upstream, "commit", "-qm", "one")
    git(project, "init", "-q")
    git(project, "clone", "-q", str(upstream), "cloned")
    git(project, "submodule", "add", "-q", str(upstream), "sub")
    assert (project / "sub" / ".git").is_file()  # a submodule's link to its git folder
    taken = store.snapshot(project, reason="x")
    assert taken.checkpoint is not None and taken.note == "", taken.note
    held = _held(store, project)
    assert {"cloned/mod.py", "sub/mod.py", ".gitmodules"} <= held
    assert not any(part.lower() == ".git" for p in held for part in p.split("/"))
    (project / "sub" / "mod.py").write_text("VALUE = 2\n")
    (project / "cloned" / "mod.py").unlink()
    plan = store.plan_restore(project)
    assert plan.writes == ("cloned/mod.py", "sub/mod.py")
    store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "sub" / "mod.py").read_text() == "VALUE = 1\n"
    assert (project / "cloned" / "mod.py").read_text() == "VALUE = 1\n"
    assert git(project / "sub", "status", "--porcelain") == ""


@pytest.mark.parametrize("name", [".gitattributes", ".gitignore"])
def test_a_fifo_where_git_reads_its_rules_does_not_hang_a_snapshot(
    store: CheckpointStore, project: Path, name: str
) -> None:
    """git opens `.gitattributes` when it reads a file and `.gitignore` when it checks one:
    a FIFO there waited for a writer until the 60 s timeout, every turn."""
    store.snapshot(project, reason="before")
    os.mkfifo(project / "src" / name)
    (project / "src" / "new.py").write_text("new\n")
    snap = store.snapshot(project, reason="after")
    assert snap.checkpoint is not None and not snap.failed, snap.note
    assert "src/new.py" in _held(store, project)


def test_gitignore_rules_apply_to_new_files_and_names_are_never_pathspecs(
    store: CheckpointStore, project: Path
) -> None:
    (project / ".gitignore").write_text("scratch/\n")
    (project / "keep.tmp").write_text("held before the rule: it stays held, as in git\n")
    store.snapshot(project, reason="one")
    (project / ".gitignore").write_text("scratch/\n*.tmp\n")
    for name in ("x.tmp", ":(exclude)README.md", ":!src", "*", "a[1].txt"):
        (project / name).write_text(f"{name}\n")
    (project / "scratch").mkdir()
    (project / "scratch" / "s.txt").write_text("s\n")
    (project / "README.md").write_text("two\n")
    store.snapshot(project, reason="two")
    held = _held(store, project)
    assert {":(exclude)README.md", ":!src", "*", "a[1].txt", "keep.tmp", "README.md"} <= held
    assert "x.tmp" not in held and "scratch/s.txt" not in held


def test_names_git_would_refuse_on_another_system_are_held(
    store: CheckpointStore, project: Path
) -> None:
    """git's guards for checkouts on Windows and macOS would leave these out; `.GIT` is
    git's own folder on a case-insensitive disk: left out, like `.git`."""
    for name in ("git~1", ".git ", "con.", "a\\b"):
        (project / name).mkdir()
        (project / name / "f.txt").write_text("f\n")
    (project / ".GIT").mkdir()
    (project / ".GIT" / "config").write_text("[core]\n")
    snap = store.snapshot(project, reason="x")
    assert snap.checkpoint is not None and snap.note == "", snap.note
    held = _held(store, project)
    assert {"git~1/f.txt", ".git /f.txt", "con./f.txt", "a\\b/f.txt"} <= held
    assert ".GIT/config" not in held
