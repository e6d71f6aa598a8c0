"""Rules the agent could have rewritten are not trusted: config.yaml or a project's rules
file with a second hard link, or owned by another user, fail closed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.config import ConfigError, load_config, set_path, update_config
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.policy import Action, CallFacts, Outcome, RuleBook
from workbench.core.policy.store import PROJECT_FILE

RULES = (
    "command_allowlist: [make test]\n"
    "approvals:\n  mode: 'off'\n  deny: ['git push*']\n"
    "  rules:\n    - {action: allow, command_prefix: rm}\n"
)
OTHER_UID = 4242


def write_config(tmp_path: Path, text: str = RULES) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def outcome(book: RuleBook, command: str) -> Outcome:
    return book.policy.judge(CallFacts("terminal", "terminal", command=command), None).outcome


def test_a_trusted_config_is_read_as_written(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    assert config.untrusted == ""
    book = RuleBook(config, project=tmp_path, trusted=False)
    assert not book.policy.fail_closed and outcome(book, "rm x") is Outcome.ALLOW


def test_a_hard_linked_config_drops_its_allow_rules_and_every_call_asks(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    os.link(path, tmp_path / "k.txt")
    config = load_config(path)
    assert "2 hard links" in config.untrusted and str(path) in config.untrusted
    book = RuleBook(config, project=tmp_path, trusted=False)
    assert [r.action for r in book.policy.rules] == [Action.DENY]  # deny rules still count
    assert outcome(book, "git push origin") is Outcome.DENY
    assert outcome(book, "rm x") is Outcome.ASK and outcome(book, "ls") is Outcome.ASK
    assert any("not trusted" in p and "hard links" in p for p in book.policy.problems)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
def test_a_config_owned_by_another_user_is_not_trusted(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    os.chown(path, OTHER_UID, -1)
    config = load_config(path)
    assert f"owned by uid {OTHER_UID}" in config.untrusted
    assert RuleBook(config, project=tmp_path, trusted=False).policy.fail_closed


async def test_yes_and_mode_off_do_not_answer_for_an_untrusted_config(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    os.link(path, tmp_path / "k.txt")
    for mode in ("off", None):  # --yes; approvals.mode: off from the file itself
        broker = ApprovalBroker.from_config(load_config(path), mode=mode, project=tmp_path)
        decision = await broker.decide("terminal", "rm x", None, reason="deletes x")
        assert decision.choice.value == "deny" and "not trusted" in decision.reason


def test_our_own_writes_keep_the_config_trusted(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    for theme in ("dark", "light"):
        update_config(lambda doc, t=theme: set_path(doc, "display.theme", t), path)
        assert load_config(path).untrusted == "" and os.stat(path).st_nlink == 1


def test_an_untrusted_config_is_not_rewritten_into_a_trusted_one(tmp_path: Path) -> None:
    # our write (a new file, by rename) would make trusted what the other name wrote
    path = write_config(tmp_path)
    os.link(path, tmp_path / "k.txt")
    with pytest.raises(ConfigError, match=r"hard links.*not changed"):
        update_config(lambda doc: set_path(doc, "display.theme", "dark"), path)
    assert os.stat(path).st_nlink == 2 and "dark" not in path.read_text()


def test_a_hard_linked_project_rules_file_fails_closed(tmp_path: Path) -> None:
    rules = tmp_path / PROJECT_FILE
    rules.parent.mkdir()
    rules.write_text("rules:\n  - {action: allow, command_prefix: rm}\n")
    book = RuleBook(None, project=tmp_path, trusted=True)
    assert outcome(book, "rm x") is Outcome.ALLOW
    os.link(rules, tmp_path / "k.yaml")
    book = RuleBook(None, project=tmp_path, trusted=True)
    assert book.policy.fail_closed and outcome(book, "rm x") is Outcome.ASK
    assert any(str(rules) in p and "hard links" in p for p in book.policy.problems)
