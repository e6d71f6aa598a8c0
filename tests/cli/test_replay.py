"""`hermes-tui replay`: saved calls run through the agent's path, one line per case, exit 0 all
passed, 1 any failed, 2 a file that cannot be used."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run
from workbench.core.history import CallHistory


def cases(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


READ = """\
cases:
  - name: reads notes
    tool: read_file
    arguments: {path: notes.txt}
    expect:
      status: ok
      contains: [alpha, beta]
      max_seconds: 30
  - name: echoes
    tool: terminal
    arguments: {command: "printf hi"}
    expect:
      json: {exit_code: 0, output: hi}
"""


def test_passing_cases_exit_0_and_are_kept_in_the_history(
    cli_env, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", READ)), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"PASS  {tmp_path / 'c.yaml'} #1 reads notes  ")
    assert lines[1].startswith(f"PASS  {tmp_path / 'c.yaml'} #2 echoes  ")
    assert lines[-1].startswith("2 case(s): 2 passed, 0 failed")
    (kept,) = CallHistory(home / "state" / "history").calls("read_file")
    assert kept.origin == "replay" and kept.arguments == {"path": "notes.txt"}


def test_a_failing_check_says_why_and_exits_1(cli_env, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    text = READ.replace("[alpha, beta]", "[alpha, gamma]").replace("output: hi", "output: ho")
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", text)), "--json", cwd=tmp_path)
    assert out.returncode == 1
    first, second = json.loads(out.stdout)["cases"]
    assert not first["passed"] and first["reasons"] == ['result does not contain "gamma"']
    assert second["reasons"] == ['json output: expected "ho", got "hi"']


def test_a_missing_tool_fails_its_case_and_the_others_still_run(cli_env, tmp_path: Path) -> None:
    text = (
        "cases:\n  - {name: gone, tool: no_such_tool}\n  - {tool: terminal, arguments: "
        "{command: 'true'}, expect: {status: ok}}\n"
    )
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", text)), cwd=tmp_path)
    assert out.returncode == 1
    assert "FAIL" in out.stdout and "no tool named no_such_tool" in out.stdout
    assert "PASS" in out.stdout.splitlines()[1]


def test_a_call_that_needs_approval_fails_unless_yes(cli_env, tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    text = (
        "cases:\n  - {tool: terminal, arguments: {command: rm -rf build}, expect: {status: ok}}\n"
    )
    path = str(cases(tmp_path / "c.yaml", text))
    out = run(cli_env, "replay", path, cwd=tmp_path)
    assert out.returncode == 1 and "not approved" in out.stdout
    assert (tmp_path / "build").is_dir()
    assert run(cli_env, "replay", path, "--yes", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "build").exists()


def test_a_deny_rule_holds_with_yes(cli_env, home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "approvals:\n  rules:\n    - {action: deny, command_prefix: touch}\n"
    )
    text = "cases:\n  - {tool: terminal, arguments: {command: touch x}}\n"
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", text)), "--yes", cwd=tmp_path)
    assert out.returncode == 1 and "not approved" in out.stdout
    assert not (tmp_path / "x").exists()


def test_bad_yaml_names_the_file_and_runs_nothing(cli_env, tmp_path: Path) -> None:
    good = cases(
        tmp_path / "good.yaml", "cases:\n  - {tool: terminal, arguments: {command: touch ran}}\n"
    )
    broken = cases(tmp_path / "broken.yaml", "cases:\n  - tool: [unclosed\n")
    typo = cases(
        tmp_path / "typo.yaml", "cases:\n  - {name: t, tool: read_file, expect: {stauts: ok}}\n"
    )
    out = run(cli_env, "replay", str(good), str(broken), str(typo), cwd=tmp_path)
    assert out.returncode == 2
    assert f"{broken}, line 3" in out.stderr
    assert f"{typo}: case 1 (t): unknown check(s) stauts" in out.stderr
    assert not (tmp_path / "ran").exists()
    missing = run(cli_env, "replay", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_call_from_the_command_line_is_kept_too(cli_env, home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    out = run(cli_env, "call", "read_file", "--args", '{"path": "notes.txt"}', cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (kept,) = CallHistory(home / "state" / "history").calls("read_file")
    assert kept.origin == "call" and kept.arguments == {"path": "notes.txt"}


def test_a_trusted_projects_deny_rule_holds_for_calls_run_there(cli_env, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hermes").mkdir(parents=True)
    (project / ".hermes" / "approvals.yaml").write_text(
        "rules:\n  - {action: deny, command_prefix: touch}\n"
    )
    text = "cases:\n  - {tool: terminal, arguments: {command: touch x}}\n"
    path = str(cases(tmp_path / "c.yaml", text))
    env = {**cli_env, "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    # run from elsewhere (a CI job's checkout root), the calls in the project
    out = run(env, "replay", path, "--yes", "--cwd", str(project), cwd=tmp_path)
    assert out.returncode == 1 and "denied by a rule" in out.stdout, out.stdout + out.stderr
    assert not (project / "x").exists()
    called = run(env, "call", "terminal", "--args", '{"command": "touch y"}', "--yes",
                 "--cwd", str(project), cwd=tmp_path)  # fmt: skip
    assert "denied by a rule" in called.stdout + called.stderr, called.stdout + called.stderr
    assert not (project / "y").exists()


def test_a_case_with_no_checks_fails_when_its_call_never_ran(
    cli_env, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("tools:\n  disabled: [read_file]\n")
    text = (
        "cases:\n  - {tool: read_file, arguments: {path: notes.txt}}\n"
        f"  - {{tool: write_file, arguments: {{path: {home / 'config.yaml'}, content: 'x: 1'}}}}\n"
    )
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", text)), "--yes", "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    off, app_state = json.loads(out.stdout)["cases"]
    assert off["reasons"] == [
        "tool read_file is switched off (tools.disabled in config.yaml); to switch it on: "
        "`hermes-tui tools enable read_file` (in the workbench: x on the tool)"
    ]
    assert app_state["status"] == "blocked"
    assert app_state["reasons"][0].startswith("not run: blocked (hardline)")
    assert "tools:" in (home / "config.yaml").read_text()


def test_a_case_whose_toolset_is_switched_off_fails_and_its_call_never_runs(
    cli_env, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [terminal]\n")
    text = "cases:\n  - {tool: terminal, arguments: {command: touch ran}, expect: {status: ok}}\n"
    out = run(cli_env, "replay", str(cases(tmp_path / "c.yaml", text)), "--yes", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "tool terminal is switched off with its toolset terminal" in out.stdout
    assert "`hermes-tui toolsets enable terminal`" in out.stdout
    assert not (tmp_path / "ran").exists()
