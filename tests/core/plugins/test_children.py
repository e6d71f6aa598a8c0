"""The processes a plugin starts as it loads are its own: found, listed, and stopped."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.plugins import make_home, make_manager
from tests.support.procs import alive, processes_with, wait_until
from workbench.core.plugins import HookRegistry, children

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]

pytestmark = pytest.mark.skipif(not children.supported(), reason="needs Linux's /proc")


@pytest.fixture(autouse=True)
def _forget_plugin_modules():
    yield
    for name in [m for m in sys.modules if m.startswith("hermes_plugins.")]:
        del sys.modules[name]


def _gone(process: subprocess.Popen) -> bool:
    """Ended and reaped by hermes-tui (no zombie left for its Popen to collect)."""
    return not Path(f"/proc/{process.pid}").exists()


def test_children_born_inside_are_found_with_theirs_and_stopped() -> None:
    """The loading thread's, a thread's it started, a shell's child; never one of a thread
    hermes-tui had running (an MCP server starting meanwhile) or one started before."""
    before = subprocess.Popen(SLEEP)
    go, stay, theirs = threading.Event(), threading.Event(), []

    def hermes_tuis_thread() -> None:
        go.wait()
        theirs.append(subprocess.Popen(SLEEP))
        stay.wait()

    other = threading.Thread(target=hermes_tuis_thread)
    other.start()
    spawned: list[subprocess.Popen] = []
    try:
        with children.watching() as born:
            direct = subprocess.Popen(SLEEP)
            shell = subprocess.Popen(
                ["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(600)'; :"]
            )
            started = threading.Thread(target=lambda: spawned.append(subprocess.Popen(SLEEP)))
            started.start()
            started.join()
            go.set()
            wait_until(lambda: theirs, what="the other thread's process")
        pids = {c.pid for c in born}
        assert {direct.pid, shell.pid, spawned[0].pid} <= pids
        assert before.pid not in pids and theirs[0].pid not in pids
        assert len(pids) == 4 and all(c.running for c in born)  # the shell's child too
        assert any(c.command.startswith("sh -c") for c in born)
        stopped = children.stop(born)
        assert {c.pid for c in stopped} == pids
        assert _gone(direct) and _gone(shell) and _gone(spawned[0])
        assert not any(c.running for c in born)
        assert before.poll() is None and theirs[0].poll() is None  # never touched
    finally:
        stay.set()
        other.join()
        for process in [before, *theirs]:
            process.kill()
            process.wait()


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    stubborn = [sys.executable, "-c", "import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                "time.sleep(600)"]  # fmt: skip
    with children.watching() as born:
        process = subprocess.Popen(stubborn, stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    children.stop(born, grace=0.2)
    assert _gone(process)


def test_a_plugins_daemon_is_listed_and_goes_with_the_plugin(tmp_path, reg) -> None:
    manager = make_manager(make_home(tmp_path, ["daemon"]), reg, HookRegistry())
    state = manager.states["daemon"]
    (child,) = state.processes
    assert child.running and str(tmp_path) in child.command
    manager.reload("daemon")  # the new version's daemon replaces the old one's
    (again,) = state.processes
    assert again.pid != child.pid and again.running and not child.running
    manager.set_enabled("daemon", False)
    assert state.processes == [] and not again.running


def test_a_register_that_fails_after_starting_a_daemon_leaves_none(tmp_path, reg) -> None:
    home = make_home(tmp_path, [])
    plugin = home / "plugins" / "halfway"
    plugin.mkdir()
    (plugin / "__init__.py").write_text(
        "import subprocess, sys\n"
        "def register(ctx):\n"
        f"    subprocess.Popen({SLEEP!r} + [__file__])\n"
        "    raise RuntimeError('no database')\n"
    )
    (home / "config.yaml").write_text("plugins:\n  enabled: [halfway]\n")
    manager = make_manager(home, reg, HookRegistry())
    state = manager.states["halfway"]
    assert state.status == "failed" and state.processes == []
    assert not [p for p in processes_with(str(plugin / "__init__.py")) if alive(p)]


def test_hermes_tui_stopping_stops_every_plugins_processes(tmp_path, reg) -> None:
    manager = make_manager(make_home(tmp_path, ["daemon"]), reg, HookRegistry())
    (child,) = manager.states["daemon"].processes
    manager.stop()
    assert not child.running and manager.states["daemon"].processes == []
