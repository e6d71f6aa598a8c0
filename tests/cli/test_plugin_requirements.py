"""A plugin that pins another `mcp` is said before it breaks anything."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import cli


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
