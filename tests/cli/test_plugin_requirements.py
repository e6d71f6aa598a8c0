"""A plugin that pins another `mcp` is said before it breaks anything."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import cli
from tests.support.mcp import FIXTURE, shadow_sdk


def plugin(home: Path, name: str, requirement: str) -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(
        f'name: {name}\nversion: "1.0"\npip_dependencies:\n  - "{requirement}"\n'
    )
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")


def test_doctor_and_plugins_say_the_pinned_sdk(cli_env, home: Path, tmp_path: Path) -> None:
    plugin(home, "pinned", "mcp<2")
    plugin(home, "fitting", "mcp>=2")
    doctor = cli.run(cli_env, "doctor", cwd=tmp_path)
    assert doctor.returncode == 1
    assert "plugin pinned: mcp<2 excludes mcp " in doctor.stdout
    assert "plugin fitting" not in doctor.stdout
    listing = cli.run(cli_env, "plugins", "--json", cwd=tmp_path)
    rows = {row["key"]: row for row in json.loads(listing.stdout)["plugins"]}
    assert len(rows["pinned"]["conflicts"]) == 1
    assert rows["fitting"]["conflicts"] == []
    plain = cli.run(cli_env, "plugins", cwd=tmp_path).stdout.splitlines()
    below = plain[next(i for i, line in enumerate(plain) if " pinned " in line) + 1 :]
    assert below[0].strip() == f"conflict: {rows['pinned']['conflicts'][0]}"
    assert not [line for line in plain if "conflict:" in line and line not in below[:1]]


def test_a_replaced_sdk_is_each_servers_reason(
    cli_env, home: Path, tmp_path: Path, monkeypatch
) -> None:
    """What `pip install` of a plugin pinning mcp<2 leaves, as metadata ahead of the real SDK
    on the path (the real one stays installed and importable): every server fails with the
    reason and its fix, in tools --json and doctor, instead of an import error."""
    shadow = shadow_sdk(tmp_path / "shadow")
    monkeypatch.syspath_prepend(str(shadow))  # a run in this process
    env = {**cli_env, "PYTHONPATH": str(shadow)}  # a run as a process
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  fx:\n    command: {FIXTURE[0]}\n    args: [{FIXTURE[1]}]\n"
    )
    problems = json.loads(cli.run(env, "tools", "--json", cwd=tmp_path).stdout)["problems"]
    said = next(p for p in problems if p.startswith("MCP server fx: failed: "))
    assert "the installed MCP SDK is mcp 1.9.0" in said and "fix: pip install 'mcp" in said
    doctor = cli.run(env, "doctor", cwd=tmp_path)
    assert doctor.returncode == 1 and said in doctor.stdout
