"""`--yes` (approvals.mode: off) approves only what was understood.

A call with an opaque finding (what it acts on is known only when it runs) is approved by
approvals being off only when it runs in the working sandbox. Otherwise a person may approve
it, told what was not understood, and with no one to ask it is denied, saying what to do.
Hardline findings and deny rules are unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.backends.base import LocalBackend
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.execution.approval import ApprovalBroker, Choice
from workbench.core.execution.executor import Executor
from workbench.core.policy import Action, Rule
from workbench.core.safety import analyze_command
from workbench.core.tools.registry import registry

OPAQUE = 'rm -rf "$(cat target.txt)"'


def verdict(command: str, cwd: Path):
    return analyze_command(command, cwd=cwd, write_roots=(str(cwd),))


def answering_once(broker: ApprovalBroker) -> list:
    asked = []

    def front_end(request) -> None:
        asked.append(request)
        broker.answer(request.id, "once")

    broker.attach(front_end)
    return asked


async def test_yes_unconfined_denies_what_was_not_understood(tmp_path: Path) -> None:
    broker = ApprovalBroker(mode="off")
    decision = await broker.decide("terminal", OPAQUE, verdict(OPAQUE, tmp_path), cwd="/w")
    assert not decision.approved
    assert decision.reason.startswith("denied: not understood: recursively deletes <computed>")
    assert "turn on terminal.sandbox" in decision.reason and "in person" in decision.reason


async def test_yes_unconfined_says_why_it_runs_unconfined(tmp_path: Path) -> None:
    """The denial names why there is no sandbox: a user without bubblewrap must not be told
    only to turn on a setting that would then refuse every command."""
    broker = ApprovalBroker(mode="off")
    where = "local, NOT confined: no sandbox here (bwrap is not installed)"
    decision = await broker.decide(
        "terminal", OPAQUE, verdict(OPAQUE, tmp_path), cwd="/w", where=where
    )
    assert not decision.approved
    assert f"outside the sandbox ({where})" in decision.reason
    assert "where bubblewrap can run" in decision.reason


async def test_yes_confined_approves_it(tmp_path: Path) -> None:
    broker = ApprovalBroker(mode="off")
    decision = await broker.decide(
        "terminal", OPAQUE, verdict(OPAQUE, tmp_path), cwd="/w", confined=True
    )
    assert decision.choice is Choice.ONCE


async def test_yes_still_approves_what_was_understood(tmp_path: Path) -> None:
    broker = ApprovalBroker(mode="off")
    command = "rm -rf build"
    decision = await broker.decide("terminal", command, verdict(command, tmp_path), cwd="/w")
    assert decision.choice is Choice.ONCE


async def test_a_person_may_approve_it_and_is_told_what_was_not_understood(
    tmp_path: Path,
) -> None:
    for mode in ("off", "ask"):
        broker = ApprovalBroker(mode=mode)
        asked = answering_once(broker)
        decision = await broker.decide("terminal", OPAQUE, verdict(OPAQUE, tmp_path), cwd="/w")
        assert decision.choice is Choice.ONCE
        (request,) = asked
        assert request.reason.startswith("not understood: recursively deletes <computed>")


async def test_deny_rules_and_hardline_are_unchanged(tmp_path: Path) -> None:
    deny = Rule(Action.DENY, "command_prefix", "rm")
    broker = ApprovalBroker(mode="off", rules=[deny])
    answering_once(broker)
    denied = await broker.decide(
        "terminal", OPAQUE, verdict(OPAQUE, tmp_path), cwd="/w", confined=True
    )
    assert not denied.approved and denied.reason.startswith("denied by a rule")
    broker = ApprovalBroker(mode="off")
    command = 'h=$HOME; rm -rf "$h"'
    blocked = await broker.decide(
        "terminal", command, verdict(command, tmp_path), cwd="/w", confined=True
    )
    assert not blocked.approved and blocked.reason.startswith("blocked (hardline)")


def call(command: str) -> list[dict]:
    return [{"id": "1", "name": "terminal", "arguments": {"command": command}}]


@pytest.fixture
def work(tmp_path: Path, home: Path) -> Path:
    """A working directory with a folder the opaque command deletes."""
    path = tmp_path / "work"
    (path / "build").mkdir(parents=True)
    (path / "target.txt").write_text("build\n")
    return path


async def test_executor_unconfined_with_yes_leaves_it_intact(work: Path) -> None:
    executor = Executor(
        registry, broker=ApprovalBroker(mode="off"), cwd=str(work), backend=LocalBackend()
    )
    (outcome,) = await executor.run(call(OPAQUE))
    assert outcome.status == "denied"
    assert "not understood" in json.loads(outcome.content)["error"]
    assert (work / "build").is_dir()


async def test_executor_unconfined_runs_it_when_a_person_approves(work: Path) -> None:
    broker = ApprovalBroker(mode="off")
    asked = answering_once(broker)
    executor = Executor(registry, broker=broker, cwd=str(work), backend=LocalBackend())
    (outcome,) = await executor.run(call(OPAQUE))
    assert outcome.status == "ok" and not (work / "build").exists()
    assert asked[0].reason.startswith("not understood:")


@pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")
async def test_executor_in_the_sandbox_runs_it_with_yes(work: Path, home: Path) -> None:
    backend = SandboxBackend(hermes_home=home)
    executor = Executor(registry, broker=ApprovalBroker(mode="off"), cwd=str(work), backend=backend)
    (outcome,) = await executor.run(call(OPAQUE))
    assert outcome.status == "ok", outcome.content
    assert outcome.decision is not None and outcome.decision.choice is Choice.ONCE
    assert not (work / "build").exists()


async def test_yes_never_answers_for_a_deny_rule_the_command_may_hide_from(
    tmp_path: Path,
) -> None:
    # `git $SUB origin main` may be the `git push` a deny rule forbids: confined or not, the
    # sandbox enforces no rule, so only a person may approve it
    deny = Rule(Action.DENY, "command_prefix", "git push")
    command = "git $SUB origin main"
    for confined in (False, True):
        broker = ApprovalBroker(mode="off", rules=[deny])
        decision = await broker.decide(
            "terminal", command, verdict(command, tmp_path), cwd="/w", confined=confined
        )
        assert not decision.approved
        assert decision.reason.startswith("denied: not understood: a deny rule may apply")
        assert "approve it in person" in decision.reason and "sandbox" not in decision.reason
    broker = ApprovalBroker(mode="off", rules=[deny])
    asked = answering_once(broker)
    decision = await broker.decide("terminal", command, verdict(command, tmp_path), cwd="/w")
    assert decision.choice is Choice.ONCE and asked[0].reason.startswith("not understood:")


async def test_in_the_sandbox_a_person_is_still_told_what_was_not_understood(
    tmp_path: Path,
) -> None:
    # with approvals on, the modal offers to let the command out of the sandbox: say why
    broker = ApprovalBroker()
    asked = answering_once(broker)
    command = f"{OPAQUE} && git push --force"
    await broker.decide(
        "terminal", command, verdict(command, tmp_path), cwd="/w", confined=True, can_leave=True
    )
    assert asked[0].reason == (
        "not understood: recursively deletes <computed> (a path computed at run time); "
        "git push: rewrites or deletes remote history"
    )
