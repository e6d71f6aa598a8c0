"""The process that starts the terminal's commands holds none of the app's secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.builtins.terminal import terminal_tool
from workbench.builtins.terminal.terminal_tool import run_command

SECRET = "sk-test-SECRET-reaper-7f3a"


@pytest.fixture
def fresh_server(monkeypatch: pytest.MonkeyPatch):
    """A reaper server started from an environment that holds an API key."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET + "-gh")
    terminal_tool._SERVER.close()  # the next command starts a new one, from this environment
    yield
    terminal_tool._SERVER.close()


def test_the_reaper_and_its_server_hold_no_api_key(tmp_path: Path, fresh_server) -> None:
    out = json.loads(run_command("tr '\\0' '\\n' < /proc/$PPID/environ", tmp_path, timeout=60))
    assert out["exit_code"] == 0
    assert "PATH=" in out["output"]  # it read the reaper's environment, and it is the allowlist
    assert SECRET not in out["output"] and "API_KEY" not in out["output"]
    server = terminal_tool._SERVER.pid
    assert server is not None
    assert SECRET.encode() not in Path(f"/proc/{server}/environ").read_bytes()


def test_the_command_still_gets_its_own_environment(tmp_path: Path, fresh_server) -> None:
    env = {"PATH": "/usr/bin:/bin", "MY_VAR": "given"}
    out = json.loads(run_command("echo $MY_VAR", tmp_path, timeout=60, env=env))
    assert out["output"] == "given\n"
