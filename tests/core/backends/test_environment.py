"""The terminal's environment: an allowlist plus terminal.env_passthrough, never our API keys."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run
from workbench.core.backends.environment import passthrough_names, scrubbed_env

SECRETS = {
    "OPENAI_API_KEY": "sk-openai",
    "ANTHROPIC_API_KEY": "sk-ant",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "AWS_ACCESS_KEY_ID": "AKIA",
    "GITHUB_TOKEN": "ghp-token",
    "FIRECRAWL_API_KEY": "fc-key",
}


def test_the_allowlist_keeps_what_a_shell_needs_and_nothing_else() -> None:
    source = {
        **SECRETS,
        "PATH": "/usr/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "XDG_RUNTIME_DIR": "/run/user/0",
        "TZ": "UTC",
        "PWD": "/somewhere/else",
        "HERMES_HOME": "/root/.hermes",
    }
    env = scrubbed_env(source=source)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "XDG_RUNTIME_DIR": "/run/user/0",
        "TZ": "UTC",
    }
    assert scrubbed_env(["GITHUB_TOKEN", "UNSET"], source=source)["GITHUB_TOKEN"] == "ghp-token"


def test_passthrough_takes_hermes_list_and_names_what_is_wrong() -> None:
    assert passthrough_names(["A", "B_2"]) == (["A", "B_2"], [])
    assert passthrough_names("A, B") == (["A", "B"], [])
    names, problems = passthrough_names(["OK", "no spaces", 3])
    assert names == ["OK"] and len(problems) == 2
    assert passthrough_names({"A": 1})[1]


def test_a_terminal_command_never_sees_api_keys(cli_env, home: Path, tmp_path: Path) -> None:
    """Through the agent's own path (`call`), `env` shows only the allowlist and passthrough."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("terminal:\n  env_passthrough: [GITHUB_TOKEN]\n")
    out = run(
        {**cli_env, **SECRETS}, "call", "terminal", "--args", '{"command": "env"}', cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)["output"]
    for name, value in SECRETS.items():
        if name != "GITHUB_TOKEN":
            assert value not in shown, name
    assert "GITHUB_TOKEN=ghp-token" in shown and "HERMES_HOME" not in shown
    assert "PATH=" in shown and f"PWD={tmp_path}" in shown  # bash's own PWD, not ours


def test_an_mcp_server_gets_the_same_allowlist(monkeypatch) -> None:
    from workbench.core.mcp.config import parse_server

    monkeypatch.setenv("OPENAI_API_KEY", "sk-no")
    monkeypatch.setenv("LC_ALL", "C")
    env = parse_server("s", {"command": "x", "env": {"ONLY": "this"}}).child_env()
    assert "OPENAI_API_KEY" not in env and env["ONLY"] == "this" and env["LC_ALL"] == "C"
