"""A restore backs up only the files it writes or deletes, so it works whatever the tree
has become: the caps decide what a new snapshot takes, never whether an old one can be
restored; restoring its backup touches those files and no other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.core.checkpoints.conftest import git, make_store


@pytest.mark.parametrize(
    ("caps", "grow"),
    [
        ({"max_files": 10}, lambda root: [(root / "gen" / f"f{n}.txt") for n in range(30)]),
        ({"max_total_size_mb": 1}, lambda root: [root / "gen" / f"b{n}.bin" for n in range(3)]),
    ],
    ids=["past max_files", "past max_total_size_mb"],
)
def test_an_earlier_checkpoint_is_restored_past_the_caps(
    home: Path, project: Path, caps: dict, grow
) -> None:
    store = make_store(home, **caps)
    first = store.snapshot(project, reason="before").checkpoint
    assert first is not None
    made = grow(project)
    made[0].parent.mkdir()
    for path in made:
        path.write_bytes(os.urandom(600_000) if path.suffix == ".bin" else b"x\n")
    (project / "README.md").write_text("the agent's\n")
    (project / "src" / "app.py").unlink()
    assert "skipped" in store.snapshot(project, reason="now").note  # past the caps
    one = store.plan_restore(project, first.id, files=["README.md"])
    done = store.restore(one, overwrite=one.hand_edited)
    assert (project / "README.md").read_text() == "# demo\n"
    assert done.backup is not None and done.backup.files == 1  # README.md as it was
    plan = store.plan_restore(project, first.id)
    assert plan.writes == ("src/app.py",) and len(plan.deletes) == len(made)
    result = store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "src" / "app.py").exists() and not (project / "gen").exists()
    assert result.backup.files == len(made)  # the files it deleted, nothing else
    # its backup brings them back, and touches no other file
    (project / "README.md").write_text("edited since\n")
    store.restore(store.plan_restore(project, result.backup.id))
    assert all(path.exists() for path in made) and not (project / "src" / "app.py").exists()
    assert (project / "README.md").read_text() == "edited since\n"


def test_a_restore_works_with_a_nested_repository_added_since(store, project: Path) -> None:
    first = store.snapshot(project, reason="before").checkpoint
    git(project, "init", "-q", "vendor")
    (project / "vendor" / "x.c").write_text("int x;\n")
    (project / "README.md").write_text("changed\n")
    plan = store.plan_restore(project, first.id)
    assert plan.deletes == ("vendor/x.c",) and plan.writes == ("README.md",)
    store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "README.md").read_text() == "# demo\n"
    assert not (project / "vendor" / "x.c").exists()


def test_a_file_that_cannot_be_backed_up_is_not_replaced(store, project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "README.md").write_text("mine, unreadable\n")
    (project / "README.md").chmod(0)
    try:
        plan = store.plan_restore(project, taken.id, files=["README.md"])
        with pytest.raises(Exception, match="no backup could hold it"):
            store.restore(plan, overwrite=["README.md"])
    finally:
        (project / "README.md").chmod(0o644)
    assert (project / "README.md").read_text() == "mine, unreadable\n"
