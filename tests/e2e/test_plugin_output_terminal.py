"""A plugin printing in the workbench: the screen stays the app's, the plugin's details
show what it printed and the process it started, which ends with the app."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.procs import alive, processes_with
from tests.support.tmux import keys, screen, wait_for, wait_until

pytestmark = pytest.mark.e2e

PLUGIN = """
import os, subprocess, sys

def shout(args, **kw):
    os.write(1, b"CORRUPT-FD-IN-TOOL\\n")
    print("CORRUPT-PRINT-IN-TOOL")
    return "shouted"

def register(ctx):
    os.write(1, b"CORRUPT-FD\\n")
    print("CORRUPT-PRINT")
    sys.__stdout__.write("CORRUPT-DUNDER\\n")
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", __file__])
    ctx.register_tool("loud_shout", "loud", {"description": "shouts",
                      "parameters": {"type": "object", "properties": {}}}, shout)
"""


def test_a_printing_plugin_leaves_the_screen_alone(tmux_run, home: Path) -> None:
    plugin = home / "plugins" / "loud"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: loud\n")
    (plugin / "__init__.py").write_text(PLUGIN)
    (home / "config.yaml").write_text("plugins:\n  enabled: [loud]\n")
    # the window's size said outright: under pytest the app may measure 80x24 (main too)
    session = tmux_run(env_prefix="COLUMNS=120 LINES=40")
    wait_for(session, "loud_shout", "F2 runs a tool")  # the last line: the whole screen drawn
    keys(session, "/", *"loud_shout", "Enter", "F2")
    wait_for(session, "Run loud_shout")
    keys(session, "C-r")
    wait_for(session, "shouted", "ok in")
    keys(session, "F3", "Down")  # Sources: the plugins' rows, the second one is loud
    shown = wait_for(session, "stdout: CORRUPT-FD", "stdout: CORRUPT-PRINT-IN-TOOL", "process ")
    assert "stdout: CORRUPT-DUNDER" in shown and "stdout: CORRUPT-FD-IN-TOOL" in shown
    assert not [line for line in shown.splitlines() if "CORRUPT" in line and "stdout:" not in line]
    assert [p for p in processes_with(str(plugin / "__init__.py")) if alive(p)]
    keys(session, "C-q")
    wait_for(session, "EXIT=0")
    assert "CORRUPT" not in screen(session)
    wait_until(
        lambda: not [p for p in processes_with(str(plugin / "__init__.py")) if alive(p)],
        "the plugin's daemon stopped with the app",
    )
