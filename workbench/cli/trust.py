"""`hermes-tui trust`: show what a project's `.hermes` holds that changed since you last
trusted it (its plugins' files, its approval rules), and trust it after a yes.

Project plugins and rules are used only with `HERMES_ENABLE_PROJECT_PLUGINS=1`, and then
only as you last trusted them: what is new or changed waits for this (or for the question
the workbench and `chat` ask on a terminal). `--yes` trusts without asking, for a script or
CI that means it (after a fresh checkout, say). `TerminalTrust` is `chat`'s question.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.printable import escape

if TYPE_CHECKING:
    import argparse

    from workbench.cli.lines import Lines
    from workbench.core.asking import Ask, Asker
    from workbench.core.trust import Change, TrustRequest

EXIT_OK, EXIT_NOT_TRUSTED, EXIT_USAGE = 0, 1, 2
DIFF_LINES = 60  # of each file's diff on the terminal (the workbench shows them all)
YES = ("y", "yes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cwd", help="the project (default: the current folder)")
    parser.add_argument(
        "--show",
        action="store_true",
        help="show what changed since you last trusted it, and trust nothing (exit 1 if "
        "anything is not trusted)",
    )
    parser.add_argument(
        "--yes", action="store_true", help="trust it without asking (a script or CI that means it)"
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.config import hermes_home
    from workbench.core.plugins.sources import PROJECT_ENV, truthy
    from workbench.core.trust import ProjectTrust, summary

    project = Path(args.cwd or ".")
    if not project.is_dir():
        _err(f"{project} is not a folder")
        return EXIT_USAGE
    trust = ProjectTrust(hermes_home(), project)
    now = trust.now()
    changes = trust.changes(now)
    if not changes:
        what = "as you last trusted it" if trust.record.at else "no plugins or rules to trust"
        print(f"{trust.project}/.hermes: {what}")
        return EXIT_OK
    print(f"{trust.project}/.hermes: {summary(changes)}, {trust.since()}:\n")
    print("\n".join(change_lines(changes)))
    if args.show:
        return EXIT_NOT_TRUSTED
    if not args.yes:
        if not sys.stdin.isatty():
            _err("not trusted: no one to ask (--yes trusts without asking)")
            return EXIT_NOT_TRUSTED
        sys.stderr.write(f"\n{QUESTION}")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in YES:
            _err("not trusted: nothing changed")
            return EXIT_NOT_TRUSTED
    trust.trust(now)  # what was shown, whatever the folder holds by now
    used = "" if truthy(os.environ.get(PROJECT_ENV)) else f" (used with {PROJECT_ENV}=1)"
    print(f"\ntrusted: {trust.project}/.hermes as shown{used}")
    return EXIT_OK


QUESTION = "Trust these and let hermes-tui load them? [y]es — anything else keeps them out: "


def change_lines(changes: tuple[Change, ...]) -> list[str]:
    """Each file new, changed or removed, with its diff against the trusted copy (its first
    lines), every control character visible."""
    lines = []
    for change in changes:
        diff = change.diff
        lines.append(f"  {change.kind}: {escape(change.path)}  ({escape(diff.summary)})")
        shown = diff.lines[:DIFF_LINES]
        lines += [f"      {escape(line)}" for line in shown]
        hidden = len(diff.lines) - len(shown) + diff.more
        if hidden:
            lines.append(f"      … {hidden} more lines (`hermes-tui trust --show` shows them)")
    return lines


def question(request: TrustRequest) -> str:
    return (
        f"\nhermes-tui: {escape(request.project)}/.hermes: {escape(request.summary)}, "
        f"{request.since} — not loaded until you agree:\n\n"
        + "\n".join(change_lines(request.changes))
        + f"\n\n{QUESTION.removesuffix(': ')} (kept out after {request.timeout:g}s): "
    )


class TerminalTrust:
    """`chat`'s question on a terminal: on stderr, the answer one line from stdin
    (`lines`: the chat's one reader); anything but y keeps them out."""

    def __init__(self, asker: Asker, lines: Lines) -> None:
        self.asker, self.lines = asker, lines

    def __call__(self, ask: Ask) -> None:
        self.lines.want(
            ask.id,
            lambda: _write(question(ask.subject)),
            lambda line: self.asker.answer(ask.id, line.strip().lower() in YES),
        )


def _write(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _err(text: str) -> None:
    _write(f"hermes-tui: {text}\n")
