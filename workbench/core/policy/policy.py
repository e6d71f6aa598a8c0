"""The approval policy: every rule in force, and what it says about one call.

Precedence is deny, then ask, then allow, whatever the scope a rule comes from. A hardline
finding is refused before any rule is read. An allow rule approves a risky call only when it
covers every finding: never one that depends on the session (a file the session wrote), never
one its `risks` do not list, and a `command_allowlist` glob never approves a risky command
(such globs approved `git push --force` under `git *` in Hermes).

A rule that could not be read fails closed: a bad allow rule is dropped, and a bad rule that
may have denied or asked makes every call ask until it is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from workbench.core.policy.rules import Action, CallFacts, Rule
from workbench.core.policy.shell import ShellCommand, parse
from workbench.core.safety import Verdict


class Outcome(StrEnum):
    ALLOW = "allow"  # runs without asking
    ASK = "ask"  # a person decides (denied when no one can be asked)
    DENY = "deny"  # never runs


@dataclass(frozen=True)
class Ruling:
    outcome: Outcome
    reason: str
    rule: Rule | None = None  # the rule that decided, if one did
    verdict: Verdict | None = None  # the detector's, when it was asked
    # it asks because a deny or ask rule may apply to what the command hides: approvals
    # being off (--yes) never answer for it, confined or not (the sandbox enforces no rule)
    opaque: bool = False

    @property
    def exit_code(self) -> int:
        return {Outcome.ALLOW: 0, Outcome.ASK: 1, Outcome.DENY: 2}[self.outcome]


@dataclass
class Policy:
    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # bad rules, each named
    fail_closed: str = ""  # why every call asks (a bad rule that may have denied), or ""
    notes: list[str] = field(default_factory=list)  # e.g. project rules not trusted
    _key: tuple[int, int] = field(default=(0, -1), repr=False, compare=False)
    _by_action: dict[Action, tuple[list[Rule], list[Rule], dict[str, list[Rule]]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __bool__(self) -> bool:  # nothing to consult: the fast path of every call
        return bool(self.rules or self.fail_closed)

    def of(self, action: Action) -> list[Rule]:
        return self._index()[action][0]

    def _index(self) -> dict[Action, tuple[list[Rule], list[Rule], dict[str, list[Rule]]]]:
        """Per action: every rule; those to try on any call (tools, whole commands); prefix
        rules by their first word, so a call is tried against the prefixes it could match."""
        key = (id(self.rules), len(self.rules))
        if self._key != key:  # the rules changed: index them once
            self._by_action = {
                a: _indexed([r for r in self.rules if r.action is a]) for a in Action
            }
            self._key = key
        return self._by_action

    def _candidates(
        self, action: Action, facts: CallFacts, shell: ShellCommand | None
    ) -> list[Rule]:
        rules, general, by_head = self._index()[action]
        if shell is None or not by_head:
            return general
        heads = {(w[0] or "").rsplit("/", 1)[-1] for w in shell.commands if w}
        found = [r for head in heads for r in by_head.get(head, ())]
        return sorted([*general, *found], key=rules.index) if found else general

    def judge(self, facts: CallFacts, verdict: Verdict | None) -> Ruling:
        """What happens to this call. `verdict` is the detector's (or the file gate's) when it
        flagged the call, None when it has nothing to ask about."""
        if verdict is not None and verdict.hardline:
            return Ruling(Outcome.DENY, f"blocked (hardline): {_reasons(verdict)}", None, verdict)
        shell = parse(facts.command) if facts.command is not None else None
        for rule in self._candidates(Action.DENY, facts, shell):
            if rule.matches(facts, shell):
                return Ruling(Outcome.DENY, f"denied by a rule: {_named(rule)}", rule, verdict)
        if self.fail_closed:
            return Ruling(Outcome.ASK, self.fail_closed, None, verdict)
        hidden = _hidden_from(self.of(Action.DENY), shell, "a deny rule")
        if hidden:
            return Ruling(Outcome.ASK, hidden, None, verdict, opaque=True)
        for rule in self._candidates(Action.ASK, facts, shell):
            if rule.matches(facts, shell):
                return Ruling(Outcome.ASK, f"asks by a rule: {_named(rule)}", rule, verdict)
        hidden = _hidden_from(self.of(Action.ASK), shell, "an ask rule")
        if hidden:
            return Ruling(Outcome.ASK, hidden, None, verdict, opaque=True)
        for rule in self._candidates(Action.ALLOW, facts, shell):
            if rule.matches(facts, shell) and covers(rule, verdict):
                return Ruling(Outcome.ALLOW, f"allowed by a rule: {_named(rule)}", rule, verdict)
        if verdict is not None and verdict.dangerous:
            return Ruling(Outcome.ASK, _reasons(verdict), None, verdict)
        return Ruling(Outcome.ALLOW, "nothing to ask about", None, verdict)

    def matching(self, facts: CallFacts) -> list[Rule]:
        """Every rule about this call, whatever its action (for `approvals test`)."""
        shell = parse(facts.command) if facts.command is not None else None
        return [r for r in self.rules if r.matches(facts, shell)]


def _indexed(rules: list[Rule]) -> tuple[list[Rule], list[Rule], dict[str, list[Rule]]]:
    by_head: dict[str, list[Rule]] = {}
    general = []
    for rule in rules:
        head = rule.prefix_head()
        if head is None:
            general.append(rule)
        else:
            by_head.setdefault(head, []).append(rule)
    return rules, general, by_head


def covers(rule: Rule, verdict: Verdict | None) -> bool:
    """Whether an allow rule may approve what the detector found."""
    if verdict is None or not verdict.dangerous:
        return True
    if verdict.hardline or rule.hermes_glob:
        return False
    if any(f.contextual for f in verdict.findings):
        return False
    return rule.risks is None or verdict.rules <= rule.risks


def _hidden_from(rules: list[Rule], shell: ShellCommand | None, kind: str) -> str:
    """Why a rule on commands may apply to a command that hides what it runs, or ""."""
    if shell is None:
        return ""
    if shell.opaque and any(r.might_match(shell) for r in rules):
        return f"{kind} on commands may apply, and {shell.opaque}"
    hiding = next((r for r in rules if r.hides(shell)), None)
    if hiding is not None:
        return f"{kind} may apply ({hiding.describe()}): a word of the command is known only when it runs"
    return ""


def _named(rule: Rule) -> str:
    where = f" ({rule.origin})" if rule.origin else ""
    return f"{rule.describe()}{where}"


def _reasons(verdict: Verdict) -> str:
    return "; ".join(verdict.reasons) or "needs approval"
