"""Destructive-command detection: precision and recall on the labelled corpus, and speed.

Hermes's `detect_dangerous_command` is scored on the same corpus, side by side, overall and
per category of command (tests/support/command_corpus.py lists them).
Targets: recall >= 0.98, precision >= 0.95; a 200-character command in under 1 ms (median).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from harness import fmt, report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives with the tests
from tests.support.command_corpus import by_category, load, score

COMMAND_200 = (
    "cd /srv/app && git fetch origin && git status --short | grep -v '^??' | wc -l && "
    "find . -name '*.pyc' -print | head -20 && tar -czf /tmp/backup.tgz src docs && "
    "echo deployed-$(date +%s) >> deploy.log "
)
# The same length with SQL in it: the SQL parser is loaded only for commands like this one.
SQL_200 = (
    "psql -d app -c \"SELECT id, name, email FROM users WHERE created_at > now() - interval '7 days'"
    " AND status = 'active' ORDER BY created_at DESC LIMIT 50\" && echo listed && git status -s "
    "&& git log -3 --stat "
)


def median_seconds(fn, command: str, runs: int = 2000) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(command)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _figure(value: float | None) -> str:
    return f"{value:5.2f}" if value is not None else "  -  "


def main() -> int:
    from tools.approval import detect_dangerous_command

    from workbench.core.safety import _analyze

    def ours(command: str) -> bool:
        return _analyze(command, None, frozenset())[0].dangerous  # no cache

    def hermes(command: str) -> bool:
        return bool(detect_dangerous_command(command)[0])

    cases = load()
    mine, _ = score(cases, ours)
    peer, _ = score(cases, hermes)
    print(f"safety: destructive-command detection on {len(cases)} labelled commands")
    print(
        f"  {'precision':<46} ours {mine.precision:8.3f}     hermes {peer.precision:8.3f}     "
        f"target >= 0.95: {'MET' if mine.precision >= 0.95 else 'MISSED'}"
    )
    print(
        f"  {'recall':<46} ours {mine.recall:8.3f}     hermes {peer.recall:8.3f}     "
        f"target >= 0.98: {'MET' if mine.recall >= 0.98 else 'MISSED'}"
    )
    print(
        f"  {'by category':<14} {'cases':>5} {'+':>4}   precision ours/hermes   recall ours/hermes"
    )
    for name, group in by_category(cases).items():
        a, _ = score(group, ours)
        b, _ = score(group, hermes)
        print(
            f"  {name:<14} {len(group):5d} {a.positives:4d}       "
            f"{_figure(a.precision)} / {_figure(b.precision)}        "
            f"{_figure(a.recall)} / {_figure(b.recall)}          "
            f"{a.fp:3d} / {b.fp:3d} of {a.benign}"
        )
    assert len(COMMAND_200) >= 200 and len(SQL_200) >= 200, (len(COMMAND_200), len(SQL_200))
    t_ours = median_seconds(ours, COMMAND_200)
    ok = report(
        f"analyze a {len(COMMAND_200)}-char command (median)",
        t_ours,
        median_seconds(hermes, COMMAND_200),
        "< 1 ms",
        t_ours < 1e-3,
    )
    t_sql = median_seconds(ours, SQL_200)  # the SQL parser's share: reported, not a target
    report(
        f"analyze a {len(SQL_200)}-char command with SQL (median)",
        t_sql,
        median_seconds(hermes, SQL_200),
        "< 2 ms",
        t_sql < 2e-3,
    )
    print(
        f"  (uncached: the detector also caches repeated commands; {fmt(t_ours)} is the cold path)"
    )
    met = mine.precision >= 0.95 and mine.recall >= 0.98
    return 0 if ok and met else 1


if __name__ == "__main__":
    sys.exit(main())
