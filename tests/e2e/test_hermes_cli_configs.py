"""Hermes 0.19.0's own command line writes the config; hermes-tui reads what it wrote.

`make hermes-cli` (a prerequisite of `make test`) installs Hermes into .cache/hermes-cli.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import cli
from tests.support.mcp import REAL_SERVERS

HERMES = Path(__file__).resolve().parents[2] / ".cache" / "hermes-cli" / "bin" / "hermes"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not HERMES.exists(), reason="Hermes's CLI is not installed: make hermes-cli"
    ),
]


def hermes(env: dict[str, str], cwd: Path, *args: str, answer: str = "") -> str:
    done = subprocess.run(
        [str(HERMES), *args],
        env=env,
        cwd=cwd,
        input=answer,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def written(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """A home whose config Hermes's own commands wrote."""
    work = tmp_path / "work"
    work.mkdir()
    hermes(cli_env, work, "tools", "disable", "todo", "memory", "web")
    hermes(cli_env, work, "config", "set", "terminal.timeout", "77")
    # Hermes tries the server with an SDK it does not have here, asks to save anyway, and
    # saves it switched off; its own `config set` switches it on.
    hermes(
        cli_env, work, "mcp", "add", "time", "--command", str(REAL_SERVERS["time"]), answer="y\n"
    )
    hermes(cli_env, work, "config", "set", "mcp_servers.time.enabled", "true")
    return cli_env


def tools_json(env: dict[str, str], cwd: Path) -> dict:
    done = cli.run(env, "tools", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_toolsets_hermes_disabled_are_off_here(written: dict[str, str], tmp_path: Path) -> None:
    listing = tools_json(written, tmp_path)
    by_name = {tool["name"]: tool for tool in listing["tools"]}
    for name in ("web_search", "web_extract"):
        assert by_name[name]["offered"] is False, by_name[name]
    assert by_name["terminal"]["offered"] is True
    # the agent's own tools are not registry tools; doctor says which of them are off
    done = cli.run(written, "doctor", cwd=tmp_path)
    assert "the agent's own off: memory, todo" in done.stdout, done.stdout


def test_the_server_hermes_added_is_ours_to_start(written: dict[str, str], tmp_path: Path) -> None:
    listing = tools_json(written, tmp_path)
    time_tools = [
        t for t in listing["tools"] if t["source"] == "mcp" and t["toolset"] == "mcp-time"
    ]
    names = {t["name"] for t in time_tools}
    assert any(name.endswith("get_current_time") for name in names), listing["problems"]


def test_doctor_reads_hermes_config_without_errors(written: dict[str, str], tmp_path: Path) -> None:
    done = cli.run(written, "doctor", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no problems found" in done.stdout
    # Hermes's stock toolsets hermes-tui lacks are named once, as not here, not as errors
    assert "not in hermes-tui: " in done.stdout
    assert "unknown toolset" not in done.stdout
    assert "1 server(s) configured" in done.stdout
