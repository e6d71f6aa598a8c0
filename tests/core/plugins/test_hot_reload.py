"""Hot reload with the real watcher: files edited on disk while it runs."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.plugins import FIXTURES, make_home, make_manager
from tests.support.waiting import PATIENCE
from workbench.core.plugins import HookRegistry, PluginChanged
from workbench.core.plugins.watcher import HotReloader
from workbench.core.tools.registry import ToolRegistry

PLUGIN = """
def register(ctx):
{body}
"""


def wait_until(predicate: Callable[[], bool], timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def write_plugin(path: Path, *tools: tuple[str, str]) -> None:
    body = "\n".join(
        f"    ctx.register_tool({name!r}, 'live', {{'description': {name!r}}}, lambda a, **k: {result!r})"
        for name, result in tools
    )
    path.write_text(PLUGIN.format(body=body or "    pass"))


@pytest.fixture
def live(tmp_path: Path, reg: ToolRegistry):
    home = make_home(tmp_path, [], plugins={"enabled": ["live", "multi"]})
    (home / "plugins" / "live").mkdir()
    (home / "plugins" / "live" / "plugin.yaml").write_text("name: live\n")
    write_plugin(home / "plugins" / "live" / "__init__.py", ("live_a", "a v1"), ("live_b", "b v1"))
    shutil.copytree(FIXTURES / "multi", home / "plugins" / "multi")
    events: list[PluginChanged] = []
    manager = make_manager(home, reg, HookRegistry(), on_event=events.append)
    reloader = HotReloader(manager)
    reloader.start()
    assert reloader.ready.wait(PATIENCE)
    yield manager, home / "plugins", events
    reloader.stop()


def test_an_edit_swaps_the_tools_and_names_the_change(live, reg: ToolRegistry) -> None:
    manager, plugins, events = live
    assert reg.dispatch("live_a", {}) == "a v1"
    write_plugin(plugins / "live" / "__init__.py", ("live_a", "a v2"), ("live_c", "c v1"))
    wait_until(lambda: reg.get_entry("live_c") is not None)
    assert reg.dispatch("live_a", {}) == "a v2"
    assert reg.get_entry("live_b") is None
    change = [e for e in events if e.key == "live"][-1]
    assert (change.status, change.added, change.removed, change.replaced) == (
        "reloaded",
        ("live_c",),
        ("live_b",),
        ("live_a",),
    )
    assert (
        manager.states["live"].last_change
        == "reloaded: added live_c; removed live_b; replaced live_a"
    )


def test_a_broken_edit_keeps_the_old_tools_and_shows_the_failure(live, reg: ToolRegistry) -> None:
    manager, plugins, _ = live
    (plugins / "live" / "__init__.py").write_text("def register(ctx)\n    pass\n")  # syntax error
    wait_until(lambda: manager.states["live"].status == "failed")
    assert "SyntaxError" in manager.states["live"].error
    assert reg.dispatch("live_a", {}) == "a v1" and reg.get_entry("live_b") is not None
    write_plugin(plugins / "live" / "__init__.py", ("live_a", "a fixed"))
    wait_until(lambda: manager.states["live"].status == "loaded")
    assert reg.dispatch("live_a", {}) == "a fixed" and reg.get_entry("live_b") is None


def test_a_burst_of_saves_reloads_once(live, reg: ToolRegistry) -> None:
    """Saves made while the reloader is busy are one reload, of the last version. The burst
    is written while the reloader is held in another plugin's reload, so it does not depend
    on the saves coming faster than the watcher's quiet window (on a busy machine they may
    not)."""
    manager, plugins, events = live
    busy, release = threading.Event(), threading.Event()

    def held(event: PluginChanged) -> None:  # called on the reloader's thread
        events.append(event)
        if event.key == "multi":
            busy.set()
            release.wait(PATIENCE)

    manager.on_event = held
    loads = manager.states["live"].loads
    (plugins / "multi" / "helper.py").write_text('GREETING = "hello v2"\n')
    assert busy.wait(PATIENCE)  # the reloader is in multi's reload
    for version in range(5):
        write_plugin(plugins / "live" / "__init__.py", ("live_a", f"a burst {version}"))
    release.set()
    wait_until(lambda: reg.dispatch("live_a", {}) == "a burst 4")
    # every save has been handled once a change made after them has been
    manager.on_event = events.append
    (plugins / "multi" / "helper.py").write_text('GREETING = "hello v3"\n')
    wait_until(lambda: reg.dispatch("multi_greet", {}) == "hello v3")
    assert manager.states["live"].loads == loads + 1


def test_editing_a_module_the_plugin_imports_reloads_it(live, reg: ToolRegistry) -> None:
    _, plugins, _ = live
    assert reg.dispatch("multi_greet", {}) == "hello v1"
    (plugins / "multi" / "helper.py").write_text('GREETING = "hello v2"\n')
    wait_until(lambda: reg.dispatch("multi_greet", {}) == "hello v2")


def test_a_deleted_plugin_directory_removes_its_tools(live, reg: ToolRegistry) -> None:
    manager, plugins, _ = live
    shutil.rmtree(plugins / "live")
    wait_until(lambda: reg.get_entry("live_a") is None)
    assert "live" not in manager.states and reg.get_entry("multi_greet") is not None


def test_a_running_call_finishes_on_the_old_handler(live, reg: ToolRegistry) -> None:
    _, plugins, _ = live
    # the old handler says it started, then holds until the test lets it end
    started, release = plugins.parent / "started", plugins.parent / "release"
    (plugins / "live" / "__init__.py").write_text(
        "import pathlib, time\n\ndef register(ctx):\n"
        "    def slow(a, **k):\n"
        f"        pathlib.Path({str(started)!r}).touch()\n"
        f"        while not pathlib.Path({str(release)!r}).exists():\n"
        "            time.sleep(0.01)\n"
        "        return 'old'\n"
        "    ctx.register_tool('live_slow', 'live', {'description': 's'}, slow)\n"
    )
    wait_until(lambda: reg.get_entry("live_slow") is not None)
    held = reg.get_entry("live_slow").handler
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(reg.dispatch("live_slow", {})))
    worker.start()
    wait_until(started.exists)
    (plugins / "live" / "__init__.py").write_text(
        "def register(ctx):\n    ctx.register_tool('live_slow', 'live', {'description': 's'}, lambda a, **k: 'new')\n"
    )
    # swapped while the call runs (asking the tool itself would reach the held handler)
    wait_until(lambda: (e := reg.get_entry("live_slow")) is not None and e.handler is not held)
    release.touch()
    worker.join()
    assert result == ["old"] and reg.dispatch("live_slow", {}) == "new"
