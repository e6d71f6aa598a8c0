"""`hermes-tui tools usage [--sessions N] [--json] [--apply TOOL]`: each tool's cost per
request beside its calls in the last N sessions, and what to defer or switch off, each
suggestion previewed (the config key as it would be saved, the cost then). `--apply TOOL`
saves that tool's suggestion."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from workbench.core.commands import CommandFailed

if TYPE_CHECKING:
    import argparse

    from workbench.core.runtime import Runtime
    from workbench.core.usage.report import Report, ToolUse

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def run(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.usage import change
    from workbench.core.usage.report import DEFAULT_SESSIONS, usage_report

    if args.name:
        _err("tools usage takes no tool name (--apply TOOL saves a suggestion)")
        return EXIT_USAGE
    report = usage_report(runtime, sessions=args.sessions or DEFAULT_SESSIONS)
    if args.apply:
        chosen = next((s for s in report.suggestions if s.tool == args.apply), None)
        if chosen is None:
            _err(f"no suggestion for '{args.apply}' (`hermes-tui tools usage` lists them)")
            return EXIT_USAGE
        try:
            done = change.apply(runtime, chosen.tool, chosen.action)
        except CommandFailed as exc:
            _err(exc.message)
            return EXIT_USAGE if exc.usage else EXIT_FAILED
        _out(done.message)
        return EXIT_OK if done.ok else EXIT_FAILED
    if args.json:
        _out(json.dumps(report.to_json(), indent=2, default=str))
    else:
        _print(report)
    for problem in report.gathered.problems:
        _err(problem)
    return EXIT_OK


def _print(report: Report) -> None:
    from workbench.core.agent.context import short
    from workbench.core.usage.hermes_store import HERMES
    from workbench.core.usage.sessions import OURS

    g = report.gathered
    _out(
        f"tool use in the last {len(g.sessions)} session(s): {g.count(OURS)} of hermes-tui, "
        f"{g.count(HERMES)} of Hermes; {g.requests_per_session:.1f} requests a session"
    )
    width = max((len(t.name) for t in report.tools), default=4)
    _out(f"{'tool':<{width}}  {'state':<10} {'tokens':>7} {'calls':>6} {'sessions':>8}  last used")
    for row in report.tools:
        _out(_row(row, width))
    _out(f"\n{short(report.tokens)} tokens each request for the tools ({report.counted})")
    if report.bridge:
        _out(
            f"of which {short(report.bridge)} for the tool-search bridge and its listing "
            f"({report.deferred} deferred tool(s))"
        )
    for note in report.notes:
        _out(f"note: {note}")
    if not report.suggestions:
        _out(
            "\nno suggestion: every tool that costs much is used"
            if g.sessions
            else "\nno past session was found: nothing to suggest yet"
        )
        return
    _out("\nsuggestions, largest saving first (nothing is saved until --apply TOOL):")
    for s in report.suggestions:
        verb = "switch off" if s.action == "off" else "defer"
        _out(
            f"  {verb} {s.tool}: {short(s.per_request)} tokens a request, "
            f"{short(s.per_session)} a session ({s.why})"
        )
        for line in s.preview.lines():
            _out(f"      {line}")


def _row(row: ToolUse, width: int) -> str:
    from workbench.core.agent.context import short

    last = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.last_used)) if row.last_used else "-"
    tokens = short(row.tokens) if row.tokens else "-"
    return (
        f"{row.name:<{width}}  {row.state:<10} {tokens:>7} {row.calls:>6} {row.sessions:>8}  {last}"
    )


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
