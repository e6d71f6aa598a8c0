"""The store earlier versions shared: each project's checkpoints move to its own store,
listable and restorable as before, and the shared store goes once it is empty."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.core.checkpoints.conftest import make_store
from workbench.core.checkpoints.shadow import project_key


def legacy_snapshot(home: Path, project: Path, reason: str) -> str:
    """A checkpoint as earlier versions took it: `git add -A` into the project's index in
    the shared store, a commit with no parent, `refs/hermes/<project>/<commit>`, and the
    project's metadata in `projects/<project>.json`."""
    shared = home / "checkpoints" / "store"
    key = project_key(str(project.resolve()))
    for sub in ("indexes", "projects", "ledgers"):
        (shared / sub).mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"], "GIT_DIR": str(shared), "GIT_WORK_TREE": str(project),
        "GIT_INDEX_FILE": str(shared / "indexes" / key), "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "hermes-tui",
        "GIT_AUTHOR_EMAIL": "checkpoints@hermes-tui.invalid", "GIT_COMMITTER_NAME": "hermes-tui",
        "GIT_COMMITTER_EMAIL": "checkpoints@hermes-tui.invalid",
    }  # fmt: skip

    def git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", *args], env=env, cwd=project, input=stdin,
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip

    if not (shared / "HEAD").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(shared)], check=True)
    git("add", "-A", ".")
    tree = git("write-tree")
    now = time.time()
    commit = git("commit-tree", tree, stdin=f"{reason}\n\nfiles: 4\ncreated: {now:.6f}\n")
    git("update-ref", f"refs/hermes/{key}/{commit}", commit)
    meta_path = shared / "projects" / f"{key}.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta.update(cwd=str(project.resolve()), head=commit, tree=tree)
    meta["ids"] = [*meta.get("ids", []), [commit, now]]
    meta_path.write_text(json.dumps(meta))
    return commit


def test_old_checkpoints_stay_listable_and_restorable(
    home: Path, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("x\n")
    mine = legacy_snapshot(home, project, "write_file README.md")
    theirs = legacy_snapshot(home, other, "terminal: rm x.txt")
    store = make_store(home)
    (listed,) = store.list(project)
    assert (listed.id, listed.reason) == (mine[:12], "write_file README.md")
    assert store.location(project).is_dir()
    shared = home / "checkpoints" / "store"
    assert shared.is_dir()  # the other project is still in it
    (project / "README.md").write_text("the agent's\n")
    (project / "src" / "app.py").unlink()
    plan = store.plan_restore(project, listed.id)
    assert plan.writes == ("README.md", "src/app.py")
    store.restore(plan, overwrite=plan.hand_edited)
    assert (project / "README.md").read_text() == "# demo\n"
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    # a new snapshot of the moved project keeps modes; the old checkpoint is still there
    (project / "run.sh").chmod(0o700)
    assert store.snapshot(project, reason="new").checkpoint is not None
    assert [c.reason for c in store.list(project)][-1] == "write_file README.md"
    # the other project moves when it is first used; then the shared store is gone
    assert [c.id for c in store.list(other)] == [theirs[:12]]
    assert not shared.exists()


def test_a_shared_store_that_cannot_be_read_leaves_a_project_starting_anew(
    home: Path, project: Path
) -> None:
    legacy_snapshot(home, project, "old")
    shared = home / "checkpoints" / "store"
    for path in (shared / "objects").rglob("*"):
        if path.is_file() and len(path.parent.name) == 2:
            path.unlink()
    store = make_store(home)
    assert store.list(project) == []
    (project / "README.md").write_text("changed\n")
    snap = store.snapshot(project, reason="new")
    assert snap.checkpoint is not None and "could not be moved" in snap.note, snap.note
    assert [c.reason for c in store.list(project)] == ["new"]
    assert shared.exists()  # left as it is, for the person to look at
