"""Plugins: loading 50 directory plugins (ours beside Hermes's discover_plugins), and hot reload.

* Discovering and loading 50 directory plugins: under 300 ms, once each has been probed
  (the first load probes them all in one child process; the verdicts are then cached).
* From a plugin file's save to its new tools in the registry: under 1 s median, the
  watcher's debounce and the probe of the edited plugin in a child process included
  (Hermes has no hot reload).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import fmt, report

PLUGINS = 50
OURS = """
import time
from pathlib import Path
from workbench.core.config import load_config
from workbench.core.plugins import HookRegistry, PluginManager
from workbench.core.plugins.probe import Prober
from workbench.core.tools.registry import ToolRegistry
home = Path({home!r})
start = time.perf_counter()
manager = PluginManager(ToolRegistry(), HookRegistry(), load_config(home / "config.yaml"), home=home,
                        entry_points=lambda: [], prober=Prober(home / "state" / "probes.json"))
manager.discover()
manager.load_enabled()
took = time.perf_counter() - start
assert sum(s.status == "loaded" for s in manager.list()) == {n}, [s.error for s in manager.list()]
print(took)
"""
HERMES = """
import time
from hermes_cli import plugins
from tools.registry import registry
start = time.perf_counter()
plugins.discover_plugins(force=True)
took = time.perf_counter() - start
assert sum(n.startswith("bench_plugin_") for n in registry.get_all_tool_names()) == {n}
print(took)
"""


def make_plugins(home: Path) -> None:
    names = []
    for i in range(PLUGINS):
        directory = home / "plugins" / f"plugin_{i:02d}"
        directory.mkdir(parents=True)
        (directory / "plugin.yaml").write_text(f"name: plugin_{i:02d}\nversion: 1.0\n")
        (directory / "__init__.py").write_text(
            "def register(ctx):\n"
            f"    ctx.register_tool('bench_plugin_{i:02d}', 'plugin_{i:02d}', "
            "{'description': 'bench'}, lambda a, **k: 'ok')\n"
        )
        names.append(f"plugin_{i:02d}")
    (home / "config.yaml").write_text("plugins:\n  enabled: [" + ", ".join(names) + "]\n")


def in_process(code: str, home: Path, runs: int = 5) -> float:
    env = {**os.environ, "HERMES_HOME": str(home)}
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout.split()[-1]
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def hot_reload_latency(home: Path, saves: int = 15) -> float:
    from workbench.core.config import load_config
    from workbench.core.plugins import HookRegistry, PluginManager
    from workbench.core.plugins.probe import Prober
    from workbench.core.plugins.watcher import HotReloader
    from workbench.core.tools.registry import ToolRegistry

    registry = ToolRegistry()
    manager = PluginManager(
        registry,
        HookRegistry(),
        load_config(home / "config.yaml"),
        home=home,
        entry_points=lambda: [],
        prober=Prober(home / "state" / "probes.json"),
    )
    manager.discover()
    manager.load_enabled()
    reloader = HotReloader(manager)
    reloader.start()
    reloader.ready.wait(5)
    target = home / "plugins" / "plugin_00" / "__init__.py"
    latencies = []
    for version in range(saves):
        name = f"hot_{version}"
        start = time.perf_counter()
        target.write_text(
            f"def register(ctx):\n    ctx.register_tool({name!r}, 'p', {{'description': 'x'}}, "
            "lambda a, **k: 'x')\n"
        )
        while registry.get_entry(name) is None:
            time.sleep(0.002)
            if time.perf_counter() - start > 10:
                raise TimeoutError("the reload never happened")
        latencies.append(time.perf_counter() - start)
        time.sleep(0.2)
    reloader.stop()
    return statistics.median(latencies)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-plugins-") as tmp:
        home = Path(tmp)
        make_plugins(home)
        print(f"plugins: {PLUGINS} directory plugins, and hot reload")
        cold = in_process(OURS.format(home=str(home), n=PLUGINS), home, runs=1)
        print(f"  (first load, probing all {PLUGINS} in a child process: {fmt(cold)})")
        ours = in_process(OURS.format(home=str(home), n=PLUGINS), home)
        try:
            peer = in_process(HERMES.format(n=PLUGINS), home)
        except subprocess.CalledProcessError as exc:
            print(f"  (hermes run failed: {exc.stderr.strip().splitlines()[-1:]})")
            peer = None
        ok_load = report(f"discover and load {PLUGINS} plugins", ours, peer, "< 300 ms", ours < 0.3)
        latency = hot_reload_latency(home)
        ok_reload = latency < 1.0
        print(
            f"  {'save -> new tools in the registry (median)':<46} ours {fmt(latency)}  hermes    (none)  "
            f"target < 1 s: {'MET' if ok_reload else 'MISSED'}"
        )
    return 0 if ok_load and ok_reload else 1


if __name__ == "__main__":
    sys.exit(main())
