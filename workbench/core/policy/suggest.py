"""`approvals suggest`: rules proposed from the answers people gave in past sessions.

Every answer to an approval is an `approval` record in the session's transcript (the tool,
what was shown, the choice, and why). Commands are grouped by the words they start with;
a group a person approved at least `min_count` times and never denied is proposed as an
allow rule (narrowed to the kinds of risk the detector finds in it today), one they denied
each time as a deny rule. Timeouts and refusals nobody answered are not answers and are not
counted; a group that is already decided by a rule is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.policy.policy import Outcome, Policy
from workbench.core.policy.rules import Action, CallFacts, Rule
from workbench.core.policy.shell import parse
from workbench.core.safety import analyze_command

APPROVED = frozenset({"once", "session", "always", "outside"})
PREFIX_WORDS = 2


@dataclass
class _Group:
    tool: str
    key: str  # the prefix (commands), or the tool's name
    exact: bool = False  # commands that are not one plain command are grouped by their text
    approved: int = 0
    denied: int = 0
    examples: dict[str, None] = field(default_factory=dict)


@dataclass(frozen=True)
class Suggestion:
    rule: Rule
    approved: int
    denied: int
    examples: tuple[str, ...]

    def lines(self) -> list[str]:
        tally = f"approved {self.approved}×" if self.approved else f"denied {self.denied}×"
        shown = ", ".join(f"`{e}`" for e in self.examples[:3])
        return [f"- {self.rule.entry()}  # {tally}: {shown}"]


def suggest(
    approvals: Iterable[dict[str, Any]], policy: Policy, min_count: int = 2
) -> tuple[list[Suggestion], int]:
    """The proposed rules from past `approval` records, most evidence first, and how many
    answers were read."""
    groups: dict[tuple[str, str], _Group] = {}
    answers = 0
    for record in approvals:
        group = _group_for(groups, str(record.get("tool") or ""), str(record.get("command") or ""))
        if group is None:
            continue
        decision = record.get("decision")
        if decision in APPROVED:
            group.approved += 1
        elif decision in ("deny", "never") and str(record.get("why", "")).startswith(
            "denied by the user"
        ):
            group.denied += 1
        else:
            continue
        answers += 1
        group.examples.setdefault(str(record.get("command")), None)
    found = [s for g in groups.values() if (s := _proposal(g, policy, min_count)) is not None]
    return sorted(found, key=lambda s: -(s.approved + s.denied)), answers


def _group_for(groups: dict[tuple[str, str], _Group], tool: str, shown: str) -> _Group | None:
    if not tool or not shown:
        return None
    if tool != "terminal":
        key = (tool, tool)
        return groups.setdefault(key, _Group(tool, tool))
    shell = parse(shown)
    if shell.plain and len(shell.commands[0]) > PREFIX_WORDS:
        words = " ".join(str(w) for w in shell.commands[0][:PREFIX_WORDS])
        return groups.setdefault((tool, words), _Group(tool, words))
    return groups.setdefault((tool, "=" + shell.text), _Group(tool, shell.text, exact=True))


def _proposal(group: _Group, policy: Policy, min_count: int) -> Suggestion | None:
    examples = tuple(group.examples)
    if group.approved >= min_count and not group.denied:
        rule = _allow_rule(group, examples)
    elif group.denied >= min_count and not group.approved:
        rule = _rule(group, Action.DENY, None)
    else:
        return None
    if rule is None or _decided(policy, group, examples, rule.action):
        return None
    return Suggestion(rule, group.approved, group.denied, examples)


def _allow_rule(group: _Group, examples: tuple[str, ...]) -> Rule | None:
    if group.tool != "terminal":
        return _rule(group, Action.ALLOW, None)
    verdicts = [analyze_command(e) for e in examples]
    if any(v.hardline for v in verdicts):
        return None
    risks = frozenset().union(*(v.rules for v in verdicts))
    return _rule(group, Action.ALLOW, risks)


def _rule(group: _Group, action: Action, risks: frozenset[str] | None) -> Rule:
    if group.tool != "terminal":
        return Rule(action, "tool", group.tool, risks)
    kind = "command" if group.exact else "command_prefix"
    return Rule(action, kind, group.key, risks if kind == "command_prefix" else None)


def _decided(policy: Policy, group: _Group, examples: tuple[str, ...], action: Action) -> bool:
    """Every example is already decided the way the suggestion would decide it."""
    want = Outcome.ALLOW if action is Action.ALLOW else Outcome.DENY
    for example in examples:
        command = example if group.tool == "terminal" else None
        ruling = policy.judge(CallFacts(group.tool, command=command), None)
        if ruling.rule is None or ruling.outcome is not want:
            return False
    return True
