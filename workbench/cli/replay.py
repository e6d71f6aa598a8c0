"""`hermes-tui replay FILE...`: run saved tool calls and check their results, for CI.

Each case runs through the path the agent's calls take; there is no one to ask, so a call
that would need an approval fails unless `--yes` approves it (deny rules still refuse). One
line per case, PASS or FAIL with the reasons and the time, then a summary. Exit codes: 0 all
passed, 1 any failed (a missing tool is a failure), 2 a file that cannot be used (nothing is
run then).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.replay.cases import Case
    from workbench.core.replay.runner import CaseResult
    from workbench.core.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="case files (YAML)")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="approve what would ask (hardline commands and deny rules still refuse)",
    )
    parser.add_argument("--cwd", default=None, help="working directory for the calls")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def read_cases(files: list[str]) -> tuple[list[Case], list[str]]:
    """Every case of every file, and the errors of the files that cannot be used."""
    from workbench.core.replay.cases import CaseFileError, load

    cases: list[Case] = []
    errors: list[str] = []
    for name in files:
        try:
            cases += load(Path(name))
        except CaseFileError as exc:
            errors.append(str(exc))
    return cases, errors


def needs_mcp(args: argparse.Namespace) -> bool:
    """Start the MCP servers only for files that call one of their tools."""
    cases, _ = read_cases(args.files)
    return any(case.tool.startswith("mcp__") for case in cases)


def run(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.replay.runner import replay

    cases, errors = read_cases(args.files)
    if errors:
        for error in errors:
            _err(error)
        _err("nothing was run: fix the file(s) above")
        return EXIT_USAGE
    for trust, changes in runtime.untrusted(args.cwd):  # never asked: said, not loaded
        _err(trust.not_loaded(changes))
    began = time.monotonic()
    results = replay(runtime, cases, yes=args.yes, cwd=args.cwd)
    elapsed = time.monotonic() - began
    failed = sum(not r.passed for r in results)
    if args.json:
        _out(json.dumps({"cases": [_row(r) for r in results], "failed": failed}, indent=2))
    else:
        for result in results:
            _out(line(result))
        passed = len(results) - failed
        _out(f"\n{len(results)} case(s): {passed} passed, {failed} failed ({elapsed:.1f} s)")
    return EXIT_FAILED if failed else EXIT_OK


def line(result: CaseResult) -> str:
    case = result.case
    head = f"{'PASS' if result.passed else 'FAIL'}  {case.file} #{case.index} {case.name}"
    tail = f"  {_took(result.seconds)}"
    if result.passed:
        return head + tail
    return head + tail + " — " + "; ".join(result.reasons)


def _row(result: CaseResult) -> dict:
    case = result.case
    return {
        "file": case.file,
        "index": case.index,
        "name": case.name,
        "tool": case.tool,
        "passed": result.passed,
        "status": result.status,
        "seconds": round(result.seconds, 4),
        "reasons": result.reasons,
    }


def _took(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
