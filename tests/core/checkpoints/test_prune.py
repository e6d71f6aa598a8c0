"""Retention by age, the store's size cap across projects, and gc."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.core.checkpoints.conftest import make_store
from workbench.core.checkpoints.prune import maintain


def test_checkpoints_older_than_retention_days_go_but_the_newest_stays(
    home: Path, project: Path
) -> None:
    store = make_store(home, retention_days=1)
    for n in range(3):
        (project / "README.md").write_text(f"v{n}\n")
        store.snapshot(project, reason=f"turn {n}")
    meta_path = store.location(project) / "project.json"
    meta = json.loads(meta_path.read_text())
    meta["ids"] = [[commit, at - 3 * 86400] for commit, at in meta["ids"]]  # three days ago
    meta_path.write_text(json.dumps(meta))
    (project / "README.md").write_text("now\n")
    store.snapshot(project, reason="today")
    assert [c.reason for c in store.list(project)] == ["today"]


def test_the_size_cap_drops_the_oldest_of_every_project(
    home: Path, project: Path, tmp_path: Path
) -> None:
    store = make_store(home)
    other = tmp_path / "other"
    other.mkdir()
    for n in range(4):
        for root in (project, other):
            (root / "data.bin").write_bytes(os.urandom(300_000))  # does not compress
            store.snapshot(root, reason=f"turn {n}")
    capped = make_store(home, max_total_size_mb=1)
    done = maintain(capped.root, capped.settings)
    # (the objects they alone held go at a gc an hour later: a snapshot running meanwhile
    # may not have referenced its new objects yet)
    assert done["dropped"] >= 1
    for root in (project, other):
        kept = store.list(root)
        assert kept and kept[0].reason == "turn 3"  # each project keeps its newest
    plan = store.plan_restore(project)  # what is kept can still be restored
    assert plan.writes == ()


def test_doctor_names_a_bad_checkpoints_value(home: Path, capsys) -> None:
    from workbench.cli import main as cli

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("checkpoints:\n  max_snapshots: lots\n")
    cli.main(["doctor"])
    assert "checkpoints.max_snapshots: 'lots' is not valid; using 20" in capsys.readouterr().out
