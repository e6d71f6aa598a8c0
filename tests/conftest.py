"""Shared fixtures: an isolated HERMES_HOME per test and fresh registries."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI
from workbench.core.tools import registry as registry_module
from workbench.core.tools.discovery import discover_builtin_tools
from workbench.core.tools.registry import ToolRegistry

discover_builtin_tools()  # the built-in tools register into the global registry once


@pytest.fixture(autouse=True)
def _own_log_handlers():
    """The core sends its log to the HERMES_HOME it first meets (once a process); a test that
    loads a runtime in this process must not leave that file handler to the next test,
    whose home would then get no log of its own."""
    loggers = [logging.getLogger(name) for name in ("workbench", "mcp")]
    kept = [(lg, list(lg.handlers), lg.level, lg.propagate) for lg in loggers]
    yield
    for logger, handlers, level, propagate in kept:
        for handler in logger.handlers:
            if handler not in handlers:
                logger.removeHandler(handler)
                with contextlib.suppress(OSError):  # a test that filled its disk
                    handler.close()
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HERMES_HOME; nothing a test does reaches the user's ~/.hermes."""
    path = tmp_path / "hermes-home"
    monkeypatch.setenv("HERMES_HOME", str(path))
    return path


@pytest.fixture
def reg() -> ToolRegistry:
    return ToolRegistry()


@pytest.fixture
def module_registry(monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    """The module-level registry, for this test a copy of it (the built-in tools): what the
    test registers there reaches the runtimes it loads, and goes with the test."""
    copy = registry_module.registry.copy()
    monkeypatch.setattr(registry_module, "registry", copy)
    return copy


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    """Environment for running the installed `hermes-tui` as a subprocess."""
    from workbench.core.model.providers import PROVIDERS

    # the developer's own model keys must not choose the model a test talks to
    model_vars = {v for p in PROVIDERS for v in (*p.key_vars, p.base_url_var)}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FIRECRAWL_", "OPENAI_")) and k not in model_vars
    }
    env["HERMES_HOME"] = str(home)
    return env


@pytest.fixture
def make_read_only():
    """Make a directory truly unwritable, also for root (immutable flag); undone afterwards."""
    import shutil
    import subprocess

    done: list[Path] = []

    def freeze(path: Path) -> None:
        if os.geteuid() != 0:
            os.chmod(path, 0o500)
        elif (
            not shutil.which("chattr")
            or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode
        ):
            pytest.skip("cannot make a directory read-only for root here (no chattr +i)")
        done.append(path)

    yield freeze
    for path in done:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        else:
            os.chmod(path, 0o700)


@pytest.fixture
def fake():
    """The scripted OpenAI-protocol server on 127.0.0.1."""
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def full_filesystem(tmp_path: Path):
    """A small tmpfs mounted for the test; `fill()` takes its last free byte (root only)."""
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    mount = tmp_path / "small-fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")

    def fill() -> None:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:  # ENOSPC: full
            pass
        finally:
            os.close(fd)

    yield mount, fill
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture
def other_user():
    """Run a command as `nobody` (`setpriv`), to meet files root made private (root only)."""
    import shutil

    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("running as another user needs root and setpriv")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that runs the command line (it takes `cli_env`) is marked `cli`: `make test`
    runs those once more with each run a process of its own (tests/support/cli.py)."""
    for item in items:
        if "cli_env" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cli)
