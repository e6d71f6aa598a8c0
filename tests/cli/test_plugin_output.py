"""A command's stdout is hermes-tui's alone: what plugins print goes to the log and to the
plugin's output, the processes a plugin starts as it loads are listed and stopped with
hermes-tui, and a plugin's key is Hermes's. Each run is a process of its own (fd 1 is the
process's)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.cli import BIN, run
from tests.support.plugins import FIXTURES
from tests.support.procs import alive, processes_with, wait_until

PRINTERS = ["printer", "fd_writer", "dunder_writer"]


def _home_with(home: Path, names: list[str], enabled: list[str] | None = None) -> None:
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(FIXTURES / name, home / "plugins" / name)
    config = {"plugins": {"enabled": names if enabled is None else enabled}}
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def _plugins(cli_env: dict[str, str]) -> dict[str, dict]:
    out = run(cli_env, "plugins", "--json", process=True)
    assert out.returncode == 0, out.stderr
    return {p["key"]: p for p in json.loads(out.stdout)["plugins"]}  # parses: nothing else


def _log(home: Path) -> str:
    return (home / "logs" / "hermes-tui.log").read_text()


def _daemons(plugin: Path) -> list[int]:
    """The daemon fixture's processes still running (its file is on their command line)."""
    return [pid for pid in processes_with(str(plugin / "__init__.py")) if alive(pid)]


def test_what_plugins_print_never_reaches_the_json(cli_env, home: Path) -> None:
    _home_with(home, PRINTERS)
    tools = run(cli_env, "tools", "--json", process=True)
    assert tools.returncode == 0, tools.stderr
    names = {t["name"] for t in json.loads(tools.stdout)["tools"]}  # the JSON parses
    assert {"printer_shout", "fd_writer_write", "dunder_writer_write"} <= names
    plugins = _plugins(cli_env)
    assert plugins["printer"]["output"] == ["printer: imported", "printer: registering"]
    assert plugins["fd_writer"]["output"] == ["fd_writer: registering"]
    assert plugins["dunder_writer"]["output"] == ["dunder_writer: registering"]
    log = _log(home)
    for line in ("printer: imported", "fd_writer: registering", "dunder_writer: registering"):
        assert f"printed: {line}" in log
    assert "plugin printer printed: printer: registering" in log  # by the plugin that did


@pytest.mark.parametrize(
    ("tool", "result", "printed"),
    [
        ("printer_shout", "shouted", "plugin printer printed: printer: in its tool"),
        ("fd_writer_write", "written", "plugin fd_writer printed: fd_writer: in its tool"),
        ("dunder_writer_write", "written", "dunder_writer printed: dunder_writer: in its tool"),
    ],
)
def test_a_tools_result_is_all_call_prints(cli_env, home: Path, tool, result, printed) -> None:
    _home_with(home, PRINTERS)
    out = run(cli_env, "call", tool, process=True)
    assert (out.returncode, out.stdout) == (0, result + "\n"), out.stderr
    assert printed in _log(home)
    if tool == "printer_shout":  # its hook ran after the call, as its own code too
        assert "plugin printer printed: printer: after a call" in _log(home)


def test_a_daemon_started_in_register_is_listed_and_stopped(cli_env, home: Path) -> None:
    _home_with(home, ["daemon"])
    plugin = home / "plugins" / "daemon"
    listed = _plugins(cli_env)["daemon"]
    (process,) = listed["processes"]
    assert process["running"] and str(plugin) in process["command"]
    assert listed["status"] == "loaded"
    # hermes-tui stopped and reaped it as it ended (the probe's copy is gone too)
    assert not Path(f"/proc/{process['pid']}").exists()
    assert _daemons(plugin) == []
    text = run(cli_env, "plugins", process=True).stdout
    assert "1 process(es) it started running" in text and "process " in text
    assert _daemons(plugin) == []


def test_a_daemon_is_stopped_when_hermes_tui_is_terminated(cli_env, home: Path) -> None:
    _home_with(home, ["daemon"])
    plugin = home / "plugins" / "daemon"
    run(cli_env, "plugins", process=True)  # probed once: the next run starts one daemon
    chat = subprocess.Popen(  # waits for a line on stdin, with the plugin loaded
        [str(BIN / "hermes-tui"), "chat", "--base-url", "http://127.0.0.1:9", "--model", "m"],
        env=cli_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _daemons(plugin), what="the daemon started as chat loaded")
        chat.send_signal(signal.SIGTERM)
        assert chat.wait(30) == -signal.SIGTERM
    finally:
        chat.kill()
        chat.wait()
    assert _daemons(plugin) == []


def test_disabling_by_manifest_name_writes_what_hermes_reads(cli_env, home: Path) -> None:
    _home_with(home, ["hermes-plugin-x"], enabled=["hermes-plugin-x"])  # its folder's name
    assert _plugins(cli_env)["x"]["status"] == "loaded"  # keyed by its manifest, as in Hermes
    out = run(cli_env, "plugins", "disable", "x", process=True)
    assert out.returncode == 0 and out.stdout.startswith("plugin x: disabled"), out.stderr
    config = yaml.safe_load((home / "config.yaml").read_text())
    # `hermes plugins disable x` (Hermes 0.19.0) writes x to plugins.disabled; its loader
    # skips a flat plugin whose manifest's name is there
    assert config["plugins"] == {"enabled": [], "disabled": ["x"]}
    assert _plugins(cli_env)["x"]["status"] == "disabled"
    tools = json.loads(run(cli_env, "tools", "--json", process=True).stdout)["tools"]
    assert "x_tool" not in {t["name"] for t in tools}
    again = run(cli_env, "plugins", "enable", "hermes-plugin-x", process=True)
    assert again.returncode == 0 and again.stdout.startswith("plugin x: enabled")
    config = yaml.safe_load((home / "config.yaml").read_text())
    assert config["plugins"] == {"enabled": ["x"], "disabled": []}


def test_print_is_kept_from_the_json_when_main_runs_in_a_test(cli_env, home: Path) -> None:
    """A test calling main in its own process: print() is kept out, fd 1 stays the test's."""
    _home_with(home, ["printer"])
    out = run(cli_env, "tools", "--json")
    assert json.loads(out.stdout)["tools"] and "printer:" not in out.stdout
    assert "plugin printer printed: printer: registering" in _log(home)
