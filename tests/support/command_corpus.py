"""The labelled command corpus (tests/core/safety/data/command_corpus.yaml): label, category, command.

Shared by the corpus tests and bench/bench_safety.py, which score the detector on it overall
and per category.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

PATH = Path(__file__).resolve().parents[1] / "core" / "safety" / "data" / "command_corpus.yaml"
LABELS = ("hardline", "destructive", "benign")
# The kinds of command, each with positives (destructive) and look-alikes (benign).
CATEGORIES = {
    "files": "deletes, overwrites, moves and edits of files",
    "secrets": "credentials, start-up files and hermes-tui's own state",
    "git": "git's data-losing forms and its everyday ones",
    "options": "help, version, dry-run and simulation options (and options that are not)",
    "sql": "SQL given to database clients",
    "code": "code given to interpreters inline (python -c, node -e, perl, ruby, awk, php)",
    "data": "framework database resets, database admin drops, key-value store flushes",
    "http": "destructive HTTP methods sent to APIs",
    "cloud": "hosting, cloud, container and cluster CLIs",
    "remote-code": "downloaded or decoded code run at once",
    "evasion": "wrappers, quoting, heredocs, continuations, brace expansion, computed names",
    "system": "processes, permissions, power, services, packages, disks, accounts",
    "mentions": "commands that only mention destructive text",
    "everyday": "ordinary reading, building and testing",
}


@dataclass(frozen=True)
class Case:
    command: str
    label: str  # hardline, destructive or benign
    category: str

    @property
    def positive(self) -> bool:
        return self.label != "benign"


def load(path: Path = PATH) -> list[Case]:
    data = yaml.safe_load(path.read_text())
    unknown = set(data) - set(LABELS)
    if unknown:
        raise ValueError(f"unknown labels in {path.name}: {sorted(unknown)}")
    cases = []
    for label in LABELS:
        for category, commands in (data.get(label) or {}).items():
            if category not in CATEGORIES:
                raise ValueError(f"unknown category {category!r} under {label}")
            cases += [Case(command, label, category) for command in commands]
    return cases


@dataclass(frozen=True)
class Score:
    tp: int
    fp: int
    positives: int
    benign: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.positives if self.positives else None


def score(cases: list[Case], flags: Callable[[str], bool]) -> tuple[Score, list[Case]]:
    """Precision and recall of `flags` on `cases`, and the cases it gets wrong."""
    wrong = [c for c in cases if flags(c.command) != c.positive]
    tp = sum(1 for c in cases if c.positive and c not in wrong)
    fp = sum(1 for c in wrong if not c.positive)
    positives = sum(1 for c in cases if c.positive)
    return Score(tp, fp, positives, len(cases) - positives), wrong


def by_category(cases: list[Case]) -> dict[str, list[Case]]:
    groups: dict[str, list[Case]] = {name: [] for name in CATEGORIES}
    for case in cases:
        groups[case.category].append(case)
    return {name: group for name, group in groups.items() if group}
