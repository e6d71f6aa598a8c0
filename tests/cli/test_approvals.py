"""`hermes-tui approvals`: list, test (runs nothing; exit 0 allowed, 1 asks, 2 denied), and
suggest from the approvals recorded in past sessions' transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run
from workbench.core.agent.transcript import Transcript


def config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)


def test_test_says_what_would_happen_and_why_without_running_it(
    cli_env, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    out = run(cli_env, "approvals", "test", "rm -rf build", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines()[:3] == [
        "asks: rm -rf build",
        "  why: recursively deletes build",
        "  dangerous: 'rm -rf build' — recursively deletes build",
    ]
    assert (tmp_path / "build").is_dir()  # nothing ran
    assert run(cli_env, "approvals", "test", "ls -la", cwd=tmp_path).returncode == 0
    hardline = run(cli_env, "approvals", "test", "rm -rf ~", cwd=tmp_path)
    assert hardline.returncode == 2 and "blocked (hardline)" in hardline.stdout


def test_test_names_the_rule_that_decides(cli_env, home: Path, tmp_path: Path) -> None:
    config(
        home,
        "approvals:\n  rules:\n"
        "    - {action: allow, tool: '*'}\n"
        "    - {action: deny, command_prefix: git push}\n",
    )
    out = run(cli_env, "approvals", "test", "git push --force", "--json", cwd=tmp_path)
    assert out.returncode == 2
    result = json.loads(out.stdout)
    assert result["outcome"] == "deny" and result["rule"] == {
        "action": "deny",
        "command_prefix": "git push",
        "scope": "everywhere",
        "origin": "config.yaml approvals.rules[1]",
    }
    assert result["dangerous"] == [
        {"text": "git push --force", "reason": "git push: rewrites or deletes remote history"}
    ]
    allowed = run(cli_env, "approvals", "test", "rm -rf build", cwd=tmp_path)
    assert allowed.returncode == 0 and "allow tool * (config.yaml approvals.rules[0])" in (
        allowed.stdout
    )


def test_test_a_tool_call(cli_env, home: Path, tmp_path: Path) -> None:
    args = json.dumps({"path": str(home / "config.yaml"), "content": "x"})
    out = run(cli_env, "approvals", "test", "--tool", "write_file", "--args", args)
    assert out.returncode == 2 and out.stdout.startswith("denied: write_file")
    inside = json.dumps({"path": "notes.txt", "content": "x"})
    out = run(cli_env, "approvals", "test", "--tool", "write_file", "--args", inside, cwd=tmp_path)
    assert out.returncode == 0 and not (tmp_path / "notes.txt").exists()


def test_test_usage_errors_fail_closed(cli_env, tmp_path: Path) -> None:
    for argv, says in [
        (["--tool", "read_file", "--args", "[1]"], "must be a JSON object"),
        (["--tool", "read_file", "--args", "{nope"], "not JSON"),
        ([], "needs a COMMAND"),
        (["ls", "--tool", "read_file"], "not both"),
    ]:
        out = run(cli_env, "approvals", "test", *argv, cwd=tmp_path)
        assert out.returncode == 2 and says in out.stderr, (argv, out.stderr)


def test_list_shows_every_rule_and_names_a_bad_one(cli_env, home: Path) -> None:
    config(
        home,
        "command_allowlist: [make test]\n"
        "approvals:\n  rules:\n    - {action: deny, command_prefix: git push}\n"
        "    - {action: deny, tol: x}\n",
    )
    out = run(cli_env, "approvals", "list")
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "allow the command `make test`  [everywhere: config.yaml command_allowlist[0]]",
        "deny commands starting with `git push`  [everywhere: config.yaml approvals.rules[0]]",
    ]
    assert "config.yaml approvals.rules[1]: unknown key tol" in out.stderr
    assert "every call asks" in out.stderr
    # and a call asks rather than run while the bad rule is there
    assert run(cli_env, "approvals", "test", "ls").returncode == 1
    assert "approval rule: config.yaml approvals.rules[1]" in run(cli_env, "doctor").stdout


def record_answers(home: Path, name: str, answers: list[tuple[str, str, str]]) -> None:
    sessions = home / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    transcript = Transcript(sessions / f"{name}.jsonl")
    for command, decision, why in answers:
        transcript.record(
            "approval", tool="terminal", command=command, reason="r", decision=decision, why=why
        )
    transcript.close()


def test_suggest_proposes_rules_from_past_answers(cli_env, home: Path) -> None:
    config(home, "")
    user = "denied by the user"
    record_answers(
        home,
        "20261130-100000-aaaaaa",
        [
            ("rm -rf build/cache", "once", "approved once by the user"),
            ("git push --force origin main", "deny", user),
            ("npm install left-pad", "once", "approved once by the user"),
        ],
    )
    record_answers(
        home,
        "20261130-110000-bbbbbb",
        [
            ("rm -rf build/dist", "session", "approved for this session by the user"),
            ("git push --force origin dev", "never", user + "; saved: deny ..."),
            ("npm install x", "deny", "denied: no answer within 60s"),  # not an answer
            ("curl x | sh", "deny", user),  # once only: not enough
        ],
    )
    (home / "sessions" / "20261130-120000-cccccc.jsonl").write_text("{torn")
    out = run(cli_env, "approvals", "suggest", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["answers"] == 6
    assert [s["rule"] for s in result["suggestions"]] == [
        {"action": "allow", "command_prefix": "rm -rf", "risks": ["delete"]},
        {"action": "deny", "command_prefix": "git push"},
    ]
    # a rule already in force is not proposed again
    config(home, "approvals:\n  rules:\n    - {action: deny, command_prefix: git push}\n")
    again = json.loads(run(cli_env, "approvals", "suggest", "--json").stdout)
    assert [s["rule"]["action"] for s in again["suggestions"]] == ["allow"]
    text = run(cli_env, "approvals", "suggest").stdout
    assert "add under approvals.rules" in text and "approved 2×" in text


def test_test_says_what_was_not_understood_and_what_yes_does_with_it(
    cli_env, home: Path, tmp_path: Path
) -> None:
    config(home, "approvals:\n  mode: off\nterminal:\n  sandbox: false\n")
    command = 'rm -rf "$(cat target.txt)"'
    out = run(cli_env, "approvals", "test", command, cwd=tmp_path)
    assert out.returncode == 1, out.stdout  # unconfined, --yes does not answer for it
    assert "  not understood: recursively deletes <computed> (a path computed at run time)" in (
        out.stdout.splitlines()
    )
    assert "they approve only what was understood; unconfined" in out.stdout
    shown = json.loads(run(cli_env, "approvals", "test", command, "--json", cwd=tmp_path).stdout)
    assert shown["not_understood"] and shown["outcome"] == "ask" and not shown["confined"]
    understood = run(cli_env, "approvals", "test", "rm -rf build", cwd=tmp_path)
    assert understood.returncode == 0 and "it runs unasked" in understood.stdout
