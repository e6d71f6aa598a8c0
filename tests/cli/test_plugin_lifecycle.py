"""The plugins' session hooks from the command line: `chat` is one session for the process,
`call` a session of one call; `plugins` says which of a plugin's hooks run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.plugins import FIXTURES


@pytest.fixture
def env(cli_env, home: Path, tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURES / "lifecycle", home / "plugins" / "lifecycle")
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["lifecycle"]}}))
    return {
        **cli_env,
        "OPENAI_BASE_URL": fake.url,
        "OPENAI_API_KEY": fake.api_key,
        "LIFECYCLE_LOG": str(tmp_path / "hooks.jsonl"),
    }


def _log(env: dict[str, str]) -> list[dict]:
    path = Path(env["LIFECYCLE_LOG"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_chat_runs_the_session_and_turn_hooks(env, fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.add(text("Hello there."))
    out = run(env, "chat", "hi", "--model", "gpt-test", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[checked] Hello there."
    seen = _log(env)
    assert [r["hook"] for r in seen] == [
        "on_session_start",
        "pre_llm_call",
        "llm_request",
        "transform_llm_output",
        "post_llm_call",
        "on_session_end",
        "on_session_finalize",
    ]
    session_id = seen[0]["session_id"]
    assert seen[0] == {
        "hook": "on_session_start",
        "session_id": session_id,
        "model": "gpt-test",
        "platform": "cli",
    }
    assert seen[-1] == {
        "hook": "on_session_finalize",
        "session_id": session_id,
        "platform": "cli",
        "reason": "shutdown",
    }
    assert f"resume with: hermes-tui chat --resume {session_id}" in out.stderr
    (user,) = [m["content"] for m in fake.requests[0]["messages"] if m["role"] == "user"]
    assert user == "hi\n\nRecalled: the user likes tea (0 notes)."


def test_call_is_a_session_of_one_call(env, tmp_path: Path) -> None:
    out = run(env, "call", "lifecycle_note", "--args", '{"text": "tea"}', cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"noted": "tea", "count": 1}  # its store was opened
    assert [r["hook"] for r in _log(env)] == ["on_session_start", "on_session_finalize"]


def test_plugins_says_which_hooks_run(env, tmp_path: Path) -> None:
    listed = run(env, "plugins", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    plugins = {p["key"]: p for p in json.loads(listed.stdout)["plugins"]}
    plugin = plugins["lifecycle"]
    hooks = {h["name"]: h["runs"] for h in plugin["hooks"]}
    assert hooks == {
        "kanban_task_claimed": False,
        "on_session_end": True,
        "on_session_finalize": True,
        "on_session_reset": True,
        "on_session_start": True,
        "post_llm_call": True,
        "pre_llm_call": True,
        "transform_llm_output": True,
        "transform_terminal_output": True,
    }
    plain = run(env, "plugins", cwd=tmp_path).stdout
    assert "hooks: on_session_end, on_session_finalize" in plain
    assert "hooks accepted, not run by hermes-tui: kanban_task_claimed" in plain


def test_replay_is_a_session_of_its_calls(env, tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "cases:\n"
        "  - {name: one, tool: lifecycle_note, arguments: {text: a}, expect: {status: ok}}\n"
        "  - {name: two, tool: lifecycle_note, arguments: {text: b},"
        " expect: {json: {count: 2}}}\n"
    )
    out = run(env, "replay", str(cases), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [r["hook"] for r in _log(env)] == ["on_session_start", "on_session_finalize"]
