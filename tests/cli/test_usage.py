"""`hermes-tui tools usage`: run as a user would, on sessions whose calls are known."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.usage import at, write_known_sessions
from workbench.core.config import config_path

CONFIG = """\
# kept
model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
"""


@pytest.fixture
def env(cli_env: dict[str, str], home: Path) -> dict[str, str]:
    write_known_sessions(home)
    config_path(home).write_text(CONFIG)
    return cli_env


def test_json_shape_counts_and_suggestions(env) -> None:
    done = run(env, "tools", "usage", "--sessions", "5", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {
        "sessions", "tokens_per_request", "bridge_tokens", "deferred_tools", "counted",
        "tools", "suggestions", "problems", "notes",
    }  # fmt: skip
    assert report["sessions"] == {
        "read": 5, "hermes-tui": 5, "hermes": 0, "requests_per_session": 3.0,
    }  # fmt: skip
    assert report["counted"].startswith("o200k_base tokenizer")
    tools = {t["name"]: t for t in report["tools"]}
    assert set(tools["read_file"]) == {"name", "state", "tokens", "calls", "sessions", "last_used"}
    assert tools["read_file"]["calls"] == 6 and tools["read_file"]["sessions"] == 5
    assert tools["read_file"]["last_used"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(at(5, 10))
    )
    assert tools["project_report"]["state"] == "absent"  # called then, not a tool here now
    assert (tools["write_file"]["calls"], tools["write_file"]["last_used"]) == (0, None)
    suggested = {(s["tool"], s["action"]) for s in report["suggestions"]}
    assert suggested == {
        ("search_files", "off"),
        ("patch", "off"),
        ("write_file", "off"),
        ("skill_view", "off"),  # the skills toolset is on by default, as in Hermes
        ("skill_manage", "off"),
    }
    write = next(s for s in report["suggestions"] if s["tool"] == "write_file")
    assert write["saving_per_request"] == tools["write_file"]["tokens"]
    assert write["saving_per_session"] == write["saving_per_request"] * 3
    assert write["config_key"] == "tools.disabled" and write["config_after"] == ["write_file"]
    assert (
        write["tokens_per_request_after"]
        == report["tokens_per_request"] - write["saving_per_request"]
    )


def test_text_then_apply(env, home: Path) -> None:
    shown = run(env, "tools", "usage", "--sessions", "5")
    assert shown.returncode == 0, shown.stderr
    assert "tool use in the last 5 session(s): 5 of hermes-tui, 0 of Hermes" in shown.stdout
    assert "switch off write_file:" in shown.stdout and "would become: [write_file]" in shown.stdout
    assert "disabled" not in config_path(home).read_text()  # shown, not saved
    done = run(env, "tools", "usage", "--sessions", "5", "--apply", "write_file")
    assert done.returncode == 0, done.stderr
    assert "tool write_file switched off" in done.stdout
    text = config_path(home).read_text()
    assert text.startswith("# kept") and "disabled:\n  - write_file" in text


def test_what_cannot_be_done_is_said(env) -> None:
    no_such = run(env, "tools", "usage", "--apply", "read_file")  # used: nothing suggested
    assert no_such.returncode == 2 and "no suggestion for 'read_file'" in no_such.stderr
    zero = run(env, "tools", "usage", "--sessions", "0")
    assert zero.returncode == 2 and "at least 1" in zero.stderr
