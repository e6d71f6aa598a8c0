"""The labelled corpus: recall >= 0.98 and precision >= 0.95 (bench/bench_safety.py prints them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.core.safety import analyze_command

CORPUS = Path(__file__).resolve().parents[1] / "data" / "command_corpus.yaml"


def load_corpus() -> dict[str, list[str]]:
    return yaml.safe_load(CORPUS.read_text())


def score(cwd: str | None) -> tuple[float, float, list[str]]:
    corpus = load_corpus()
    positives = corpus["hardline"] + corpus["destructive"]
    misses = [c for c in positives if not analyze_command(c, cwd=cwd).dangerous]
    alarms = [c for c in corpus["benign"] if analyze_command(c, cwd=cwd).dangerous]
    tp = len(positives) - len(misses)
    return tp / (tp + len(alarms)), tp / len(positives), misses + alarms


def test_corpus_is_large_and_balanced() -> None:
    corpus = load_corpus()
    assert sum(len(v) for v in corpus.values()) >= 300
    assert len(corpus["benign"]) >= 150 and len(corpus["destructive"]) >= 150
    everything = [c for v in corpus.values() for c in v]
    assert len(everything) == len(set(everything)), "duplicate commands in the corpus"


@pytest.mark.parametrize("cwd", [None, "/work/project"])
def test_precision_and_recall(cwd: str | None) -> None:
    precision, recall, wrong = score(cwd)
    assert recall >= 0.98, wrong
    assert precision >= 0.95, wrong


def test_every_hardline_command_is_hardline() -> None:
    not_hard = [c for c in load_corpus()["hardline"] if not analyze_command(c).hardline]
    assert not_hard == []


def test_no_ordinary_destructive_command_is_hardline() -> None:
    hard = [c for c in load_corpus()["destructive"] if analyze_command(c, cwd="/work/p").hardline]
    assert hard == []
