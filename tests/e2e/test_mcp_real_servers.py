"""Real MCP servers from PyPI and npm, installed by `make mcp-servers` (part of `make test`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.mcp import REAL_SERVERS as BIN
from workbench.core.mcp import CallProgress, MCPManager
from workbench.core.tools.registry import ToolRegistry

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not all(p.exists() for p in BIN.values()), reason="run `make mcp-servers` first"
    ),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "hello.txt").write_text("hello\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first commit"], check=True)
    return path


@pytest.fixture
def manager(tmp_path: Path, reg: ToolRegistry, repo: Path):
    events: list[object] = []
    manager = MCPManager.from_config(
        reg,
        {
            "time": {"command": str(BIN["time"]), "args": ["--local-timezone", "UTC"]},
            "git": {"command": str(BIN["git"]), "args": ["--repository", str(repo)]},
            "everything": {"command": str(BIN["everything"])},
            # it takes its directories from our roots (the working directory) unless told
            "fs": {"command": str(BIN["filesystem"]), "args": [str(repo)], "roots": [str(repo)]},
        },
        log_dir=tmp_path / "logs",
        on_event=events.append,
    )
    manager.start()
    assert manager.wait_settled(30)
    yield manager, events
    manager.stop()


def test_all_four_are_ready_and_answer(manager, reg: ToolRegistry, repo: Path) -> None:
    mgr, _ = manager
    assert {s.name: s.state for s in mgr.statuses()} == dict.fromkeys(
        ("time", "git", "everything", "fs"), "ready"
    )
    now = json.loads(
        json.loads(reg.dispatch("mcp__time__get_current_time", {"timezone": "UTC"}))["result"]
    )
    assert now["timezone"] == "UTC"
    log = json.loads(reg.dispatch("mcp__git__git_log", {"repo_path": str(repo), "max_count": 1}))[
        "result"
    ]
    assert "first commit" in log
    listing = json.loads(reg.dispatch("mcp__fs__list_directory", {"path": str(repo)}))
    assert "[FILE] hello.txt" in listing["result"]
    assert json.loads(reg.dispatch("mcp__everything__echo", {"message": "hi"})) == {
        "result": "Echo: hi"
    }


def test_everything_content_kinds(manager, reg: ToolRegistry) -> None:
    structured = json.loads(
        reg.dispatch("mcp__everything__get_structured_content", {"location": "New York"})
    )
    assert "temperature" in structured["structuredContent"]
    image = reg.dispatch("mcp__everything__get_tiny_image", {})
    assert image["_multimodal"] and image["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    resource = json.loads(
        reg.dispatch("mcp__everything__get_resource_reference", {"resourceType": "Text"})
    )
    assert "[resource demo://resource/" in resource["result"]
    hyphenated = reg.get_entry("mcp__everything__get_tiny_image")
    assert hyphenated is not None  # `get-tiny-image` sanitised; the reverse map keeps the original


def test_everything_progress(manager, reg: ToolRegistry) -> None:
    _, events = manager
    result = json.loads(
        reg.dispatch("mcp__everything__trigger_long_running_operation", {"duration": 1, "steps": 4})
    )
    assert "completed" in result["result"].lower()
    progress = [e for e in events if isinstance(e, CallProgress)]
    assert [p.progress for p in progress][-4:] == [1, 2, 3, 4]


def test_everything_over_streamable_http(tmp_path: Path, reg: ToolRegistry) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(BIN["everything"]), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        manager = MCPManager.from_config(
            reg, {"ev": {"url": f"http://127.0.0.1:{port}/mcp"}}, log_dir=tmp_path
        )
        manager.start()
        manager.wait_settled(20)
        try:
            assert manager.statuses()[0].state == "ready"
            assert json.loads(reg.dispatch("mcp__ev__echo", {"message": "over http"})) == {
                "result": "Echo: over http"
            }
        finally:
            manager.stop()
    finally:
        server.terminate()
        server.wait(10)
