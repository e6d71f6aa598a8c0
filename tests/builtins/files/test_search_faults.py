"""search_files against what could hang it: FIFOs, kernel trees, sparse files, and
patterns that backtrack catastrophically."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from workbench.core.execution.executor import Executor
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry


def search(cwd: Path, timeout: float | None = None, **args) -> dict:
    context = {"cwd": str(cwd)} | ({"timeout": timeout} if timeout else {})
    return json.loads(call_tool(registry, "search_files", args, **context))


@pytest.fixture
def odd_tree(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("needle here\n")
    os.mkfifo(tmp_path / "pipe")  # no writer: opening it to read would block
    (tmp_path / "to-pipe").symlink_to(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")  # reads forever
    (tmp_path / "kernel").symlink_to("/proc")
    sparse = tmp_path / "sparse.log"
    sparse.write_text("needle in the text\n" * 600)
    os.truncate(sparse, 2 << 30)
    return tmp_path


def test_fifos_devices_and_links_into_proc_are_skipped(odd_tree: Path) -> None:
    out = search(odd_tree, pattern="needle", output_mode="files_only")
    # The sparse file is text then 2 GB of zeros: binary, skipped like any binary file.
    assert out == {"files": ["notes.txt"], "truncated": False}
    names = search(odd_tree, pattern="*", target="files")["files"]
    assert sorted(names) == ["notes.txt", "sparse.log"]


@pytest.mark.parametrize("root", ["/proc", "/sys", "/dev", "/proc/self", "kernel"])
def test_kernel_and_device_trees_are_refused(odd_tree: Path, root: str) -> None:
    out = search(odd_tree, pattern="x", path=root)
    assert "does not search /proc, /sys, /dev" in out["error"]


def test_a_fifo_or_device_as_the_root_is_refused(odd_tree: Path) -> None:
    assert "is a FIFO (named pipe)" in search(odd_tree, pattern="x", path="pipe")["error"]


@pytest.mark.parametrize(
    "pattern,line",
    [(r"(a+)+$", "a" * 5000 + "!"), (r"(x+x+)+y", "x" * 5000)],
    ids=["nested-plus", "overlapping-plus"],
)
def test_a_catastrophic_pattern_ends_at_the_deadline_with_a_clear_error(
    tmp_path: Path, pattern: str, line: str
) -> None:
    (tmp_path / "long.txt").write_text(f"{line}\n")
    out = search(tmp_path, timeout=2, pattern=pattern)
    assert out["status"] == "timeout"
    assert out["error"].startswith(f"search_files gave up in long.txt: the pattern {pattern!r}")
    assert "takes too long (the search's limit is 1s)" in out["error"]


def test_through_the_executor_the_search_ends_before_its_call_timeout(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("a" * 5000 + "!\n")
    # The search gives itself half the call's time: 6 s of margin on a loaded machine.
    executor = Executor(registry, cwd=str(tmp_path), tool_timeouts={"search_files": 12})
    call = {"id": "s1", "name": "search_files", "arguments": {"pattern": r"(a+)+$"}}
    try:
        (outcome,) = asyncio.run(executor.run([call]))
    finally:
        executor.shutdown()
    # The tool's own error (it stopped), not the executor's "could not be stopped".
    assert outcome.status == "error"
    assert "takes too long" in json.loads(outcome.content)["error"]
