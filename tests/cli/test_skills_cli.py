"""The skills tools from the command line: listed with their toolset and availability, and
left out of the bundled model's lean profile until `skills` is switched on by name."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run

SKILLS = {"skills_list", "skill_view", "skill_manage"}


def test_tools_json_lists_the_skills_tools(cli_env, home: Path) -> None:
    out = run(cli_env, "tools", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)["tools"]}
    for name in SKILLS:
        assert rows[name]["toolset"] == "skills" and rows[name]["available"] is True
        assert rows[name]["source"] == "builtin" and rows[name]["tokens"] > 0
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [hermes-cli]\n")
    doctor = run(cli_env, "doctor")
    assert "not in hermes-tui" not in doctor.stdout or "skills" not in doctor.stdout


def test_the_lean_profile_keeps_its_short_set_until_skills_is_named(cli_env, home) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("platform_toolsets:\n  cli: [hermes-cli]\n")
    offered = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tools"]
    assert "read_file" in offered and not SKILLS & set(offered)  # the bundled model: lean
    assert run(cli_env, "toolsets", "enable", "skills").returncode == 0
    offered = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tools"]
    assert set(offered) >= SKILLS
    # a model that is not lean gets them with hermes-cli, as in Hermes
    (home / "config.yaml").write_text(
        "platform_toolsets:\n  cli: [hermes-cli]\nmodel:\n  local: qwen2.5-coder-1.5b\n  lean: false\n"
    )
    offered = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tools"]
    assert set(offered) >= SKILLS
