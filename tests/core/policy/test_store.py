"""Rule scopes: config.yaml (Hermes's keys and ours), a trusted project's file, the session;
bad rules fail closed and are named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.config import ConfigError, load_config
from workbench.core.policy import Action, CallFacts, Outcome, Rule, RuleBook, Scope
from workbench.core.policy.store import PROJECT_FILE


def book_for(tmp_path: Path, text: str, **kw) -> RuleBook:
    (tmp_path / "config.yaml").write_text(text)
    return RuleBook(load_config(tmp_path / "config.yaml"), project=tmp_path, **kw)


def outcome(book: RuleBook, tool: str = "terminal", command: str | None = None) -> Outcome:
    return book.policy.judge(CallFacts(tool, tool, command=command), None).outcome


def test_every_kind_of_rule_is_read_from_config(tmp_path: Path) -> None:
    book = book_for(
        tmp_path,
        "command_allowlist: [make test]\n"
        "approvals:\n"
        "  deny: ['GIT PUSH*']\n"
        "  rules:\n"
        "    - {action: deny, tool: 'mcp__github__*'}\n"
        "    - {action: ask, toolset: web}\n"
        "    - {action: allow, command_prefix: npm run}\n",
        trusted=False,
    )
    policy = book.policy
    assert policy.problems == [] and not policy.fail_closed
    assert [(r.action.value, r.kind, r.origin) for r in policy.rules] == [
        ("allow", "command", "config.yaml command_allowlist[0]"),
        ("deny", "command_glob", "config.yaml approvals.deny[0]"),
        ("deny", "tool", "config.yaml approvals.rules[0]"),
        ("ask", "toolset", "config.yaml approvals.rules[1]"),
        ("allow", "command_prefix", "config.yaml approvals.rules[2]"),
    ]
    assert outcome(book, command="git push origin") is Outcome.DENY  # Hermes: case-insensitive
    assert outcome(book, "mcp__github__merge") is Outcome.DENY


@pytest.mark.parametrize(
    "bad",
    [
        "approvals:\n  rules:\n    - {action: deny, command_prefx: git push}\n",
        "approvals:\n  rules:\n    - {action: dney, tool: x}\n",
        "approvals:\n  rules:\n    - deny git push\n",
        "approvals:\n  rules: {action: deny, tool: x}\n",
        "approvals:\n  deny: [{glob: x}]\n",
    ],
)
def test_a_bad_rule_that_may_have_denied_makes_every_call_ask(tmp_path: Path, bad: str) -> None:
    book = book_for(tmp_path, bad + "command_allowlist: [ls]\n", trusted=False)
    (problem,) = book.policy.problems
    assert "config.yaml" in problem and "every call asks" in problem
    # never silently allowed: a harmless read, and a command an allow rule names, ask
    assert outcome(book, "read_file") is Outcome.ASK
    assert outcome(book, command="ls") is Outcome.ASK


def test_a_bad_allow_rule_is_dropped_and_named(tmp_path: Path) -> None:
    book = book_for(
        tmp_path,
        "command_allowlist: [3]\napprovals:\n  rules:\n    - {action: allow, tol: x}\n",
        trusted=False,
    )
    assert len(book.policy.problems) == 2 and not book.policy.fail_closed
    assert all(p.endswith("(ignored)") for p in book.policy.problems)
    assert outcome(book, "read_file") is Outcome.ALLOW


def test_rules_are_saved_changed_and_deleted_keeping_the_users_file(tmp_path: Path) -> None:
    book = book_for(tmp_path, "# my settings\nmodel: {name: m}  # keep\n", trusted=False)
    deny = book.add(Rule(Action.DENY, "command_prefix", "git push"))
    book.add(Rule(Action.ALLOW, "command", "make test"))  # Hermes's key for exact commands
    config = load_config(tmp_path / "config.yaml")
    assert config.get("approvals.rules") == [{"action": "deny", "command_prefix": "git push"}]
    assert config.get("command_allowlist") == ["make test"]
    text = (tmp_path / "config.yaml").read_text()
    assert text.startswith("# my settings") and "# keep" in text
    saved = next(r for r in book.policy.rules if r.same(deny))
    book.replace(saved, Rule(Action.ASK, "command_prefix", "git push"))
    assert load_config(tmp_path / "config.yaml").get("approvals.rules") == [
        {"action": "ask", "command_prefix": "git push"}
    ]
    for rule in list(book.policy.rules):
        book.remove(rule)
    assert book.policy.rules == []
    config = load_config(tmp_path / "config.yaml")
    assert config.get("approvals.rules") == [] and config.get("command_allowlist") == []


def test_a_config_that_does_not_parse_is_never_overwritten(tmp_path: Path) -> None:
    book = book_for(tmp_path, "approvals: [broken\n", trusted=False)
    with pytest.raises(ConfigError):
        book.add(Rule(Action.DENY, "tool", "x"))
    assert (tmp_path / "config.yaml").read_text() == "approvals: [broken\n"
    # its deny rules are unknown: every call asks until it is fixed
    assert any("cannot be read" in p for p in book.policy.problems)
    ruling = book.policy.judge(CallFacts("read_file", "file"), None)
    assert ruling.outcome is Outcome.ASK and "cannot be read" in ruling.reason


def test_project_rules_apply_only_once_the_project_is_trusted(tmp_path: Path) -> None:
    (tmp_path / ".hermes").mkdir()
    (tmp_path / PROJECT_FILE).write_text("rules:\n  - {action: deny, command_prefix: make}\n")
    untrusted = book_for(tmp_path, "", trusted=False)
    assert outcome(untrusted, command="make deploy") is Outcome.ALLOW
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in untrusted.policy.notes[0]
    with pytest.raises(ConfigError, match="not trusted"):
        untrusted.add(Rule(Action.ALLOW, "tool", "x", scope=Scope.PROJECT))
    trusted = book_for(tmp_path, "", trusted=True)
    assert outcome(trusted, command="make deploy") is Outcome.DENY
    (tmp_path / PROJECT_FILE).unlink()
    trusted.add(Rule(Action.ALLOW, "command", "make test", scope=Scope.PROJECT))
    assert "make test" in (tmp_path / PROJECT_FILE).read_text()
    assert os.stat(tmp_path / PROJECT_FILE).st_mode & 0o777 == 0o600  # a new file is private
    assert os.stat(tmp_path / ".hermes").st_mode & 0o777 == 0o700
    (allow,) = [r for r in trusted.policy.rules if r.action is Action.ALLOW]
    assert allow.scope is Scope.PROJECT and allow.origin.endswith("approvals.yaml[0]")


def test_the_project_trust_is_the_project_plugins_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    assert book_for(tmp_path, "").trusted
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "0")
    assert not book_for(tmp_path, "").trusted


@pytest.mark.parametrize(
    "content", ["rules: [broken\n", "rules: {a: 1}\n", "- just a list\n", "rules:\n  - 1\n"]
)
def test_a_trusted_project_file_that_cannot_be_read_fails_closed(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / ".hermes").mkdir()
    (tmp_path / PROJECT_FILE).write_text(content)
    book = book_for(tmp_path, "", trusted=True)
    assert book.policy.fail_closed and outcome(book, "read_file") is Outcome.ASK


def test_a_project_file_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".hermes").mkdir()
    os.mkfifo(tmp_path / PROJECT_FILE)
    book = book_for(tmp_path, "", trusted=True)  # returns: a FIFO never blocks the read
    assert book.policy.fail_closed and "not a regular file" in book.policy.problems[0]


def test_session_rules_live_in_memory_only(tmp_path: Path) -> None:
    book = book_for(tmp_path, "", trusted=False)
    book.add(Rule(Action.DENY, "tool", "write_file", scope=Scope.SESSION))
    assert outcome(book, "write_file") is Outcome.DENY
    assert "write_file" not in (tmp_path / "config.yaml").read_text()
    assert outcome(book_for(tmp_path, "", trusted=False), "write_file") is Outcome.ALLOW


def test_a_project_rules_file_that_links_out_is_neither_read_nor_written(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / ".hermes").mkdir(parents=True)
    elsewhere.mkdir()
    target = elsewhere / "bashrc"
    target.write_text("rules: []\n")
    (project / PROJECT_FILE).symlink_to(target)
    (tmp_path / "config.yaml").write_text("")
    book = RuleBook(load_config(tmp_path / "config.yaml"), project=project, trusted=True)
    assert "a link out of the project" in book.policy.problems[0] and book.policy.fail_closed
    with pytest.raises(ConfigError, match="link out of the project"):
        book.add(Rule(Action.ALLOW, "tool", "x", scope=Scope.PROJECT))
    assert target.read_text() == "rules: []\n"
