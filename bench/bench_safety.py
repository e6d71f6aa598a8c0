"""Destructive-command detection: precision and recall on the labelled corpus, and speed.

Hermes's `detect_dangerous_command` is scored on the same corpus, side by side.
Targets: recall >= 0.98, precision >= 0.95; a 200-character command in under 1 ms (median).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import yaml
from harness import fmt, report

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "command_corpus.yaml"
COMMAND_200 = (
    "cd /srv/app && git fetch origin && git status --short | grep -v '^??' | wc -l && "
    "find . -name '*.pyc' -print | head -20 && tar -czf /tmp/backup.tgz src docs && "
    "echo deployed-$(date +%s) >> deploy.log "
)


def score(flags) -> tuple[float, float]:
    corpus = yaml.safe_load(CORPUS.read_text())
    positives = corpus["hardline"] + corpus["destructive"]
    tp = sum(1 for c in positives if flags(c))
    fp = sum(1 for c in corpus["benign"] if flags(c))
    return tp / max(tp + fp, 1), tp / len(positives)


def median_seconds(fn, command: str, runs: int = 2000) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(command)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    from tools.approval import detect_dangerous_command

    from workbench.core.safety import _analyze

    def ours(command: str) -> bool:
        return _analyze(command, None, frozenset())[0].dangerous  # no cache

    def hermes(command: str) -> bool:
        return bool(detect_dangerous_command(command)[0])

    size = sum(len(v) for v in yaml.safe_load(CORPUS.read_text()).values())
    print(f"safety: destructive-command detection on {size} labelled commands")
    ours_p, ours_r = score(ours)
    peer_p, peer_r = score(hermes)
    print(
        f"  {'precision':<46} ours {ours_p:8.3f}     hermes {peer_p:8.3f}     target >= 0.95: "
        f"{'MET' if ours_p >= 0.95 else 'MISSED'}"
    )
    print(
        f"  {'recall':<46} ours {ours_r:8.3f}     hermes {peer_r:8.3f}     target >= 0.98: "
        f"{'MET' if ours_r >= 0.98 else 'MISSED'}"
    )
    assert len(COMMAND_200) >= 200, len(COMMAND_200)
    t_ours = median_seconds(ours, COMMAND_200)
    t_peer = median_seconds(hermes, COMMAND_200)
    ok = report(
        f"analyze a {len(COMMAND_200)}-char command (median)",
        t_ours,
        t_peer,
        "< 1 ms",
        t_ours < 1e-3,
    )
    print(
        f"  (uncached; the detector also caches repeated commands: {fmt(t_ours)} is the cold path)"
    )
    return 0 if ok and ours_p >= 0.95 and ours_r >= 0.98 else 1


if __name__ == "__main__":
    sys.exit(main())
