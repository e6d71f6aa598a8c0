"""A damaged store is judged from the store alone, and one project's store is its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.core.checkpoints.conftest import make_store
from workbench.core.checkpoints import CheckpointError
from workbench.core.checkpoints.shadow import damage


def _two_projects(tmp_path: Path, project: Path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("the other project's file\n")
    return other


def test_a_failure_whose_message_reads_like_damage_leaves_the_store(
    tmp_path: Path, project: Path, make_read_only
) -> None:
    """git's message names the store's path; here it holds the words the old check read
    as damage ("corrupt", "bad object"): a real failure (the refs cannot be written) is
    that snapshot's failure, said, and every checkpoint stays."""
    home = tmp_path / "corrupt bad object missing object" / "home"
    store = make_store(home)
    first = store.snapshot(project, reason="first").checkpoint
    assert first is not None
    make_read_only(store.location(project) / "refs" / "checkpoints")
    (project / "README.md").write_text("changed\n")
    failed = store.snapshot(project, reason="second")
    assert failed.failed and failed.checkpoint is None
    assert "corrupt" in failed.note and "damaged" not in failed.note, failed.note
    assert not list((home / "checkpoints").glob("*.damaged-*"))
    assert [c.id for c in store.list(project)] == [first.id]


@pytest.mark.parametrize("harm", ["no HEAD", "garbage objects", "objects gone", "bad config"])
def test_damage_is_what_the_store_says(store, project: Path, harm: str) -> None:
    store.snapshot(project, reason="x")
    where = store.location(project)
    assert damage(where) == ""
    if harm == "no HEAD":
        (where / "HEAD").unlink()
    elif harm == "bad config":
        (where / "config").write_text("[core\n")
    else:
        for path in (where / "objects").rglob("*"):
            if path.is_file() and len(path.parent.name) == 2:
                path.chmod(0o600)
                path.write_bytes(b"garbage") if harm == "garbage objects" else path.unlink()
    assert damage(where) != ""


def test_one_projects_damaged_store_never_touches_anothers(
    store, project: Path, tmp_path: Path
) -> None:
    other = _two_projects(tmp_path, project)
    kept = store.snapshot(other, reason="other").checkpoint
    store.snapshot(project, reason="mine")
    for path in (store.location(project) / "objects").rglob("*"):
        if path.is_file() and len(path.parent.name) == 2:
            path.chmod(0o600)
            path.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="damaged"):
        store.list(project)
    (project / "README.md").write_text("changed\n")
    fresh = store.snapshot(project, reason="again")
    assert fresh.checkpoint is not None and "set aside" in fresh.note
    assert [c.id for c in store.list(other)] == [kept.id]
    (other / "keep.txt").write_text("broken\n")
    plan = store.plan_restore(other, kept.id)
    store.restore(plan, overwrite=plan.hand_edited)
    assert (other / "keep.txt").read_text() == "the other project's file\n"


def test_a_lost_blob_is_found_by_the_restore_that_needs_it(store, project: Path) -> None:
    taken = store.snapshot(project, reason="x").checkpoint
    blob = subprocess.run(
        ["git", "--git-dir", str(store.location(project)), "rev-parse", f"{taken.id}:README.md"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    loose = store.location(project) / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o600)
    loose.write_bytes(b"garbage")
    (project / "README.md").write_text("changed\n")
    plan = store.plan_restore(project, taken.id)
    with pytest.raises(CheckpointError, match=r"damaged.*nothing was restored"):
        store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "README.md").read_text() == "changed\n"
