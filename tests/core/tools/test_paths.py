"""A tool's path expands `~` and the variables a command gets and a path is made of, never
the rest of hermes-tui's environment: `$OPENAI_API_KEY` stays that text, so no error shows
the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.policy.assess import written_by
from workbench.core.policy.gate import check_call
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.paths import resolve_path
from workbench.core.tools.registry import registry

KEY = "sk-paths-test-5e1f0a"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("PROJECT_DIR", str(tmp_path / "elsewhere"))
    return tmp_path


def test_only_path_variables_are_expanded(env: Path) -> None:
    cwd = env / "work"
    assert resolve_path("~/notes.txt", cwd) == env / "home" / "notes.txt"
    assert resolve_path("$HOME/a", cwd) == env / "home" / "a"
    assert resolve_path("${TMPDIR}/b", cwd) == env / "tmp" / "b"
    assert resolve_path("$PWD/c", cwd) == cwd / "c"  # the call's folder, as bash sets it
    assert resolve_path("$OPENAI_API_KEY", cwd) == cwd / "$OPENAI_API_KEY"
    assert resolve_path("${OPENAI_API_KEY}/x", cwd) == cwd / "${OPENAI_API_KEY}" / "x"
    assert resolve_path("$PROJECT_DIR/x", cwd) == cwd / "$PROJECT_DIR" / "x"  # not a command's
    assert resolve_path("$UNSET_NAME_12/x", cwd) == cwd / "$UNSET_NAME_12" / "x"


@pytest.mark.parametrize("tool", ["read_file", "patch", "search_files"])
def test_no_tool_error_shows_an_environment_value(env: Path, tool: str) -> None:
    (env / "work").mkdir()
    args = {"path": "$OPENAI_API_KEY", "pattern": "x", "old_string": "a", "new_string": "b"}
    out = call_tool(registry, tool, args, cwd=str(env / "work"))
    assert KEY not in out
    assert "$OPENAI_API_KEY" in json.loads(out).get("error", "") or tool == "search_files"
    if tool == "read_file":
        assert json.loads(out)["error"].startswith("File not found: ")


def test_the_gate_and_the_terminals_workdir_read_it_as_written(env: Path) -> None:
    (env / "work").mkdir()
    cwd = str(env / "work")
    check = check_call("read_file", {"path": "$OPENAI_API_KEY"}, cwd)
    assert check is None or KEY not in check.shown
    out = call_tool(registry, "terminal", {"command": "pwd", "workdir": "$OPENAI_API_KEY"}, cwd=cwd)
    assert KEY not in out
    wrote = written_by(registry, "write_file", {"path": "$OPENAI_API_KEY"}, cwd)
    assert wrote == {str(env / "work" / "$OPENAI_API_KEY")}
