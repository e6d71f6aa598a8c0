"""Approvals fail closed (where Hermes's approved) and rules approve exactly what was approved."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tests.support.waiting import until
from workbench.core.config import load_config
from workbench.core.execution.approval import ApprovalBroker, Choice, parse_answer, read_mode
from workbench.core.policy import Action, Rule, Scope
from workbench.core.safety import analyze_command


def verdict(command: str):
    return analyze_command(command, cwd="/work/p")


async def ask(broker: ApprovalBroker, command: str):
    return await broker.decide("terminal", command, verdict(command), cwd="/work/p")


def answering(broker: ApprovalBroker, answer: object) -> list:
    asked = []

    def front_end(request) -> None:
        asked.append(request)
        broker.answer(request.id, answer)

    broker.attach(front_end)
    return asked


@pytest.mark.parametrize(
    "answer", ["nope", "", "DENY", "no", "reject", "yes", "y", "ONCE", " once", None, 1, "d"]
)
async def test_anything_but_an_approving_answer_denies(answer) -> None:
    # Hermes approved "nope", "", "DENY", "no" and "reject"
    broker = ApprovalBroker()
    answering(broker, answer)
    decision = await ask(broker, "rm build.log")
    assert not decision.approved and decision.reason == "denied by the user"


@pytest.mark.parametrize(
    ("answer", "choice"), [("o", Choice.ONCE), ("once", Choice.ONCE), ("s", Choice.SESSION)]
)
def test_approving_answers(answer: str, choice: Choice) -> None:
    assert parse_answer(answer) is choice


async def test_headless_denies() -> None:
    # Hermes auto-approved every dangerous command without an interactive context
    decision = await ask(ApprovalBroker(), "rm -rf build")
    assert not decision.approved and "no one can be asked" in decision.reason
    # and what it would have asked about, so the user can judge it
    assert "it asks because" in decision.reason and "build" in decision.reason


async def test_timeout_denies() -> None:
    broker = ApprovalBroker(timeout=0.2)
    asked = []
    broker.attach(asked.append)  # shown, never answered
    decision = await ask(broker, "rm x")
    assert not decision.approved and decision.reason == "denied: no answer within 0.2s"
    assert broker.pending() == [] and len(asked) == 1


async def test_front_end_going_away_denies() -> None:
    broker = ApprovalBroker()
    detach = broker.attach(lambda request: None)
    task = asyncio.create_task(ask(broker, "rm x"))
    await until(lambda: len(broker.pending()) == 1)
    detach()
    decision = await task
    assert not decision.approved


async def test_a_failing_front_end_denies() -> None:
    broker = ApprovalBroker()
    broker.attach(lambda request: 1 / 0)
    assert not (await ask(broker, "rm x")).approved


async def test_answers_from_another_thread() -> None:
    broker = ApprovalBroker()
    broker.attach(lambda r: threading.Timer(0.05, broker.answer, (r.id, "once")).start())
    assert (await ask(broker, "rm x")).choice is Choice.ONCE


async def test_session_rule_is_command_specific() -> None:
    # Hermes stored the category ("recursive delete") and approved every later one
    broker, asked = ApprovalBroker(), []
    detach = broker.attach(lambda request: (asked.append(request), broker.answer(request.id, "s")))
    assert (await ask(broker, "rm -rf build")).choice is Choice.SESSION
    again = await ask(broker, "rm  -rf   build")
    assert again.approved and again.reason.startswith("allowed by a rule: allow the command")
    assert again.rule is not None and again.rule.scope is Scope.SESSION
    detach()
    assert not (
        await ask(broker, "rm -rf src")
    ).approved  # another command: asks (and no one is there)
    assert len(asked) == 1


async def test_prefix_rules_only_cover_the_risks_they_name() -> None:
    # Hermes's `git *` approved `git push --force` and `git reset --hard`
    rule = Rule(Action.ALLOW, "command_prefix", "rm -rf build", frozenset({"delete"}))
    broker = ApprovalBroker(rules=[rule])
    assert (await ask(broker, "rm -rf build cache")).approved
    assert not (await ask(broker, "rm -rf build && git push --force")).approved
    assert not (await ask(broker, "rm -rf buildings")).approved
    assert not (await ask(broker, "rm -rf build/ ../x")).approved  # words, not characters


async def test_hardline_is_never_asked_nor_allowed() -> None:
    broker = ApprovalBroker(mode="off", rules=[Rule(Action.ALLOW, "command", "rm -rf ~")])
    asked = answering(broker, "o")
    decision = await ask(broker, "rm -rf ~")
    assert not decision.approved and decision.reason.startswith("blocked (hardline)")
    assert asked == []


async def test_always_persists_atomically_and_is_honoured_next_start(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("# mine\ncommand_allowlist:\n  - make clean\n")
    broker = ApprovalBroker.from_config(load_config(home / "config.yaml"))
    answering(broker, "a")
    decision = await ask(broker, "rm -rf build")
    assert decision.choice is Choice.ALWAYS
    config = load_config(home / "config.yaml")
    assert config.get("command_allowlist") == ["make clean", "rm -rf build"]
    assert (home / "config.yaml").read_text().startswith("# mine")
    restarted = ApprovalBroker.from_config(config)  # no front end: only the rule can allow it
    allowed = await ask(restarted, "rm -rf build")
    assert allowed.approved and "config.yaml command_allowlist[1]" in allowed.reason
    assert not (await ask(restarted, "rm -rf dist")).approved


async def test_always_that_cannot_be_saved_says_so(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("command_allowlist: [broken\n")
    broker = ApprovalBroker(config_path=tmp_path / "config.yaml")
    answering(broker, "always")
    decision = await ask(broker, "rm -rf build")
    assert decision.choice is Choice.SESSION and "not saved" in decision.reason
    assert (tmp_path / "config.yaml").read_text() == "command_allowlist: [broken\n"


async def test_hermes_globs_and_category_keys_never_approve_a_risky_command(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.yaml").write_text(
        "command_allowlist: ['git *', 'recursive delete', 'ls -la']\n"
    )
    broker = ApprovalBroker.from_config(load_config(tmp_path / "config.yaml"))
    rules = broker.book.policy.rules
    assert [(r.kind, r.pattern) for r in rules] == [
        ("command_glob", "git *"),
        ("command", "recursive delete"),
        ("command", "ls -la"),
    ]
    assert not (await ask(broker, "git push --force")).approved
    assert not (await ask(broker, "rm -rf build")).approved


async def test_rules_do_not_cover_context_findings() -> None:
    broker = ApprovalBroker(rules=[Rule(Action.ALLOW, "command", "python3 cleanup.py")])
    v = analyze_command("python3 cleanup.py", cwd="/p", recent_writes=frozenset({"/p/cleanup.py"}))
    assert not (await broker.decide("terminal", "python3 cleanup.py", v, cwd="/p")).approved


async def test_prefix_rules_persist_and_are_deleted(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    broker = ApprovalBroker(config_path=path)
    rule = Rule(Action.ALLOW, "command_prefix", "rm -rf build", frozenset({"delete"}))
    broker.book.add(rule)
    assert load_config(path).get("approvals.rules") == [
        {"action": "allow", "command_prefix": "rm -rf build", "risks": ["delete"]}
    ]
    (saved,) = ApprovalBroker.from_config(load_config(path)).book.policy.rules
    assert saved.same(rule) and saved.origin == "config.yaml approvals.rules[0]"
    broker.book.remove(saved)
    assert load_config(path).get("approvals.rules") == []


def test_rules_saved_by_an_earlier_version_still_apply(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "approvals:\n  rules:\n    - {prefix: rm -rf build, risks: [delete]}\n"
    )
    (rule,) = ApprovalBroker.from_config(load_config(tmp_path / "config.yaml")).book.policy.rules
    assert (rule.action, rule.kind, rule.pattern, rule.risks) == (
        Action.ALLOW,
        "command_prefix",
        "rm -rf build",
        frozenset({"delete"}),
    )


def test_config_mode_and_timeout(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("approvals:\n  mode: off\n  timeout: 15\n")
    broker = ApprovalBroker.from_config(load_config(tmp_path / "config.yaml"))
    assert (broker.mode, broker.timeout) == ("off", 15.0)


@pytest.mark.parametrize(
    ("text", "mode", "noted"),
    [
        ("mode: smart", "ask", True),  # Hermes's default: not supported here, said
        ("mode: manual", "ask", False),  # Hermes's name for ask
        ("mode: ask", "ask", False),
        ("mode: off", "off", False),  # YAML reads a bare off as False
        ("mode: 'off'", "off", False),
        ("timeout: 30", "ask", False),
    ],
)
def test_approvals_mode_as_hermes_names_it(
    tmp_path: Path, text: str, mode: str, noted: bool
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"approvals:\n  {text}\n")
    broker = ApprovalBroker.from_config(load_config(path))
    assert broker.mode == mode and ("smart" in broker.mode_note) is noted
    assert ApprovalBroker.from_config(load_config(path), mode="off").mode_note == ""  # --yes


def test_a_mode_that_is_none_of_them_asks_and_is_a_problem() -> None:
    assert read_mode("sometimes") == (
        "ask",
        "",
        "approvals.mode must be manual (ask), smart or off, not 'sometimes': ask is used",
    )
