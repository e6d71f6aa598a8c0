"""Fault injection on the headless commands: broken config, plugins and state never hang or crash them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import BIN
from tests.core.test_yaml_file import alias_bomb
from tests.test_cli import run


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

    from tests.core.plugins.test_manager import FIXTURES

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
