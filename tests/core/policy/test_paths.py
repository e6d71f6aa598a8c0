"""Rules hold on every approval path: the terminal, file writes, plugin tools and their hooks,
with `--yes` (approvals off) too: a deny rule and a hardline command are never run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.plugins import make_home, make_manager
from tests.support.tools import schema
from workbench.core.execution.approval import ApprovalBroker, Choice
from workbench.core.execution.executor import Executor
from workbench.core.plugins.hooks import HookRegistry
from workbench.core.policy import Scope, parse_rule
from workbench.core.tools.registry import ToolRegistry, registry


def rules(*entries: dict) -> list:
    return [parse_rule(e, scope=Scope.SESSION, origin=f"t[{i}]") for i, e in enumerate(entries)]


def call(name: str, **args) -> list[dict]:
    return [{"id": "c1", "name": name, "arguments": json.dumps(args)}]


async def run(executor: Executor, name: str, **args):
    try:
        (outcome,) = await executor.run(call(name, **args))
    finally:
        executor.shutdown()
    return outcome


@pytest.mark.parametrize("mode", ["ask", "off"])  # off: --yes or approvals.mode: off
async def test_a_deny_rule_refuses_a_harmless_command_whatever_the_mode(
    tmp_path: Path, mode: str
) -> None:
    broker = ApprovalBroker(mode=mode, rules=rules({"action": "deny", "command_prefix": "touch"}))
    outcome = await run(
        Executor(registry, broker=broker, cwd=str(tmp_path)), "terminal", command="touch made"
    )
    assert outcome.status == "denied" and not (tmp_path / "made").exists()
    assert "denied by a rule: deny commands starting with `touch`" in outcome.content


async def test_yes_still_never_runs_a_hardline_command_under_an_allow_everything_rule(
    tmp_path: Path,
) -> None:
    broker = ApprovalBroker(mode="off", rules=rules({"action": "allow", "tool": "*"}))
    outcome = await run(
        Executor(registry, broker=broker, cwd=str(tmp_path)), "terminal", command="rm -rf ~"
    )
    assert outcome.status == "blocked" and "hardline" in outcome.content


async def test_an_allow_rule_runs_a_flagged_command_unasked(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    broker = ApprovalBroker(rules=rules({"action": "allow", "command": "rm -rf build"}))
    outcome = await run(
        Executor(registry, broker=broker, cwd=str(tmp_path)), "terminal", command="rm -rf build"
    )
    assert outcome.status == "ok" and not (tmp_path / "build").exists()
    assert outcome.decision.reason.startswith("allowed by a rule: allow the command")


async def test_rules_hold_for_file_writes(tmp_path: Path) -> None:
    deny = ApprovalBroker(rules=rules({"action": "deny", "tool": "write_file"}))
    outcome = await run(
        Executor(registry, broker=deny, cwd=str(tmp_path)), "write_file", path="a.txt", content="x"
    )
    assert outcome.status == "denied" and not (tmp_path / "a.txt").exists()
    # an ask rule asks about a write the gate has nothing against
    asked = []
    ask = ApprovalBroker(rules=rules({"action": "ask", "toolset": "file"}))
    ask.attach(lambda r: (asked.append(r), ask.answer(r.id, "o")))
    outcome = await run(
        Executor(registry, broker=ask, cwd=str(tmp_path)), "write_file", path="b.txt", content="y"
    )
    assert outcome.status == "ok" and (tmp_path / "b.txt").read_text() == "y"
    (request,) = asked
    assert request.reason.startswith("asks by a rule: ask tools of toolset file")
    assert [o.rule.describe() for o in request.allow_offers] == ["allow tool write_file"]


async def test_no_one_to_ask_denies_what_an_ask_rule_asks(tmp_path: Path) -> None:
    broker = ApprovalBroker(rules=rules({"action": "ask", "tool": "read_file"}))
    (tmp_path / "a.txt").write_text("secret")
    outcome = await run(
        Executor(registry, broker=broker, cwd=str(tmp_path)), "read_file", path="a.txt"
    )
    assert outcome.status == "denied" and "no one can be asked" in outcome.content


async def test_rules_hold_for_plugin_tools(reg: ToolRegistry) -> None:
    reg.register("stamp", "stamps", schema(), lambda a, **k: "stamped", source="plugin", owner="p")
    broker = ApprovalBroker(rules=rules({"action": "deny", "toolset": "stamps"}))
    outcome = await run(Executor(reg, broker=broker), "stamp")
    assert outcome.status == "denied"


async def test_a_plugin_hooks_approval_request_meets_the_rules(tmp_path: Path) -> None:
    reg, hooks = ToolRegistry(), HookRegistry()
    make_manager(make_home(tmp_path, ["hooky"]), reg, hooks)
    # the plugin asks a person about hooky_risky; an allow rule for it answers instead
    allow = ApprovalBroker(rules=rules({"action": "allow", "tool": "hooky_risky"}))
    outcome = await run(Executor(reg, broker=allow, hooks=hooks), "hooky_risky")
    assert outcome.status == "ok" and outcome.decision.choice is Choice.SESSION
    # a deny rule refuses it with --yes too
    deny = ApprovalBroker(mode="off", rules=rules({"action": "deny", "tool": "hooky_*"}))
    outcome = await run(Executor(reg, broker=deny, hooks=hooks), "hooky_risky")
    assert outcome.status == "denied"


async def test_every_call_is_remembered_for_the_offers(tmp_path: Path) -> None:
    broker = ApprovalBroker()
    executor = Executor(registry, broker=broker, cwd=str(tmp_path))
    try:
        await executor.run(call("terminal", command="git status"))
        await executor.run(call("read_file", path="nothing.txt"))
    finally:
        executor.shutdown()
    rule = parse_rule({"action": "allow", "command_prefix": "git"}, scope=Scope.SESSION, origin="")
    assert broker.history.matching(rule) == ("git status",)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": ".hermes/approvals.yaml", "content": "rules: []"}),
        ("terminal", {"command": "echo 'rules: [{action: allow, tool: \"*\"}]' > .hermes/approvals.yaml"}),
        ("terminal", {"command": "cp mine.yaml .hermes/approvals.yml"}),
    ],
)  # fmt: skip
async def test_the_agent_cannot_write_a_projects_approval_rules(
    tmp_path: Path, name: str, args: dict
) -> None:
    (tmp_path / ".hermes").mkdir()
    (tmp_path / "mine.yaml").write_text("rules: []\n")
    broker = ApprovalBroker(mode="off", rules=rules({"action": "allow", "tool": "*"}))
    outcome = await run(Executor(registry, broker=broker, cwd=str(tmp_path)), name, **args)
    assert outcome.status == "blocked" and "approval rules" in outcome.content
    assert not list((tmp_path / ".hermes").iterdir())


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": ".hermes/plugins/evil/__init__.py", "content": "import os"}),
        ("terminal", {"command": "mkdir -p .hermes/plugins/evil && echo 'import os' > .hermes/plugins/evil/__init__.py"}),
        ("terminal", {"command": "cp -r mine .hermes/plugins"}),
    ],
)  # fmt: skip
async def test_the_agent_cannot_write_a_project_plugin(
    tmp_path: Path, name: str, args: dict
) -> None:
    # project plugins run inside the workbench once trusted (hot reload loads them as saved),
    # where they could rewrite its state: writing one is refused however approvals are set
    (tmp_path / ".hermes").mkdir()
    (tmp_path / "mine").mkdir()
    broker = ApprovalBroker(mode="off", rules=rules({"action": "allow", "tool": "*"}))
    outcome = await run(Executor(registry, broker=broker, cwd=str(tmp_path)), name, **args)
    assert outcome.status == "blocked" and "plugin" in outcome.content
    assert not list((tmp_path / ".hermes").iterdir())
