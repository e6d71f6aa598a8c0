"""Fault injection on the headless commands: broken config, plugins and state never hang or crash them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import BIN, run
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.yaml_bomb import alias_bomb


@pytest.mark.e2e  # the installed command as a process: ten of them at once
def test_ten_concurrent_plugin_enables_are_all_saved(cli_env, home: Path) -> None:
    for n in range(10):
        plugin = home / "plugins" / f"p{n}"
        plugin.mkdir(parents=True)
        (plugin / "__init__.py").write_text("def register(ctx):\n    pass\n")
    procs = [
        subprocess.Popen(
            [str(BIN / "hermes-tui"), "plugins", "enable", f"p{n}"],
            env=cli_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(10)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    listing = json.loads(run(cli_env, "plugins", "list", "--json").stdout)["plugins"]
    enabled = {p["key"] for p in listing if p["enabled"]}
    assert enabled >= {f"p{n}" for n in range(10)}


def test_an_alias_bomb_config_gives_defaults_and_a_clear_error(cli_env, home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text(alias_bomb())
    tools = run(cli_env, "tools", "--json")
    assert tools.returncode == 0
    problems = json.loads(tools.stdout)["problems"]
    assert any("config.yaml: expands to more than 100,000 values" in p for p in problems)
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and "config.yaml: expands to more than" in doctor.stdout
    assert "Traceback" not in doctor.stderr + tools.stderr


def broken_plugins(home: Path) -> None:
    """A plugin whose import never ends and one whose register ends the process, enabled."""
    import shutil

    from tests.support.plugins import FIXTURES

    for name in ("looper", "killer"):
        shutil.copytree(FIXTURES / name, home / "plugins" / name)
    (home / "config.yaml").write_text("plugins:\n  enabled: [looper, killer]\n  load_timeout: 2\n")


def test_a_hanging_or_killing_plugin_never_stops_a_command(cli_env, home: Path) -> None:
    broken_plugins(home)
    tools = run(cli_env, "tools", "--json")
    assert tools.returncode == 0, tools.stderr
    problems = "\n".join(json.loads(tools.stdout)["problems"])
    assert "did not finish loading within 2 s" in problems
    assert "ended the process while loading (exit code 7)" in problems
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and "looper (user): FAILED: did not finish" in doctor.stdout
    assert "killer (user): FAILED: ended the process" in doctor.stdout
    listing = run(cli_env, "toolsets", "list")
    assert listing.returncode == 0 and "[x] file" in listing.stdout


def test_disabling_never_runs_plugin_code_in_safe_mode_too(cli_env, home: Path) -> None:
    broken_plugins(home)
    (home / "config.yaml").write_text("plugins:\n  enabled: [looper, killer]\n")  # 10 s limit
    out = run(cli_env, "plugins", "disable", "looper")
    assert out.returncode == 0 and "looper: disabled" in out.stdout
    safe = {**cli_env, "HERMES_SAFE_MODE": "1"}
    out = run(safe, "plugins", "disable", "killer")
    assert out.returncode == 0 and "killer: disabled" in out.stdout
    listing = json.loads(run(safe, "plugins", "list", "--json").stdout)["plugins"]
    states = {p["key"]: (p["enabled"], p["status"]) for p in listing}
    assert states["looper"] == states["killer"] == (False, "disabled")
    assert not (home / "state" / "plugin-probes.json").exists()  # nothing was probed
    enabled = run(safe, "plugins", "enable", "looper")
    assert enabled.returncode == 0 and "not loaded: HERMES_SAFE_MODE is set" in enabled.stdout


MCP_FIXTURES = Path(__file__).resolve().parents[1] / "core" / "mcp"


def mcp_config(home: Path, markers: Path, wait: int = 2, **servers: str) -> None:
    """`wait`: mcp_discovery_timeout, short for the servers that never answer; a server that
    does answer is waited for only until it has."""
    import sys

    lines = [f"mcp_discovery_timeout: {wait}", "mcp_servers:"]
    for name, script in servers.items():
        lines += [
            f"  {name}:",
            f"    command: {sys.executable}",
            f"    args: [{MCP_FIXTURES / script}]",
            f"    env: {{FIXTURE_MARKERS: {markers}}}",
        ]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("\n".join(lines) + "\n")


def test_commands_that_need_no_mcp_never_start_it(cli_env, home: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    mcp_config(home, markers, silent="silent_server.py")
    (tmp_path / "a.txt").write_text("alpha\n")
    for args in (
        ["call", "read_file", "--args", '{"path": "a.txt"}'],
        ["toolsets", "list"],
        ["plugins", "list"],
        ["sessions"],
    ):
        out = run(cli_env, *args, cwd=tmp_path)
        assert out.returncode == 0, (args, out.stderr)
    assert list(markers.iterdir()) == []  # the server was never started


def test_a_server_that_never_answers_is_named_with_what_it_waits_for(
    cli_env, home: Path, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    # the seconds said are those measured since the client asked (a second or two, as the
    # start-up took), so the test does not name them
    mcp_config(home, markers, silent="silent_server.py")
    doctor = run(cli_env, "doctor")
    assert re.search(r"silent: starting — no answer to initialize after \d+ s", doctor.stdout)
    call = run(cli_env, "call", "mcp__silent__ping")
    assert re.search(
        r"MCP server silent is not ready: no answer to initialize after \d+ s", call.stderr
    )
    tools = run(cli_env, "tools", "--json")
    assert any("no answer to initialize" in p for p in json.loads(tools.stdout)["problems"])


def test_a_server_printing_garbage_costs_one_line(cli_env, home: Path, tmp_path: Path) -> None:
    mcp_config(home, tmp_path, wait=60, noisy="noisy_server.py")  # ready however loaded
    call = run(cli_env, "call", "mcp__noisy__ping")
    assert call.returncode == 0 and json.loads(call.stdout) == {"result": "pong"}
    assert call.stderr == ""  # nothing of the SDK's parse errors reaches the terminal
    doctor = run(cli_env, "doctor")
    assert "1000 line(s) of its output were not JSON-RPC messages" in doctor.stdout
    assert len(doctor.stdout.splitlines()) < 40 and "Traceback" not in doctor.stdout


def test_chat_does_not_wait_for_a_lazy_server(
    cli_env, home: Path, tmp_path: Path, fake: FakeOpenAI
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    mcp_config(home, markers, silent="silent_server.py")
    env = {**cli_env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": fake.api_key}
    fake.add(text("hi"), text("hi"))
    waited = run(env, "chat", "hello", cwd=tmp_path)
    assert "MCP server silent is not ready" in waited.stderr  # waited 2 s, then said
    config = home / "config.yaml"
    config.write_text(config.read_text() + "    lazy: true\n")
    lazy = run(env, "chat", "hello", cwd=tmp_path)
    assert lazy.returncode == 0 and lazy.stdout.strip() == "hi"
    assert "not ready" not in lazy.stderr and "unknown key" not in lazy.stderr
