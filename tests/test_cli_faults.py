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
