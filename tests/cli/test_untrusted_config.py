"""A config.yaml the agent could rewrite is not trusted: headless `--yes` no longer answers,
and `doctor` and `approvals list` say which file and why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.fake_openai import text, tools
from workbench.builtins.terminal.terminal_tool import run_command


def call(env: dict[str, str], cwd: Path, command: str) -> dict:
    out = run(env, "call", "terminal", "--args", json.dumps({"command": command}), "--yes",
              cwd=cwd)  # fmt: skip
    return {"code": out.returncode, "text": out.stdout + out.stderr}


@pytest.fixture
def project(cli_env: dict[str, str], home: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim.txt").write_text("precious")
    assert run(cli_env, "doctor", cwd=work).returncode in (0, 1)  # creates the home and config
    assert (home / "config.yaml").is_file()
    return work


def test_a_hard_link_made_by_a_command_makes_the_next_yes_call_denied(
    cli_env: dict[str, str], home: Path, project: Path
) -> None:
    # as a command the gate missed would (`ln "$(ls -d ../h*)/config.yaml" cfg.txt` did):
    # the terminal's own runner, without the gate
    made = run_command(f"ln {home / 'config.yaml'} cfg.txt", project, timeout=60)
    assert (project / "cfg.txt").stat().st_nlink == 2, made
    denied = call(cli_env, project, "rm victim.txt")
    assert (project / "victim.txt").read_text() == "precious", denied
    assert "not trusted" in denied["text"] and "hard links" in denied["text"]
    doctor = run(cli_env, "doctor", cwd=project)
    assert doctor.returncode == 1
    assert f"{home / 'config.yaml'} has 2 hard links" in doctor.stdout
    listed = run(cli_env, "approvals", "list", cwd=project)
    assert "not trusted" in listed.stdout + listed.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
def test_a_config_owned_by_another_user_makes_yes_calls_denied(
    cli_env: dict[str, str], home: Path, project: Path
) -> None:
    os.chown(home / "config.yaml", 4242, -1)
    denied = call(cli_env, project, "rm victim.txt")
    assert (project / "victim.txt").read_text() == "precious", denied
    doctor = run(cli_env, "doctor", cwd=project)
    assert "owned by uid 4242" in doctor.stdout


def test_a_chat_says_its_calls_all_ask_and_why(
    cli_env: dict[str, str], home: Path, project: Path, fake
) -> None:
    os.link(home / "config.yaml", project / "cfg.txt")
    fake.add(tools(("terminal", {"command": "rm victim.txt"})), text("could not"))
    out = run(cli_env, "chat", "go", "--yes", "--base-url", fake.url, "--api-key", fake.api_key,
              cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "every call asks" in out.stderr and "2 hard links" in out.stderr
    assert (project / "victim.txt").read_text() == "precious"
