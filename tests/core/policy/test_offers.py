""" "Always" and "never" show the rule they would save, with the session's calls it matches,
and save exactly that rule."""

from __future__ import annotations

from pathlib import Path

from workbench.core.config import load_config
from workbench.core.execution.approval import ApprovalBroker, Choice
from workbench.core.policy import Action, CallFacts, Rule, RuleBook, Scope
from workbench.core.policy.offer import candidates
from workbench.core.safety import analyze_command


def terminal(command: str) -> CallFacts:
    return CallFacts("terminal", "terminal", command=command)


async def ask(broker: ApprovalBroker, command: str):
    return await broker.decide(
        "terminal", command, analyze_command(command, cwd="/p"), facts=terminal(command)
    )


def broker_with_config(tmp_path: Path, text: str = "") -> ApprovalBroker:
    (tmp_path / "config.yaml").write_text(text)
    config = load_config(tmp_path / "config.yaml")
    return ApprovalBroker(book=RuleBook(config, project=tmp_path, trusted=False))


def test_the_offers_are_the_command_then_the_prefixes_it_starts_with() -> None:
    verdict = analyze_command("git push --force origin main", cwd="/p")
    rules = candidates(terminal("git push --force origin main"), verdict, Action.ALLOW)
    assert [(r.kind, r.pattern) for r in rules] == [
        ("command", "git push --force origin main"),
        ("command_prefix", "git push --force origin"),
        ("command_prefix", "git push"),
        ("command_prefix", "git"),
    ]
    # a prefix approves the kinds of risk seen here again, nothing riskier
    assert all(r.risks == verdict.rules for r in rules[1:])
    compound = candidates(terminal("make && rm -rf build"), None, Action.ALLOW)
    assert [(r.kind, r.pattern) for r in compound] == [("command", "make && rm -rf build")]
    quoted = candidates(terminal("rm -rf 'my dir' x"), None, Action.DENY)
    assert quoted[1].pattern == "rm -rf 'my dir'" and quoted[1].risks is None


async def test_always_saves_exactly_the_rule_it_showed(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)
    for earlier in ("git push origin dev", "git pull", "git push -f origin main", "ls"):
        broker.note(terminal(earlier), earlier)
    shown = []

    def front_end(request) -> None:
        offer = request.allow_offers[2]  # the person picks `git push`
        shown.append(offer)
        broker.answer(request.id, "always", offer.rule)

    detach = broker.attach(front_end)
    decision = await ask(broker, "git push --force origin main")
    (offer,) = shown
    assert offer.rule.describe() == "allow commands starting with `git push` (only for: git-push)"
    assert offer.matches == ("git push -f origin main", "git push origin dev")
    assert decision.choice is Choice.ALWAYS and decision.rule.same(offer.rule)
    saved = load_config(tmp_path / "config.yaml").get("approvals.rules")
    assert (
        saved
        == [offer.rule.entry()]
        == [{"action": "allow", "command_prefix": "git push", "risks": ["git-push"]}]
    )
    # and it holds: a later force push is allowed without asking, a reset still asks
    detach()
    assert (await ask(broker, "git push -f origin other")).approved
    assert not (await ask(broker, "git reset --hard")).approved


async def test_the_default_offer_is_the_exact_command(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)
    broker.attach(lambda r: broker.answer(r.id, "a"))
    assert (await ask(broker, "rm -rf build")).choice is Choice.ALWAYS
    assert load_config(tmp_path / "config.yaml").get("command_allowlist") == ["rm -rf build"]


async def test_a_rule_that_was_not_offered_is_never_saved(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)
    sneaky = Rule(Action.ALLOW, "tool", "*")
    broker.attach(lambda r: broker.answer(r.id, "always", sneaky))
    decision = await ask(broker, "rm -rf build")
    assert not decision.approved and "not one of those offered" in decision.reason
    assert load_config(tmp_path / "config.yaml").get("approvals") is None


async def test_a_project_scope_is_refused_unless_the_project_is_trusted(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)

    def front_end(request) -> None:
        assert request.scopes == (Scope.EVERYWHERE,)
        rule = request.allow_offers[0].rule
        project = Rule(rule.action, rule.kind, rule.pattern, rule.risks, Scope.PROJECT)
        broker.answer(request.id, "always", project)

    broker.attach(front_end)
    assert not (await ask(broker, "rm -rf build")).approved


async def test_never_denies_and_saves_a_deny_rule(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)
    asked = []

    def front_end(request) -> None:
        asked.append(request)
        broker.answer(request.id, "never", request.deny_offers[-1].rule)  # `git`

    broker.attach(front_end)
    decision = await ask(broker, "git push --force")
    assert decision.choice is Choice.NEVER and not decision.approved
    assert load_config(tmp_path / "config.yaml").get("approvals.rules") == [
        {"action": "deny", "command_prefix": "git"}
    ]
    later = await ask(broker, "git status && git push")
    assert not later.approved and later.reason.startswith("denied by a rule") and len(asked) == 1


async def test_session_saves_the_offer_for_this_session_only(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path)
    detach = broker.attach(lambda r: broker.answer(r.id, "s", r.allow_offers[1].rule))
    decision = await ask(broker, "rm -rf build cache")
    assert decision.choice is Choice.SESSION and decision.rule.scope is Scope.SESSION
    assert (tmp_path / "config.yaml").read_text() == ""
    detach()
    assert (await ask(broker, "rm -rf build other")).approved


async def test_always_that_cannot_be_saved_still_answers_once(tmp_path: Path) -> None:
    broker = broker_with_config(tmp_path, "command_allowlist: [broken\n")
    detach = broker.attach(lambda r: broker.answer(r.id, "a"))
    decision = await ask(broker, "rm -rf build")
    assert decision.approved and "not saved" in decision.reason
    assert (tmp_path / "config.yaml").read_text() == "command_allowlist: [broken\n"
    # the config's rules cannot be read, so nothing stands for a person: the next call asks,
    # and with no one to ask it is denied, --yes or not
    detach()
    broker.mode = "off"
    refused = await ask(broker, "ls")
    assert not refused.approved and "cannot be read" in refused.reason
