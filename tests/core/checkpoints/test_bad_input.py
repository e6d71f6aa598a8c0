"""Unreadable files and a full disk, for real: named, never fatal, nothing changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.checkpoints.conftest import make_store
from workbench.core.checkpoints import CheckpointError

REPO = Path(__file__).resolve().parents[3]
SNAPSHOT = """
import dataclasses, json, sys
from pathlib import Path
from workbench.core.checkpoints import CheckpointStore
from workbench.core.config import Config
home = Path(sys.argv[2])
store = CheckpointStore(home, Config(home / "config.yaml", {}))
snap = store.snapshot(sys.argv[1], reason="x")
print(json.dumps({"note": snap.note, "failed": snap.failed,
                  "files": snap.checkpoint.files if snap.checkpoint else None}))
"""


def test_unreadable_files_and_folders_are_named_not_fatal(tmp_path: Path, project: Path) -> None:
    """Run without the capabilities that let root read anything (as a user would be)."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root without setpriv: every file is readable")
    (project / "locked.txt").write_text("no\n")
    (project / "locked.txt").chmod(0)
    (project / "closed").mkdir()
    (project / "closed" / "inside.txt").write_text("no\n")
    (project / "closed").chmod(0)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    argv = [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", SNAPSHOT]
    try:
        done = subprocess.run(
            [*argv, str(project), str(tmp_path / "home")],
            capture_output=True, text=True, check=True, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
    finally:
        (project / "closed").chmod(0o755)
    result = json.loads(done.stdout)
    assert not result["failed"] and result["files"] == 4  # the four readable files
    assert "locked.txt" in result["note"] and "closed (Permission denied)" in result["note"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root only): the disk the store is on fills up."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=700", "tmpfs", str(mount)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root, or not allowed)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_fails_the_snapshot_with_a_message(small_disk: Path, project: Path) -> None:
    store = make_store(small_disk / "home")
    (project / "data.bin").write_bytes(os.urandom(3 << 20))  # does not fit, even zipped
    snap = store.snapshot(project, reason="x")
    assert snap.checkpoint is None and snap.failed
    assert snap.note.startswith("failed: disk full"), snap.note


def test_a_restore_on_a_full_disk_changes_nothing(small_disk: Path, project: Path) -> None:
    store = make_store(small_disk / "home")
    taken = store.snapshot(project, reason="x").checkpoint
    assert taken is not None
    changed = os.urandom(3 << 20)  # what the restore replaces: its backup will not fit
    (project / "src" / "app.py").write_bytes(changed)
    plan = store.plan_restore(project, taken.id, files=["src/app.py"])
    with pytest.raises(CheckpointError, match=r"disk is full.*nothing was restored"):
        store.restore(plan, overwrite=["src/app.py"])
    assert (project / "src" / "app.py").read_bytes() == changed


def test_a_read_only_home_fails_the_snapshot_with_a_message(
    home: Path, project: Path, make_read_only
) -> None:
    home.mkdir()
    make_read_only(home)
    snap = make_store(home).snapshot(project, reason="x")
    assert snap.failed and snap.checkpoint is None and snap.note.startswith("failed: ")


def test_a_snapshot_killed_while_it_changed_the_index_does_not_block_the_next(
    home: Path, project: Path
) -> None:
    """A process killed while git changes the index leaves git's `<index>.lock` behind
    (seen for real with SIGKILL): every later snapshot failed."""
    store = make_store(home)
    first = store.snapshot(str(project), reason="first")
    assert first.checkpoint is not None
    index = store.location(project) / "index"
    Path(f"{index}.lock").write_bytes(b"")  # what the killed git process left
    (project / "README.md").write_text("# changed\n")
    after = store.snapshot(str(project), reason="after the kill")
    assert after.checkpoint is not None and not after.failed, after.note
    plan = store.plan_restore(str(project), first.checkpoint.id)
    store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "README.md").read_text() == "# demo\n"


def test_a_ref_pointing_nowhere_is_dropped_not_the_whole_store(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """One checkpoint whose commit was lost (a ref to a missing object): the others, and
    those of other projects, stay listed and restorable; the store is not set aside."""
    store = make_store(home)
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("x\n")
    kept = store.snapshot(str(other), reason="other project").checkpoint
    first = store.snapshot(str(project), reason="first").checkpoint
    assert kept is not None and first is not None
    refs = store.location(project) / "refs" / "checkpoints"
    (refs / ("0123abcd" * 5)).write_text("0123abcd" * 5 + "\n")
    assert [c.id for c in store.list(str(project))] == [first.id]
    assert [c.id for c in store.list(str(other))] == [kept.id]
    (project / "README.md").write_text("# changed\n")
    again = store.snapshot(str(project), reason="again")
    assert again.checkpoint is not None and "set aside" not in again.note
    assert not list((home / "checkpoints").glob("*.damaged-*"))


@pytest.mark.parametrize("lost", ["files.json", "index", "both", "garbage"])
def test_a_stat_cache_that_does_not_match_its_index_is_rebuilt(
    home: Path, project: Path, lost: str
) -> None:
    """The stat cache names the index it describes: one lost, damaged or left behind by a
    crash between the two writes is started anew, never trusted."""
    store = make_store(home)
    first = store.snapshot(project, reason="first").checkpoint
    where = store.location(project)
    (project / "README.md").write_text("# demo!\n")
    if lost == "garbage":
        (where / "files.json").write_text("{not json")
    for name in {"both": ("files.json", "index")}.get(lost, (lost,)):
        if name != "garbage":
            (where / name).unlink()
    second = store.snapshot(project, reason="second").checkpoint
    assert second is not None and second.files == first.files
    assert [c.path for c in store.changes(project, first.id)] == ["README.md"]
    assert store.changes(project, second.id) == []
