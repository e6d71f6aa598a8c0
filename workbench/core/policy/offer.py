"""What "always" and "never" would save, shown before anything is saved.

For a command: the exact command, then the prefixes it starts with (longest first); for
another tool, a rule on that tool. An allow rule on a prefix or a tool carries the kinds of
risk seen in this request, so it approves those again and nothing riskier. Each offer lists
the calls of this session it would also have matched.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from workbench.core.policy.rules import Action, CallFacts, Rule, Scope
from workbench.core.policy.shell import parse
from workbench.core.safety import Verdict

HISTORY = 500  # calls remembered per session for the offers
MAX_MATCHES = 20
MAX_COMMAND = 2000  # characters


@dataclass(frozen=True)
class Offer:
    rule: Rule
    matches: tuple[str, ...]  # earlier calls of this session it matches, most recent first


class History:
    """The calls this session has made (what they did, not their results)."""

    def __init__(self, size: int = HISTORY) -> None:
        self._calls: deque[tuple[CallFacts, str]] = deque(maxlen=size)

    def add(self, facts: CallFacts, shown: str) -> None:
        if facts.command is not None and len(facts.command) > MAX_COMMAND:
            return  # a huge command (a heredoc of data) is not kept, nor offered as a rule
        self._calls.append((facts, shown[:MAX_COMMAND]))

    def matching(self, rule: Rule, limit: int = MAX_MATCHES) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for facts, shown in reversed(self._calls):
            shell = parse(facts.command) if facts.command is not None else None
            if rule.matches(facts, shell):
                found.setdefault(shown, None)
                if len(found) >= limit:
                    break
        return tuple(found)


def candidates(facts: CallFacts, verdict: Verdict | None, action: Action) -> list[Rule]:
    """The rules a person may save for this call, narrowest first."""
    risks = verdict.rules if (verdict is not None and action is Action.ALLOW) else None
    if facts.command is None:
        return [Rule(action, "tool", facts.tool, risks)]
    shell = parse(facts.command)
    rules = [Rule(action, "command", shell.text)]
    if not shell.plain:
        return rules
    words = [w for w in shell.commands[0] if w is not None]
    for size in sorted({len(words) - 1, 2, 1}, reverse=True):
        if 1 <= size < len(words):
            prefix = " ".join(_quote(w) for w in words[:size])
            rules.append(Rule(action, "command_prefix", prefix, risks))
    return _unique(rules)


def offers(
    facts: CallFacts, verdict: Verdict | None, history: History | None, action: Action
) -> list[Offer]:
    return [
        Offer(rule, history.matching(rule) if history is not None else ())
        for rule in candidates(facts, verdict, action)
    ]


def in_scope(rule: Rule, scope: Scope) -> Rule:
    return Rule(rule.action, rule.kind, rule.pattern, rule.risks, scope, "")


def _quote(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./:=@%+," for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _unique(rules: list[Rule]) -> list[Rule]:
    seen: list[Rule] = []
    for rule in rules:
        if not any(rule.same(s) for s in seen):
            seen.append(rule)
    return seen
