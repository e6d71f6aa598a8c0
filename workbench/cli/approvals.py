"""`hermes-tui approvals`: list the rules, test what a call would meet, suggest rules.

`test` runs nothing: it goes through the approval path's own steps (the detector or the file
gate, an untrusted MCP server, the rules) and says what would happen and why. Its exit code
is the answer: 0 allowed, 1 asks, 2 denied (a usage error is also 2, and says so: a script
that checks the code fails closed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.runtime import Runtime

EXIT_DENY = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="list", choices=["list", "test", "suggest"])
    parser.add_argument("command_text", nargs="?", metavar="COMMAND", help="test: a command")
    parser.add_argument("--tool", help="test: a tool call instead of a command")
    parser.add_argument("--args", default=None, help="test: the tool's arguments (JSON object)")
    parser.add_argument("--cwd", default=None, help="test: the working directory")
    parser.add_argument(
        "--min", type=int, default=2, help="suggest: answers needed to propose a rule (2)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def runs_plugins(args: argparse.Namespace) -> bool:
    """Only `test` of a tool needs plugin code (to know a plugin tool's toolset)."""
    return args.action == "test" and bool(args.tool)


def needs_mcp(args: argparse.Namespace) -> bool:
    return args.action == "test" and str(args.tool or "").startswith("mcp__")


def run(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.policy import RuleBook

    book = RuleBook(runtime.config)
    if args.action == "test":
        return _test(runtime, book, args)
    if args.action == "suggest":
        return _suggest(runtime, book, args)
    return _list(book, args)


def _list(book, args: argparse.Namespace) -> int:
    policy = book.policy
    if args.json:
        rows = [
            {**r.entry(), "scope": r.scope.value, "origin": r.origin, "describe": r.describe()}
            for r in policy.rules
        ]
        _out(json.dumps({"rules": rows, "problems": policy.problems, "notes": policy.notes}))
        return 0
    if not policy.rules:
        _out("no approval rules (the detector decides what asks)")
    for rule in policy.rules:
        _out(f"{rule.describe()}  [{rule.scope.value}: {rule.origin}]")
    for line in policy.problems:
        _err(f"bad rule: {line}")
    for line in policy.notes:
        _err(line)
    return 1 if policy.problems else 0


def _test(runtime: Runtime, book, args: argparse.Namespace) -> int:
    from workbench.core.execution.approval import read_mode
    from workbench.core.policy.simulate import simulate
    from workbench.core.runtime import write_roots

    call = _call(args)
    if isinstance(call, str):
        _err(call)
        return EXIT_DENY
    name, arguments = call
    if name != "terminal" and runtime.registry.get_entry(name) is None:
        _err(f"note: no tool named {name!r} is registered; judged on its name only")
    mode, _, _ = read_mode(runtime.config.get("approvals.mode"))
    cwd = os.path.abspath(args.cwd or os.getcwd())
    result = simulate(
        book.policy,
        runtime.registry,
        name,
        arguments,
        cwd,
        write_roots(runtime.config),
        mode_off=mode == "off",
        confined=_confined(runtime),
    )
    if args.json:
        _out(json.dumps(result.as_json(), ensure_ascii=False))
    else:
        for line in result.lines():
            _out(line)
        for line in book.policy.problems:
            _err(f"bad rule: {line}")
    return result.exit_code


def _confined(runtime: Runtime) -> bool:
    """Terminal commands would run in the working sandbox (terminal.sandbox, bwrap works)."""
    return runtime.backend().sandboxed


def _call(args: argparse.Namespace) -> tuple[str, dict] | str:
    if args.tool:
        if args.command_text:
            return "give a COMMAND or --tool NAME --args JSON, not both"
        try:
            arguments = json.loads(args.args or "{}")
        except ValueError as exc:
            return f"--args is not JSON: {exc}"
        if not isinstance(arguments, dict):
            return "--args must be a JSON object"
        return args.tool, arguments
    if args.args is not None:
        return "--args goes with --tool"
    if not args.command_text:
        return "approvals test needs a COMMAND (or --tool NAME --args JSON)"
    return "terminal", {"command": args.command_text}


def _suggest(runtime: Runtime, book, args: argparse.Namespace) -> int:
    from workbench.core.agent.transcript import approval_records
    from workbench.core.policy.suggest import suggest

    found, answers = suggest(approval_records(runtime.home), book.policy, max(1, args.min))
    if args.json:
        rows = [
            {"rule": s.rule.entry(), "approved": s.approved, "denied": s.denied,
             "examples": list(s.examples)}
            for s in found
        ]  # fmt: skip
        _out(json.dumps({"suggestions": rows, "answers": answers}))
        return 0
    if not found:
        _out(f"nothing to suggest ({answers} answer(s) to approvals in past sessions)")
        return 0
    _out(f"# from {answers} answer(s) to approvals in past sessions; add under approvals.rules:")
    for suggestion in found:
        for line in suggestion.lines():
            _out(line)
    return 0


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
