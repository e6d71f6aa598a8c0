"""A small project with checkpoints in a real store, for the checkpoints front ends' tests."""

from __future__ import annotations

from pathlib import Path

from workbench.core.checkpoints import Checkpoint, CheckpointStore


def make_project(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "a.txt").write_text("alpha\n")
    (path / "b.txt").write_text("beta\n")
    (path / "src" / "app.py").write_text("print('hi')\n")
    return path


def snapshot(store: CheckpointStore, project: Path, reason: str, turn: int | None) -> Checkpoint:
    taken = store.snapshot(str(project), reason=reason, session="s1", turn=turn)
    assert taken.checkpoint is not None, taken.note
    return taken.checkpoint


def agent_turn(store: CheckpointStore, project: Path) -> Checkpoint:
    """A checkpoint, then what an agent's turn would do: rewrite a.txt, delete b.txt, add
    c.txt, each recorded in the ledger as the agent's. (a.txt changes size: an edit of the
    same size in the same second as the snapshot is a case for the store's own tests.)"""
    checkpoint = snapshot(store, project, "write_file a.txt", 1)
    (project / "a.txt").write_text("ALPHA, by the agent\n")
    (project / "b.txt").unlink()
    (project / "c.txt").write_text("new\n")
    for name in ("a.txt", "b.txt", "c.txt"):
        store.record_write(str(project), name)
    return checkpoint


def files(project: Path) -> dict[str, str]:
    """Every file under `project` and its text."""
    return {
        str(p.relative_to(project)): p.read_text()
        for p in sorted(project.rglob("*"))
        if p.is_file()
    }
