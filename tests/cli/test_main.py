"""The headless commands, run as a user runs them: the installed `hermes-tui` in a subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.cli import run
from workbench import __version__
from workbench.core.config import load_config


def test_version_and_help(cli_env) -> None:
    assert run(cli_env, "--version").stdout.strip() == f"hermes-tui {__version__}"
    help_text = run(cli_env, "--help").stdout
    for command in ("tools", "call", "toolsets", "doctor"):
        assert command in help_text


def test_first_run_creates_the_home(cli_env, home: Path) -> None:
    assert not home.exists()
    assert run(cli_env, "tools").returncode == 0
    assert {p.name for p in home.iterdir()} >= {"logs", "state", "plugins"}


def test_tools_json_lists_every_tool_with_availability(cli_env) -> None:
    out = run(cli_env, "tools", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)["tools"]}
    assert {"read_file", "write_file", "patch", "search_files", "terminal"} <= set(rows)
    assert rows["read_file"]["available"] and rows["read_file"]["offered"]
    assert rows["read_file"]["max_result_size_chars"] == "inf"
    assert rows["web_search"]["available"] is False
    assert "FIRECRAWL_API_KEY" in rows["web_search"]["reason"]
    assert rows["terminal"]["source"] == "builtin"


def test_tools_human_output_groups_by_source_and_toolset_with_sizes(cli_env) -> None:
    text = run(cli_env, "tools").stdout
    assert text.startswith("agent (4 tools, ")  # the agent's own tools, then the registry's
    assert re.search(r"\nbuiltin \(10 tools, [\d.k]+ tokens\)\n", text)
    assert re.search(r"  file \(4\)  [\d.k]+ tokens\n    ✔ patch +\d+\n", text)
    assert re.search(r"✖ web_search +\d+  — missing environment variable: FIRECRAWL_API_KEY", text)
    assert re.search(r"offered to the model: \d+ tools · [\d.k]+ tokens each request \(", text)


def test_tools_disable_and_enable_one_tool(cli_env, home: Path) -> None:
    before = json.loads(run(cli_env, "tools", "--json").stdout)
    sizes = {r["name"]: r["tokens"] for r in before["tools"]}
    off = run(cli_env, "tools", "disable", "read_file")
    assert off.returncode == 0 and "tools.disabled" in off.stdout
    after = json.loads(run(cli_env, "tools", "--json").stdout)
    assert "read_file" not in after["offered"]["tools"]
    assert before["offered"]["tokens"] - after["offered"]["tokens"] == sizes["read_file"]
    assert "[switched off (tools.disabled" in run(cli_env, "tools").stdout
    refused = run(cli_env, "call", "read_file", "--args", '{"path": "x"}')
    assert refused.returncode == 1 and "switched off" in refused.stdout
    assert run(cli_env, "tools", "enable", "read_file").returncode == 0
    again = json.loads(run(cli_env, "tools", "--json").stdout)
    assert again["offered"] == before["offered"]
    unknown = run(cli_env, "tools", "disable", "no_such_tool")
    assert unknown.returncode == 2 and "unknown tool 'no_such_tool'" in unknown.stderr
    assert run(cli_env, "tools", "disable").returncode == 2


def test_call_refuses_a_tool_whose_toolset_is_switched_off(cli_env, tmp_path: Path) -> None:
    assert run(cli_env, "toolsets", "disable", "terminal").returncode == 0
    refused = run(cli_env, "call", "terminal", "--args", '{"command": "touch ran"}', "--yes",
                  cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = json.loads(refused.stdout)["error"]
    assert said.startswith("Tool 'terminal' is switched off with its toolset terminal")
    assert "`hermes-tui toolsets enable terminal`" in said
    assert not (tmp_path / "ran").exists()
    assert run(cli_env, "toolsets", "disable", "web").returncode == 0
    unavailable_too = run(cli_env, "call", "web_search", "--args", '{"query": "x"}')
    assert "switched off with its toolset web" in unavailable_too.stdout  # the switch first


def test_call_runs_through_the_agent_path(cli_env, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    out = run(
        cli_env, "call", "read_file", "--args", '{"path": "a.txt", "limit": "1"}', cwd=tmp_path
    )
    assert out.returncode == 0
    assert json.loads(out.stdout)["content"] == "     1|alpha"  # "1" was coerced to 1


def test_call_errors_are_clear(cli_env, tmp_path: Path) -> None:
    malformed = run(cli_env, "call", "read_file", "--args", "{path: a.txt}")
    assert malformed.returncode == 1
    assert json.loads(malformed.stdout)["error"] == "Invalid tool arguments"
    wrong_type = run(cli_env, "call", "read_file", "--args", '{"path": 3}')
    assert "argument 'path' must be string, got integer 3" in wrong_type.stdout
    not_object = run(cli_env, "call", "read_file", "--args", "[1]")
    assert "must be a valid JSON object, not array" in not_object.stdout
    unknown = run(cli_env, "call", "read_fil")
    assert unknown.returncode == 2
    assert "unknown tool 'read_fil'" in unknown.stderr and "read_file" in unknown.stderr
    unavailable = run(cli_env, "call", "web_search", "--args", '{"query": "x"}')
    assert unavailable.returncode == 1 and "FIRECRAWL_API_KEY" in unavailable.stderr
    failing = run(cli_env, "call", "read_file", "--args", '{"path": "missing.txt"}', cwd=tmp_path)
    assert failing.returncode == 1 and "File not found" in failing.stdout


def test_toolsets_enable_disable_persist(cli_env, home: Path) -> None:
    out = run(cli_env, "toolsets", "disable", "terminal")
    assert out.returncode == 0, out.stderr
    listing = run(cli_env, "toolsets", "list", "--json")
    data = json.loads(listing.stdout)
    states = {t["name"]: t["enabled"] for t in data["toolsets"]}
    assert states["terminal"] is False and states["file"] is True
    assert "terminal" not in data["effective"]
    tools = {r["name"]: r for r in json.loads(run(cli_env, "tools", "--json").stdout)["tools"]}
    assert tools["terminal"]["enabled"] is False and tools["terminal"]["offered"] is False
    assert run(cli_env, "toolsets", "enable", "terminal").returncode == 0
    assert "terminal" in json.loads(run(cli_env, "toolsets", "list", "--json").stdout)["effective"]
    assert "agent:\n  disabled_toolsets: []" in (home / "config.yaml").read_text()


def test_toolsets_usage_errors(cli_env) -> None:
    unknown = run(cli_env, "toolsets", "enable", "nope")
    assert unknown.returncode == 2 and "unknown toolset 'nope'" in unknown.stderr
    assert run(cli_env, "toolsets", "disable").returncode == 2
    alone = run(cli_env, "tools", "disable", "todo")  # the agent's own: with its toolset
    assert alone.returncode == 2 and "`hermes-tui toolsets disable todo`" in alone.stderr


HERMES_WROTE = Path(__file__).parents[1] / "core" / "fixtures" / "hermes-tools-disable-todo.yaml"


def test_a_config_hermes_wrote_is_read_as_hermes_reads_it(cli_env, home: Path) -> None:
    home.mkdir()
    shutil.copy(HERMES_WROTE, home / "config.yaml")  # `hermes tools disable todo`'s
    doctor = run(cli_env, "doctor").stdout
    assert "unknown toolset" not in doctor
    (said,) = [line for line in doctor.splitlines() if "not in hermes-tui" in line]
    assert said.startswith(
        "toolsets  not in hermes-tui: browser, code_execution, computer_use, cronjob, "
        "image_gen, kanban, tts, vision (Hermes's"
    )
    problems = doctor.split("problem(s):")[-1] if "problem(s):" in doctor else ""
    assert "browser" not in problems and "toolset" not in problems
    listing = json.loads(run(cli_env, "toolsets", "--json").stdout)
    states = {t["name"]: t["enabled"] for t in listing["toolsets"]}
    assert states["todo"] is False  # switched off by Hermes: off here
    assert states["memory"] and states["clarify"] and states["delegation"] and states["file"]
    assert "todo" not in listing["effective"] and "memory" in listing["effective"]
    # switched here as Hermes's own CLI does, the names it wrote kept for it
    assert run(cli_env, "toolsets", "enable", "todo").returncode == 0
    assert run(cli_env, "toolsets", "disable", "memory").returncode == 0
    saved = load_config(home / "config.yaml")
    assert {"browser", "kanban", "todo"} <= set(saved.get("platform_toolsets.cli"))
    assert saved.get("agent.disabled_toolsets") == ["memory"]
    effective = json.loads(run(cli_env, "toolsets", "--json").stdout)["effective"]
    assert "todo" in effective and "memory" not in effective


def test_doctor_says_when_a_toolset_list_leaves_the_agents_own_out(cli_env, home: Path) -> None:
    """A list an older hermes-tui wrote (`[file, terminal, web]`) switches the agent's own
    toolsets off, as Hermes reads it: said by doctor, not lost silently."""
    home.mkdir()
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [file, terminal, web, todo]\n")
    (said,) = [ln for ln in run(cli_env, "doctor").stdout.splitlines() if "agent's own" in ln]
    assert said.startswith("toolsets  the agent's own off: ") and "todo" not in said
    assert all(ts in said for ts in ("memory", "clarify", "delegation", "session_search"))
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [hermes-cli]\n")
    assert "agent's own" not in run(cli_env, "doctor").stdout
    (home / "config.yaml").write_text("agent:\n  disabled_toolsets: [todo]\n")
    assert "agent's own" not in run(cli_env, "doctor").stdout  # switched off by name


def test_a_composite_shows_the_toolsets_it_holds_on(cli_env, home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [hermes-cli]\n")
    listing = run(cli_env, "toolsets").stdout
    for name in ("file", "terminal", "web", "todo", "memory"):
        assert re.search(rf"^\[x\] {name} .*\(on with hermes-cli\)$", listing, re.M), listing
    rows = json.loads(run(cli_env, "toolsets", "--json").stdout)["toolsets"]
    assert all(r["enabled"] and r["via"] == ["hermes-cli"] for r in rows)
    out = run(cli_env, "toolsets", "disable", "browser")  # Hermes's, nothing here: saved, said
    assert out.returncode == 0 and "browser is Hermes's, not in hermes-tui" in out.stdout


def test_corrupt_config_is_named_and_never_overwritten(cli_env, home: Path) -> None:
    home.mkdir()
    broken = "# mine\nagent:\n  disabled_toolsets: [web\nmodel: x\n"
    (home / "config.yaml").write_text(broken)
    out = run(cli_env, "toolsets", "disable", "terminal")
    assert out.returncode == 1
    assert "config.yaml, line 4" in out.stderr and "Nothing was changed" in out.stderr
    assert (home / "config.yaml").read_text() == broken
    listed = json.loads(run(cli_env, "tools", "--json").stdout)  # its switches are unknown
    assert set(listed["offered"]["tools"]).isdisjoint(r["name"] for r in listed["tools"])
    terminal = next(r for r in listed["tools"] if r["name"] == "terminal")
    assert not terminal["offered"] and terminal["not_offered"] == "config.yaml cannot be read"
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and "line 4" in doctor.stdout
    assert "the model is offered none of the tools you can switch off" in doctor.stdout
    assert run(cli_env, "tools", "--json").returncode == 0  # everything else keeps working


def test_read_only_home_is_reported_not_fatal(cli_env, home: Path, make_read_only) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("agent:\n  max_turns: 3\n")
    make_read_only(home)
    tools = run(cli_env, "tools", "--json")
    assert tools.returncode == 0
    problems = json.loads(tools.stdout)["problems"]
    assert any("cannot create" in p for p in problems)
    out = run(cli_env, "toolsets", "disable", "web")
    assert out.returncode == 1 and "cannot write" in out.stderr
    assert (home / "config.yaml").read_text() == "agent:\n  max_turns: 3\n"


FIXTURE_SERVER = Path(__file__).resolve().parents[1] / "core" / "mcp" / "fixture_server.py"


def test_doctor_reports_sources(cli_env, home: Path) -> None:
    (home / "plugins" / "notes").mkdir(parents=True)
    (home / "plugins" / "notes" / "plugin.yaml").write_text("name: notes\n")
    (home / "config.yaml").write_text(
        "mcp_servers:\n"
        f"  fx:\n    command: {sys.executable}\n    args: [{FIXTURE_SERVER}]\n"
        "  git:\n    command: no-such-mcp-server-git\n"
    )
    out = run(cli_env, "doctor")
    assert "fx: ready, 12 tool(s), stdio"  # 4 of them Hermes's in out.stdout
    # Retried, or already parked when the report is late (a loaded machine): both say why.
    assert re.search(
        r"git: (reconnecting|parked) — command not found: no-such-mcp-server-git", out.stdout
    )
    assert "notes (user): disabled (enable with `hermes-tui plugins enable KEY`)" in out.stdout
    assert "no __init__.py with register(ctx)" in out.stdout
    assert "unavailable web_search" in out.stdout
    assert out.returncode == 1 and re.search(r"MCP server git: (reconnecting|parked)", out.stdout)
    tools = {t["name"]: t for t in json.loads(run(cli_env, "tools", "--json").stdout)["tools"]}
    assert (tools["mcp__fx__add"]["source"], tools["mcp__fx__add"]["owner"]) == ("mcp", "fx")
    call = run(cli_env, "call", "mcp__fx__add", "--args", '{"a": 2, "b": 5}')
    assert json.loads(call.stdout)["result"] == "7"


@pytest.mark.parametrize("args", [["tools"], ["doctor"]])
def test_nothing_writes_to_the_terminal_but_the_report(cli_env, args) -> None:
    out = run(cli_env, *args)
    assert "Traceback" not in out.stderr and "WARNING" not in out.stderr


def test_a_server_that_never_connects_leaves_nothing_on_stderr_at_exit(cli_env, home: Path) -> None:
    """Its reconnect's wait was left pending when the MCP loop stopped, and the process
    printed "Task was destroyed but it is pending!" as it exited."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("mcp_servers:\n  git:\n    command: no-such-mcp-server-git\n")
    out = run(cli_env, "doctor", process=True)  # what a process prints as it ends
    assert "git: reconnecting" in out.stdout or "git: parked" in out.stdout
    assert out.stderr == ""


def test_the_workbench_needs_a_terminal(cli_env) -> None:
    out = run(cli_env)
    assert out.returncode == 2 and "needs a terminal" in out.stderr


def test_view_refuses_what_is_not_a_file_at_once(cli_env, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it would wait for a writer
    out = run(cli_env, "view", str(fifo))
    assert out.returncode == 2 and f"{fifo} is a FIFO (a pipe), not a regular file" in out.stderr
    out = run(cli_env, "view", "/dev/zero")
    assert out.returncode == 2 and "/dev/zero is a device, not a regular file" in out.stderr
    out = run(cli_env, "view", str(tmp_path / "gone.log"))
    assert out.returncode == 2 and "no such file" in out.stderr


def test_destructive_call_is_denied_headless_and_allowed_with_yes(cli_env, tmp_path: Path) -> None:
    (tmp_path / "old.log").write_text("x")
    args = ["call", "terminal", "--args", '{"command": "rm old.log"}']
    denied = run(cli_env, *args, cwd=tmp_path)
    assert denied.returncode == 1 and (tmp_path / "old.log").exists()
    assert "no one can be asked" in json.loads(denied.stdout)["error"]
    allowed = run(cli_env, *args, "--yes", cwd=tmp_path)
    assert allowed.returncode == 0 and not (tmp_path / "old.log").exists()
    hardline = run(cli_env, "call", "terminal", "--yes", "--args", '{"command": "rm -rf ~"}')
    assert hardline.returncode == 1 and json.loads(hardline.stdout)["status"] == "blocked"


def test_command_allowlist_is_honoured(cli_env, home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("command_allowlist:\n  - rm old.log\n")
    (tmp_path / "old.log").write_text("x")
    out = run(cli_env, "call", "terminal", "--args", '{"command": "rm old.log"}', cwd=tmp_path)
    assert out.returncode == 0 and not (tmp_path / "old.log").exists()


def test_large_results_are_spilled_and_the_path_is_told(
    cli_env, home: Path, tmp_path: Path
) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  context_window: 8000\n")  # 8,000-char results
    out = run(cli_env, "call", "terminal", "--args", '{"command": "seq 1 5000"}', cwd=tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("<persisted-output>")
    path = Path(out.stderr.strip().rsplit(" ", 1)[-1])
    assert path.is_relative_to(home / "state" / "results")
    assert "----- output -----\n1\n2\n3\n" in path.read_text()


def test_plugins_list_enable_disable(cli_env, home: Path) -> None:
    plugin = home / "plugins" / "hello"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: hello\nversion: 0.1\n")
    (plugin / "__init__.py").write_text(
        "def register(ctx):\n"
        "    ctx.register_tool('hello_world', 'hello', {'description': 'greets'}, lambda a, **k: 'hi')\n"
    )
    listing = json.loads(run(cli_env, "plugins", "list", "--json").stdout)["plugins"]
    hello = next(p for p in listing if p["key"] == "hello")
    assert (hello["status"], hello["enabled"], hello["source"]) == ("disabled", False, "user")
    assert {p["key"] for p in listing} >= {"hello", "clawclaw", "noisegate"}  # pip plugins too
    out = run(cli_env, "plugins", "enable", "hello")
    assert out.returncode == 0 and "loaded, 1 tool(s)" in out.stdout
    tools = {t["name"]: t for t in json.loads(run(cli_env, "tools", "--json").stdout)["tools"]}
    assert (tools["hello_world"]["source"], tools["hello_world"]["owner"]) == ("plugin", "hello")
    assert run(cli_env, "call", "hello_world").stdout.strip() == "hi"
    assert run(cli_env, "plugins", "disable", "hello").returncode == 0
    tools = {t["name"] for t in json.loads(run(cli_env, "tools", "--json").stdout)["tools"]}
    assert "hello_world" not in tools
    assert run(cli_env, "plugins", "enable", "ghost").returncode == 2


def test_plugins_memory_picks_the_one_provider(cli_env, home: Path) -> None:
    from tests.support.plugins import FIXTURES

    shutil.copytree(FIXTURES / "notes_memory", home / "plugins" / "notes_memory")
    assert "memory provider: builtin" in run(cli_env, "plugins", "memory").stdout
    out = run(cli_env, "plugins", "memory", "notes_memory")
    assert out.returncode == 0 and "tools: notes_add, notes_list" in out.stdout
    assert "provider: notes_memory" in (home / "config.yaml").read_text()
    listing = run(cli_env, "plugins").stdout
    assert "loaded, 0 tool(s), memory provider: notes_add, notes_list" in listing
    (home / "config.yaml").write_text("memory:\n  provider: nottes_memory\n")  # a typo
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and "memory.provider names 'nottes_memory'" in doctor.stdout
    run(cli_env, "plugins", "memory", "notes_memory")
    again = run(cli_env, "plugins", "memory", "ghost")
    assert again.returncode == 2 and "found: notes_memory" in again.stderr
    assert "provider: notes_memory" in (home / "config.yaml").read_text()  # nothing changed


def test_a_failing_plugin_is_reported_and_the_rest_works(cli_env, home: Path) -> None:
    plugin = home / "plugins" / "broken"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("def register(ctx):\n    raise ValueError('no API key')\n")
    home.joinpath("config.yaml").write_text("plugins:\n  enabled: [broken]\n")
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and "plugin broken: ValueError: no API key" in doctor.stdout
    assert run(cli_env, "tools", "--json").returncode == 0


def test_safe_mode_lists_plugins_and_runs_none(cli_env, home: Path) -> None:
    plugin = home / "plugins" / "hello"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("raise SystemExit('this must never run')\n")
    home.joinpath("config.yaml").write_text("plugins:\n  enabled: [hello]\n")
    out = run({**cli_env, "HERMES_SAFE_MODE": "1"}, "plugins")
    assert out.returncode == 0
    assert "[x] hello" in out.stdout and "not loaded: HERMES_SAFE_MODE is set" in out.stdout


def test_doctor_says_which_model_and_why(cli_env, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n  default: openai/gpt-4o-mini\n  provider: openrouter\n"
    )
    (home / ".env").write_text("OPENROUTER_API_KEY=sk-or-do-not-print\nthis line is junk\n")
    out = run(cli_env, "doctor")
    assert (
        "model     openai/gpt-4o-mini via openrouter (https://openrouter.ai/api/v1), key "
        "OPENROUTER_API_KEY from $HERMES_HOME/.env — model from config.yaml model.default, "
        "endpoint from config.yaml model.provider"
    ) in out.stdout
    assert f"{home / '.env'}: line 2 is not KEY=VALUE (skipped)" in out.stdout
    assert "sk-or-do-not-print" not in out.stdout + out.stderr and "junk" not in out.stdout
    (home / ".env").unlink()
    out = run(cli_env, "doctor")
    assert out.returncode == 1
    assert "model     CANNOT BE USED: model.provider is openrouter" in out.stdout
    assert "- model: model.provider is openrouter (OpenRouter) but its API key is missing" in (
        out.stdout
    )


def test_model_flags_are_refused_where_they_mean_nothing(cli_env) -> None:
    out = run(cli_env, "--model", "m", "tools")
    assert out.returncode == 2 and "apply to the workbench and `chat` only" in out.stderr


def test_resume_at_the_top_level_keeps_the_model_flags(cli_env, fake, home: Path) -> None:
    from tests.support.fake_openai import text

    fake.add(text("first"), text("second"))
    flags = ["--base-url", fake.url, "--api-key", fake.api_key, "--model", "resumed-model"]
    assert run(cli_env, "chat", "hello", *flags).returncode == 0
    out = run(cli_env, *flags, "--resume")  # stdin ends at once: the session is reopened only
    assert out.returncode == 0, out.stderr
    assert "[resumed-model via custom" in out.stderr


def test_doctor_names_the_write_roots(cli_env, home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text(f"approvals:\n  write_roots: [{tmp_path}/shared]\n")
    out = run(cli_env, "doctor")
    assert f"writes outside the working directory ask, except under {tmp_path}/shared" in out.stdout


def test_a_dry_run_says_what_a_switch_would_change_and_saves_nothing(cli_env, home: Path) -> None:
    before = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tokens"]
    config = (home / "config.yaml").read_text()
    dry = run(cli_env, "toolsets", "disable", "file", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.endswith("nothing was saved\n")
    change = int(re.search(r"toolset file off: -(\d+) tokens each request", dry.stdout)[1])
    assert (home / "config.yaml").read_text() == config
    assert run(cli_env, "toolsets", "disable", "file").returncode == 0
    after = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tokens"]
    assert before - after == change  # what it said is what saving did
    tool = run(cli_env, "tools", "disable", "terminal", "--dry-run")
    assert re.search(r"^tool terminal off: -\d+ tokens each request", tool.stdout)
    assert run(cli_env, "tools", "disable", "nope", "--dry-run").returncode == 2


def test_doctor_says_approvals_smart_falls_back_to_ask_and_names_bad_hermes_keys(
    cli_env, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("approvals:\n  mode: smart\n")
    out = run(cli_env, "doctor")
    assert "approvals mode ask, " in out.stdout
    assert "approvals.mode: smart (Hermes's default" in out.stdout and "(mode ask)" in out.stdout
    assert "no problems found" in out.stdout  # said, not a problem: ask is the safer one
    (home / "config.yaml").write_text(
        "approvals:\n  mode: sometimes\nagent:\n  max_turns: -1\n"
        "delegation:\n  max_concurrent_children: three\nterminal:\n  timeout: 0\n"
    )
    out = run(cli_env, "doctor")
    assert out.returncode == 1
    for said in (
        "approvals.mode must be manual (ask), smart or off, not 'sometimes': ask is used",
        "agent.max_turns must be 1 or more, not -1: the default is used",
        "delegation.max_concurrent_children must be a whole number (1 or more), not 'three': "
        "the default is used",
        "terminal.timeout must be 1 or more, not 0: the default is used",
    ):
        assert f"  - {said}" in out.stdout, out.stdout


def test_call_says_once_that_approvals_mode_smart_is_ask(
    cli_env, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("approvals:\n  mode: smart\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    out = run(cli_env, "call", "read_file", "--args", '{"path": "a.txt"}', cwd=tmp_path)
    assert out.returncode == 0 and "alpha" in out.stdout
    assert out.stderr.count("approvals.mode: smart") == 1 and "(mode ask)" in out.stderr
    quiet = run(cli_env, "call", "--yes", "read_file", "--args", '{"path": "a.txt"}', cwd=tmp_path)
    assert "smart" not in quiet.stderr  # --yes: approvals are off, nothing falls back
