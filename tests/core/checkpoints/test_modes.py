"""A restore brings back every permission bit, which git's trees do not keep (644 or 755
only): 0600, 0664, setuid, setgid, sticky; a change of mode alone is a change."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from workbench.core.checkpoints import CheckpointStore, FileChange


def _bits(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.mark.parametrize(
    ("name", "was", "becomes"),
    [
        ("secret.txt", 0o600, 0o644),
        ("run.sh", 0o755, 0o644),  # chmod -x
        ("tool", 0o4755, 0o755),  # chmod u-s
        ("tool", 0o755, 0o4755),  # chmod u+s, undone
        ("shared.txt", 0o664, 0o600),
        ("group-tool", 0o2750, 0o750),
        ("sticky", 0o1644, 0o644),
    ],
)
def test_a_mode_change_is_undone(
    store: CheckpointStore, project: Path, name: str, was: int, becomes: int
) -> None:
    path = project / name
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(was)
    taken = store.snapshot(project, reason="before").checkpoint
    path.chmod(becomes)
    assert store.changes(project, taken.id) == [FileChange(name, "changed")]
    diff = store.file_diff(project, taken.id, name)
    assert diff.note == f"mode {was:04o} → {becomes:04o}, content unchanged"
    plan = store.plan_restore(project, taken.id)
    assert plan.writes == (name,)
    result = store.restore(plan, overwrite=plan.hand_edited)
    assert _bits(path) == was and result.notes == ()
    assert store.changes(project, taken.id) == []
    # the backup kept the mode it replaced: restoring it undoes the restore
    store.restore(store.plan_restore(project, result.backup.id), overwrite=[name])
    assert _bits(path) == becomes


def test_a_mode_only_snapshot_is_a_new_checkpoint(store: CheckpointStore, project: Path) -> None:
    first = store.snapshot(project, reason="one").checkpoint
    (project / "README.md").chmod(0o600)
    second = store.snapshot(project, reason="two")
    assert second.checkpoint is not None and second.checkpoint.id != first.id


def test_a_file_deleted_comes_back_with_its_mode(store: CheckpointStore, project: Path) -> None:
    (project / "key.pem").write_text("not a real key\n")
    (project / "key.pem").chmod(0o400)
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "key.pem").unlink()
    store.restore(store.plan_restore(project, taken.id))
    assert _bits(project / "key.pem") == 0o400


def test_changed_content_and_mode_show_both(store: CheckpointStore, project: Path) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "README.md").write_text("# changed\n")
    (project / "README.md").chmod(0o600)
    diff = store.file_diff(project, taken.id, "README.md")
    assert diff.lines[0] == "mode 0644 → 0600" and "+# changed" in diff.lines


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_setuid_is_not_set_on_a_file_given_another_owner(
    store: CheckpointStore, project: Path
) -> None:
    """A user's setuid program, restored by root, would be root's: it comes back without
    the bit, and the result says so."""
    tool = project / "tool"
    tool.write_text("#!/bin/sh\nid\n")
    os.chown(tool, 4242, 4242)
    tool.chmod(0o6755)
    taken = store.snapshot(project, reason="before").checkpoint
    tool.unlink()
    result = store.restore(store.plan_restore(project, taken.id))
    assert _bits(tool) == 0o755 and tool.stat().st_uid == 0
    assert len(result.notes) == 2
    assert "tool: restored without its setuid bit (it belonged to uid 4242" in result.notes[0]
    assert "setgid" in result.notes[1]


def test_a_persons_chmod_after_the_agents_write_is_a_hand_edit(
    store: CheckpointStore, project: Path
) -> None:
    taken = store.snapshot(project, reason="before").checkpoint
    (project / "README.md").write_text("the agent's\n")
    store.record_write(project, "README.md")
    assert store.plan_restore(project, taken.id).hand_edited == ()
    (project / "README.md").chmod(0o600)
    assert store.plan_restore(project, taken.id).hand_edited == ("README.md",)
