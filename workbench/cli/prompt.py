"""The approval prompt and the `clarify` question for the headless CLI on a terminal (the
TUI has its own modals).

It lists the rules "always" (and "never") could save, numbered, with the calls of this
session each would also match; `a` saves the first, `a2` the second, and so on. Anything
that is not exactly one of the answers denies.
"""

from __future__ import annotations

import re
import sys

from workbench.cli.lines import Lines
from workbench.core.asking import Ask, Asker
from workbench.core.execution.approval import ApprovalBroker, ApprovalRequest
from workbench.core.policy import Rule
from workbench.core.printable import escape

_NUMBERED = re.compile(r"^(a|always|s|session|n|never)([1-9][0-9]?)$")
DIFF_LINES = 40  # of a script's diff, on the terminal


class TerminalPrompt:
    """Asks on stderr, reads one line from stdin (`lines`: the chat's one reader, shared
    with its other questions); anything but an answer denies."""

    def __init__(self, broker: ApprovalBroker, lines: Lines | None = None) -> None:
        self.broker = broker
        self.lines = lines or Lines(broker.asker)

    def __call__(self, request: ApprovalRequest) -> None:
        self.lines.want(request.id, lambda: _write("\n".join(question(request))),
                        lambda answer: self._answer(request, answer))  # fmt: skip

    def _answer(self, request: ApprovalRequest, answer: str) -> None:
        choice, rule = parse(answer.strip(), request)
        self.broker.answer(request.id, choice, rule)


class TerminalQuestion:
    """The agent's `clarify` question on stderr; the line read from stdin is the answer."""

    def __init__(self, asker: Asker, lines: Lines | None = None) -> None:
        self.asker = asker
        self.lines = lines or Lines(asker)

    def __call__(self, ask: Ask) -> None:
        choices = ask.subject.choices
        options = f" [{' / '.join(escape(c) for c in choices)}]" if choices else ""
        text = f"\n? {escape(ask.subject.text)}{options}\n"
        self.lines.want(ask.id, lambda: _write(text), lambda line: self.asker.answer(ask.id, line))


def _write(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def question(request: ApprovalRequest) -> list[str]:
    who = f" ({escape(request.label)})" if request.label else ""
    lines = [f"\nhermes-tui: {escape(request.tool)}{who} needs your approval to run:", ""]
    # every line, each control character visible: a command cannot hide itself
    lines += [f"    {line}" for line in escape(request.command).split("\n")]
    lines += ["", f"  why:   {escape(request.reason)}", f"  where: {escape(request.cwd)}"]
    if request.writes:
        lines.append(f"  writes: {escape(', '.join(request.writes))}")
    lines += scripts(request)
    for number, (allow, deny) in enumerate(
        zip(request.allow_offers, request.deny_offers, strict=False), start=1
    ):
        lines.append(f"  rule {number}: {escape(allow.rule.describe())} / deny alike")
        if deny.matches:
            lines.append(f"          also matches earlier: {escape(', '.join(deny.matches[:5]))}")
    if request.allow_offers:
        lines.append("  (a, s or n save rule 1 in config.yaml; a2, s2, n2... another)")
    if request.only_leave:
        lines.append(
            f"Run it once outside the sandbox? [x] yes — anything else keeps it in "
            f"(kept in after {request.timeout:g}s): "
        )
        return lines
    outside = ", [x] once outside the sandbox" if request.can_leave else ""
    lines.append(
        f"Allow? [o]nce, [s]ession, [a]lways, [n]ever, [d]eny{outside} — anything else denies "
        f"(denied in {request.timeout:g}s): "
    )
    return lines


def scripts(request: ApprovalRequest) -> list[str]:
    """The scripts a command let out of the sandbox would run, each with what changed in
    it (its first lines: the workbench shows them all)."""
    lines = []
    for script in request.scripts:
        lines.append(f"  script: {escape(script.describe())}")
        if script.diff is not None:
            shown = script.diff.lines[:DIFF_LINES]
            lines += [f"      {escape(line)}" for line in shown]
            hidden = len(script.diff.lines) - len(shown) + script.diff.more
            if hidden or script.diff.note:
                lines.append(f"      ({script.diff.note or f'{hidden} more lines'})")
    return lines


def parse(answer: str, request: ApprovalRequest) -> tuple[str, Rule | None]:
    """The answer and the rule it picks (`a2`: the second offer); unknown numbers deny."""
    match = _NUMBERED.match(answer)
    if match is None:
        return answer, None
    word, number = match.group(1), int(match.group(2))
    offers = request.deny_offers if word[0] == "n" else request.allow_offers
    if number > len(offers):
        return "deny", None
    return word, offers[number - 1].rule
