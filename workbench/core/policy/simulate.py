"""`approvals test`: what would happen to a call, and why, without running anything.

It goes through the same steps as a real call (the detector or the file gate, an untrusted
MCP server, then the rules), so its answer is the approval path's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.policy.assess import assess
from workbench.core.policy.gate import coverable
from workbench.core.policy.policy import Outcome, Policy, Ruling
from workbench.core.policy.rules import CallFacts, Rule


@dataclass(frozen=True)
class Simulation:
    facts: CallFacts
    shown: str  # what a person would be asked about
    ruling: Ruling
    rules: list[Rule] = field(default_factory=list)  # every rule about the call
    mode_off: bool = False  # approvals.mode: off (or --yes): an ask would run
    confined: bool = False  # it would run in the working sandbox
    # files a turn's checkpoint would hold: every question is about replacing them
    checkpointed: tuple[str, ...] = ()

    @property
    def unread(self) -> list[str]:
        """What the gate could not read: --yes runs it only confined."""
        verdict = self.ruling.verdict
        found = verdict.opaque_reasons if verdict is not None else []
        return [*found, self.ruling.reason] if self.ruling.opaque else found

    @property
    def outcome(self) -> Outcome:
        if self.mode_off and self.ruling.outcome is Outcome.ASK and not self.held_back:
            return Outcome.ALLOW
        return self.ruling.outcome

    @property
    def in_person(self) -> list[str]:
        """What only a person approves, confined or not."""
        verdict = self.ruling.verdict
        return verdict.in_person_reasons if verdict is not None else []

    @property
    def held_back(self) -> bool:
        """Approvals are off, but they do not answer for this: a person still may."""
        unread = bool(self.unread) and not self.confined
        return self.mode_off and (self.ruling.opaque or unread or bool(self.in_person))

    @property
    def exit_code(self) -> int:
        return {Outcome.ALLOW: 0, Outcome.ASK: 1, Outcome.DENY: 2}[self.outcome]

    def spans(self) -> list[tuple[str, str]]:
        """Each dangerous part of the command, with the reason that points at it."""
        verdict = self.ruling.verdict
        if verdict is None:
            return []
        return [(verdict.command[f.span[0] : f.span[1]], f.reason) for f in verdict.findings]

    def lines(self) -> list[str]:
        words = {Outcome.ALLOW: "allowed", Outcome.ASK: "asks", Outcome.DENY: "denied"}
        out = [f"{words[self.outcome]}: {self.shown}"]
        out.append(f"  why: {self.ruling.reason}")
        if self.unread:
            out.append(f"  not understood: {'; '.join(self.unread)}")
        if self.held_back and self.ruling.outcome is Outcome.ASK:
            fix = (
                "a rule may apply to what it hides"
                if self.ruling.opaque
                else "only a person approves " + "; ".join(self.in_person)
                if self.in_person
                else "unconfined (terminal.sandbox: auto or true confines it "
                "where bubblewrap can run)"
            )
            out.append(
                "  approvals are off (approvals.mode: off or --yes), but they approve only what "
                f"was understood; {fix}: a person must approve it (headless: denied)"
            )
        elif self.mode_off and self.ruling.outcome is Outcome.ASK:
            out.append("  approvals are off (approvals.mode: off or --yes): it runs unasked")
        for part, reason in self.spans():
            out.append(f"  dangerous: {part!r} — {reason}")
        if self.checkpointed and self.ruling.rule is None:
            out.append(
                f"  checkpoint: a turn's snapshot would hold {', '.join(self.checkpointed)}: "
                "with checkpoints on (checkpoints.enabled) the agent's call runs unasked, "
                "unless snapshots leave the file out (.env*, logs, over max_file_size_mb)"
            )
        for rule in self.rules:
            decided = (
                " ← decides" if self.ruling.rule is not None and rule is self.ruling.rule else ""
            )
            out.append(f"  rule: {rule.describe()} [{rule.scope.value}: {rule.origin}]{decided}")
        return out

    def as_json(self) -> dict[str, Any]:
        rule = self.ruling.rule
        return {
            "outcome": self.outcome.value,
            "reason": self.ruling.reason,
            "shown": self.shown,
            "rule": {**rule.entry(), "scope": rule.scope.value, "origin": rule.origin}
            if rule
            else None,
            "dangerous": [{"text": t, "reason": r} for t, r in self.spans()],
            "not_understood": self.unread,
            "confined": self.confined,
            "rules": [r.entry() | {"origin": r.origin} for r in self.rules],
            "checkpoint_would_hold": list(self.checkpointed),
        }


def simulate(
    policy: Policy,
    registry: Any,
    name: str,
    args: dict[str, Any],
    cwd: str | os.PathLike[str],
    roots: Iterable[str] = (),
    *,
    mode_off: bool = False,
    confined: bool = False,
) -> Simulation:
    """`confined`: a terminal command would run in the working sandbox."""
    facts, check = assess(registry, name, args, cwd, (), roots)
    ruling = policy.judge(facts, check.verdict if check else None)
    shown = check.shown if check else (facts.command if facts.command is not None else name)
    confined = confined and name == "terminal"
    held = coverable(name, args, cwd, check)
    return Simulation(facts, shown, ruling, policy.matching(facts), mode_off, confined, held)


@dataclass(frozen=True)
class Simulator:
    """What a front end judges calls against without running them: the registry's tools
    (looked up for what they read and write, never run) and the folders where writes need no
    approval. Without a registry (the core not loaded) every name is a command."""

    registry: Any = None
    roots: tuple[str, ...] = ()

    def knows(self, name: str) -> bool:
        return self.registry is not None and self.registry.get_entry(name) is not None

    def judge(
        self, policy: Policy, name: str, args: dict[str, Any], cwd: str | os.PathLike[str]
    ) -> Simulation:
        return simulate(policy, self.registry, name, args, cwd, self.roots)
