"""A trusted project's rules (`.hermes/approvals.yaml`) are obeyed as the person last
trusted them: a file never trusted, or changed since, has its allow rules left out; the
trusted copy stays in force, so emptying the file lifts none of its deny rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.config import ConfigError, load_config
from workbench.core.policy import Action, CallFacts, Outcome, Rule, RuleBook, Scope
from workbench.core.policy.store import PROJECT_FILE
from workbench.core.safety import analyze_command
from workbench.core.trust import RULES, ProjectTrust

ALLOW_RM = "rules:\n  - {action: allow, command_prefix: rm}\n"
DENY_PUSH = "rules:\n  - {action: deny, command_prefix: git push}\n"


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("")
    root = tmp_path / "project"
    (root / ".hermes").mkdir(parents=True)
    return root


def book(home: Path, project: Path) -> RuleBook:
    return RuleBook(load_config(home / "config.yaml"), project=project, trusted=True)


def outcome(rules: RuleBook, command: str) -> Outcome:
    facts = CallFacts("terminal", "terminal", command=command)
    return rules.policy.judge(facts, analyze_command(command, cwd="/p")).outcome


def test_rules_never_trusted_are_not_obeyed_but_their_deny_rules_hold(home, project) -> None:
    (project / PROJECT_FILE).write_text(ALLOW_RM + "  - {action: deny, command_prefix: git push}\n")
    rules = book(home, project)
    assert outcome(rules, "rm -r build") is Outcome.ASK  # its allow rule is not used
    assert outcome(rules, "git push") is Outcome.DENY  # a deny rule only stops more
    (note,) = rules.policy.notes
    assert "approvals.yaml: never trusted here: its allow rules are not used" in note
    assert f"hermes-tui trust --cwd {project}" in note
    ProjectTrust(home, project).trust()
    assert outcome(book(home, project), "rm -r build") is Outcome.ALLOW


def test_a_change_since_keeps_the_trusted_copy_in_force(home, project) -> None:
    (project / PROJECT_FILE).write_text(DENY_PUSH)
    ProjectTrust(home, project).trust()
    assert outcome(book(home, project), "git push") is Outcome.DENY
    (project / PROJECT_FILE).write_text(ALLOW_RM)  # the agent's: its deny rule gone, rm allowed
    rules = book(home, project)
    assert outcome(rules, "git push") is Outcome.DENY  # the trusted copy's
    assert outcome(rules, "rm -r build") is Outcome.ASK
    assert "changed since you last trusted this project" in rules.policy.notes[0]
    (project / PROJECT_FILE).write_text("")
    assert outcome(book(home, project), "git push") is Outcome.DENY


def test_a_rule_saved_there_needs_the_file_as_trusted_and_keeps_it_trusted(home, project) -> None:
    (project / PROJECT_FILE).write_text(DENY_PUSH)
    trust = ProjectTrust(home, project)
    trust.trust()
    rules = book(home, project)
    rules.add(Rule(Action.DENY, "command_prefix", "rm -rf", scope=Scope.PROJECT))
    assert trust.holds(RULES) and outcome(book(home, project), "rm -rf x") is Outcome.DENY
    (project / PROJECT_FILE).write_text(ALLOW_RM)
    with pytest.raises(ConfigError, match="changed since you trusted it: not written"):
        book(home, project).add(Rule(Action.ALLOW, "command", "make", scope=Scope.PROJECT))
    assert (project / PROJECT_FILE).read_text() == ALLOW_RM
