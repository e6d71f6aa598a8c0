"""The labelled batch corpus: the planner must decide every batch right (Hermes: 0.88)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.batch_corpus import CORPUS, build_tree, load_batches
from workbench.core.execution.scheduler import may_run_in_parallel


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_tree(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_corpus_size() -> None:
    batches = yaml.safe_load(CORPUS.read_text())["batches"]
    assert len(batches) >= 100
    assert 0.3 < sum(b["parallel"] for b in batches) / len(batches) < 0.7


def test_every_batch_is_decided_right(tree: Path) -> None:
    wrong = [
        [c["function"]["name"] + " " + c["function"]["arguments"] for c in calls]
        for label, calls in load_batches(tree)
        if may_run_in_parallel(calls, cwd=tree) != label
    ]
    assert wrong == []
