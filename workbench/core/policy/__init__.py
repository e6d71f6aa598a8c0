"""Approval policy: rules that allow, ask or deny calls, their scopes, and what they decide.

`gate` says which calls need a person's approval and why (what they touch); `RuleBook`
holds the rules of every scope (this session, this project, config.yaml); `Policy.judge`
says what happens to one call and why; `assess` gathers what a call is and what the
detector and the gate find in it, for the executor and the simulator alike.
"""

from workbench.core.policy.policy import Outcome, Policy, Ruling
from workbench.core.policy.rules import Action, CallFacts, Rule, RuleError, Scope, parse_rule
from workbench.core.policy.store import RuleBook

__all__ = [
    "Action",
    "CallFacts",
    "Outcome",
    "Policy",
    "Rule",
    "RuleBook",
    "RuleError",
    "Ruling",
    "Scope",
    "parse_rule",
]
