"""Plugins are probed in a child process first: one that hangs or ends its process never loads here."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.support.plugins import make_home
from workbench.core.config import load_config
from workbench.core.plugins import HookRegistry, PluginManager
from workbench.core.plugins.probe import Prober
from workbench.core.tools.registry import ToolRegistry


def manager(home: Path, timeout: float = 2.0) -> tuple[PluginManager, Prober]:
    prober = Prober(home / "state" / "plugin-probes.json", timeout)
    plugins = PluginManager(
        ToolRegistry(),
        HookRegistry(),
        load_config(home / "config.yaml"),
        home=home,
        entry_points=lambda: [],
        prober=prober,
    )
    plugins.discover()
    plugins.load_enabled()
    return plugins, prober


@pytest.fixture(autouse=True)
def _forget_plugin_modules():
    import sys

    yield
    for name in [m for m in sys.modules if m.startswith("hermes_plugins.")]:
        del sys.modules[name]


def test_a_hanging_and_a_killing_plugin_fail_and_the_others_load(tmp_path: Path) -> None:
    home = make_home(tmp_path, ["looper", "killer", "positional", "raiser"])
    plugins, prober = manager(home)
    states = {s.key: s for s in plugins.list()}
    assert states["looper"].status == "failed"
    assert states["looper"].error.startswith("did not finish loading within 2 s")
    assert states["killer"].status == "failed"
    assert states["killer"].error.startswith("ended the process while loading (exit code 7)")
    assert states["positional"].status == "loaded" and states["positional"].tools
    assert states["raiser"].status == "failed"  # raised: a failure as before, with its traceback
    assert "Traceback" in states["raiser"].traceback
    assert prober.probed == 4


def test_verdicts_are_cached_until_a_file_changes(tmp_path: Path) -> None:
    home = make_home(tmp_path, ["looper", "positional"])
    manager(home)
    cache = json.loads((home / "state" / "plugin-probes.json").read_text())
    assert cache["looper"]["ok"] is False and cache["positional"]["ok"] is True
    plugins, prober = manager(home)  # unchanged: nothing probed, the hang is not waited for
    assert prober.probed == 0
    assert {s.key: s.status for s in plugins.list()} == {"looper": "failed", "positional": "loaded"}
    init = home / "plugins" / "looper" / "__init__.py"
    init.write_text("def register(ctx):\n    pass\n")
    os.utime(init, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a later mtime, surely
    plugins, prober = manager(home)
    assert prober.probed == 1
    assert {s.key: s.status for s in plugins.list()} == {"looper": "loaded", "positional": "loaded"}


def test_enabling_again_probes_again(tmp_path: Path) -> None:
    home = make_home(tmp_path, ["killer"])
    plugins, prober = manager(home)
    assert plugins.states["killer"].status == "failed"
    state = plugins.set_enabled("killer", True)
    assert state.status == "failed" and prober.probed == 2


def test_a_read_only_state_dir_still_probes(tmp_path: Path, make_read_only) -> None:
    home = make_home(tmp_path, ["killer", "positional"])
    (home / "state").mkdir()
    make_read_only(home / "state")
    plugins, _ = manager(home)
    assert {s.key: s.status for s in plugins.list()} == {"killer": "failed", "positional": "loaded"}


def test_a_daemon_started_in_the_probe_ends_with_the_probe(tmp_path: Path) -> None:
    """The probe ran register, which started a daemon; the probe ended well, and its
    daemon with it: the one left is the plugin's here, listed and stopped with the app."""
    from tests.support.procs import alive, processes_with

    home = make_home(tmp_path, ["daemon"])
    plugins, prober = manager(home)
    state = plugins.states["daemon"]
    assert prober.probed == 1 and state.status == "loaded"
    running = [p for p in processes_with(str(home / "plugins/daemon/__init__.py")) if alive(p)]
    assert running == [c.pid for c in state.processes]
    plugins.stop()
