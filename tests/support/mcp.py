"""The fixture MCP server and fixtures that start managers over it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.waiting import PATIENCE
from workbench.core.mcp import MCPManager
from workbench.core.tools.registry import ToolRegistry

HERE = Path(__file__).resolve().parents[1] / "core" / "mcp"  # the fixture servers


FIXTURE = [sys.executable, str(HERE / "fixture_server.py")]


def shadow_sdk(folder: Path, version: str = "1.9.0") -> Path:
    """A folder whose only content is the metadata of an `mcp` of `version`: ahead of the real
    SDK on the path, the installed version reads as `pip install` of a plugin pinning mcp<2
    leaves it, while the real SDK stays installed and importable."""
    info = folder / f"mcp-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: mcp\nVersion: {version}\n")
    return folder


def wait_until(predicate: Callable[[], bool], timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


@pytest.fixture
def markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    monkeypatch.setenv("FIXTURE_MARKERS", str(path))
    return path


@pytest.fixture
def start(tmp_path: Path, reg: ToolRegistry, markers: Path):
    managers: list[MCPManager] = []

    def start(servers: dict, wait: float = 20.0) -> tuple[MCPManager, list[object]]:
        events: list[object] = []
        for entry in servers.values():
            if isinstance(entry, dict) and "command" in entry:
                entry.setdefault("env", {})["FIXTURE_MARKERS"] = str(markers)
        manager = MCPManager.from_config(
            reg, servers, log_dir=tmp_path / "logs", on_event=events.append
        )
        managers.append(manager)
        manager.start()
        manager.wait_settled(wait)
        return manager, events

    yield start
    for manager in managers:
        manager.stop()


SERVER = [sys.executable, str(HERE / "catalog_server.py")]


# The real servers `make mcp-servers` installs.
SERVERS = Path(__file__).resolve().parents[2] / ".cache" / "mcp-servers"
REAL_SERVERS = {
    "time": SERVERS / "time" / "bin" / "mcp-server-time",
    "git": SERVERS / "git" / "bin" / "mcp-server-git",
    "everything": SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-everything",
    "filesystem": SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem",
}
