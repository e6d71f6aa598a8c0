"""The labelled corpus: recall >= 0.98 and precision >= 0.95 (bench/bench_safety.py prints them
overall and per category)."""

from __future__ import annotations

import pytest

from tests.support.command_corpus import CATEGORIES, LABELS, by_category, load, score
from workbench.core.safety import analyze_command


def test_corpus_is_large_balanced_and_categorised() -> None:
    cases = load()
    assert len(cases) >= 800
    benign = [c for c in cases if not c.positive]
    assert len(benign) >= 300 and len(cases) - len(benign) >= 300
    commands = [c.command for c in cases]
    assert len(commands) == len(set(commands)), "duplicate commands in the corpus"
    groups = by_category(cases)
    assert set(groups) == set(CATEGORIES)
    for kind in ("options", "sql", "code", "data", "http", "cloud", "evasion"):
        labels = {c.label for c in groups[kind]}
        assert "benign" in labels and "destructive" in labels, kind  # positives and look-alikes
    assert {c.label for c in cases} == set(LABELS)


@pytest.mark.parametrize("cwd", [None, "/work/project"])
def test_precision_and_recall(cwd: str | None) -> None:
    result, wrong = score(load(), lambda c: analyze_command(c, cwd=cwd).dangerous)
    assert result.recall >= 0.98, [(c.category, c.command) for c in wrong if c.positive]
    assert result.precision >= 0.95, [(c.category, c.command) for c in wrong if not c.positive]


def test_every_hardline_command_is_hardline() -> None:
    hardline = [c.command for c in load() if c.label == "hardline"]
    assert [c for c in hardline if not analyze_command(c).hardline] == []


def test_no_ordinary_destructive_command_is_hardline() -> None:
    destructive = [c.command for c in load() if c.label == "destructive"]
    assert [c for c in destructive if analyze_command(c, cwd="/work/p").hardline] == []
