"""The command line loads no Textual: `hermes-tui --help` and a headless command import
nothing of the TUI but its launcher (which imports no Textual until the workbench runs), and
no MCP library while no server is configured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import contextlib, io, json, sys
from workbench.__main__ import main
loaded = {}
for argv in (["--help"], ["tools", "--json"]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    names = {m.split(".")[0] for m in sys.modules} & {"textual", "rich", "textual_serve", "mcp"}
    tui = {m for m in sys.modules if m.startswith("workbench.tui.")}
    loaded[argv[0]] = sorted(names | tui)
print(json.dumps(loaded))
"""


def test_the_command_line_loads_no_textual_and_no_mcp(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HERMES_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "--help": ["workbench.tui.launch"],
        "tools": ["workbench.tui.launch"],
    }
