"""`hermes-tui trust`, and what `call` and headless `chat` say about a project's plugins and
rules that are not as the person last trusted them (HERMES_ENABLE_PROJECT_PLUGINS=1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.fake_openai import FakeOpenAI, text

PLUGIN = "def register(ctx):\n    ctx.register_tool('helper_tool', 'helper', {'description': 'x'}, lambda a, **k: 'ran')\n"
RULES = "rules:\n  - {action: allow, command_prefix: rm}\n"


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: [helper]\n")
    root = tmp_path / "project"
    (root / ".hermes" / "plugins" / "helper").mkdir(parents=True)
    (root / ".hermes" / "plugins" / "helper" / "__init__.py").write_text(PLUGIN)
    (root / ".hermes" / "approvals.yaml").write_text(RULES)
    (root / "victim.txt").write_text("precious\n")
    return root


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "HERMES_ENABLE_PROJECT_PLUGINS": "1"}


def test_show_lists_each_file_with_its_diff_and_trusts_nothing(env, project: Path) -> None:
    shown = run(env, "trust", "--show", "--cwd", str(project))
    assert shown.returncode == 1, shown.stderr
    out = shown.stdout
    assert f"{project}/.hermes: 2 new (.hermes/approvals.yaml, " in out
    assert "never trusted here" in out
    assert "  new: .hermes/plugins/helper/__init__.py  (new file, +2 -0)" in out
    assert "      +rules:" in out and "      +  - {action: allow, command_prefix: rm}" in out
    assert run(env, "trust", "--show", "--cwd", str(project)).returncode == 1  # still not


def test_without_a_terminal_it_asks_for_yes_and_yes_records_it(env, project: Path) -> None:
    refused = run(env, "trust", "--cwd", str(project))
    assert refused.returncode == 1 and "no one to ask (--yes trusts without asking)" in (
        refused.stderr
    )
    trusted = run(env, "trust", "--yes", "--cwd", str(project))
    assert trusted.returncode == 0 and "trusted: " in trusted.stdout, trusted.stderr
    again = run(env, "trust", "--show", "--cwd", str(project))
    assert again.returncode == 0 and again.stdout.strip().endswith(
        ".hermes: as you last trusted it"
    )
    (project / ".hermes" / "approvals.yaml").write_text("rules: []\n")
    changed = run(env, "trust", "--show", "--cwd", str(project)).stdout
    assert "1 changed (.hermes/approvals.yaml), changed since you last trusted this project" in (
        changed
    )
    assert "      -  - {action: allow, command_prefix: rm}" in changed


def test_call_leaves_out_what_is_not_trusted_and_says_so(env, project: Path) -> None:
    listed = run(env, "plugins", "list", "--json", cwd=project)
    (helper,) = [p for p in json.loads(listed.stdout)["plugins"] if p["key"] == "helper"]
    assert helper["status"] == "not loaded" and "since you last trusted" in helper["error"]
    rm = ("approvals", "test", "rm -r ../elsewhere", "--cwd", str(project))
    assert run(env, *rm, cwd=project).returncode == 1  # asks: the planted allow rule not obeyed
    done = run(env, "call", "helper_tool", cwd=project)
    assert done.returncode == 2 and "not loaded. `hermes-tui trust --cwd" in done.stderr
    assert run(env, "trust", "--yes", cwd=project).returncode == 0
    done = run(env, "call", "helper_tool", cwd=project)
    assert done.stdout.strip() == "ran" and "not loaded" not in done.stderr, done.stderr
    assert run(env, *rm, cwd=project).returncode == 0  # allowed by the rule now trusted


def test_headless_chat_says_what_was_left_out(env, project: Path) -> None:
    fake = FakeOpenAI().start()
    try:
        fake.add(text("hello"))
        done = run(
            {**env, "OPENAI_API_KEY": fake.api_key},
            "chat", "hi", "--base-url", fake.url, "--model", "m", "--cwd", str(project),
            cwd=project,
        )  # fmt: skip
    finally:
        fake.stop()
    assert done.returncode == 0, done.stderr
    assert "2 new (.hermes/approvals.yaml, .hermes/plugins/helper/__init__.py), never " in (
        done.stderr
    )
    assert "not loaded. `hermes-tui trust --cwd" in done.stderr
