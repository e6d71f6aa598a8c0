"""The batch planner against the batches Hermes runs in parallel when it should not (hard
links, case-insensitive volumes, `$HOME` against `~`, a search beside a write) and those it
runs one at a time when they could share."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.tools import noop, schema
from workbench.core.events import ToolSource
from workbench.core.execution import scheduler
from workbench.core.execution.scheduler import ToolCall, may_run_in_parallel, plan
from workbench.core.tools.registry import ToolRegistry, registry


def c(name: str, **args) -> dict:
    return {
        "id": f"{name}-{json.dumps(args, sort_keys=True)}",
        "name": name,
        "arguments": json.dumps(args),
    }


def shape(segments) -> list[tuple[bool, list[str]]]:
    return [(s.parallel, [p.call.name for p in s.calls]) for s in segments]


def test_independent_reads_and_writes_run_together(tmp_path: Path) -> None:
    batch = [
        c("read_file", path="a.txt"),
        c("write_file", path="b.txt", content="x"),
        c("web_search", query="q"),
    ]
    assert may_run_in_parallel(batch, cwd=tmp_path)


def test_p1_hard_links_are_the_same_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    os.link(tmp_path / "a.txt", tmp_path / "hard.txt")
    batch = [
        c("write_file", path="a.txt", content="1"),
        c("write_file", path="hard.txt", content="2"),
    ]
    segments = plan(batch, cwd=tmp_path)
    assert shape(segments) == [(False, ["write_file", "write_file"])]
    assert segments[0].calls[1].reason == "conflicts with write_file a.txt"


def test_p2_case_insensitive_volumes_fold_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The probe is what a case-insensitive volume would answer; this machine's disk is ext4.
    monkeypatch.setattr(scheduler, "_case_insensitive", lambda d: True)
    batch = [
        c("write_file", path="README.md", content="1"),
        c("write_file", path="readme.md", content="2"),
    ]
    assert not may_run_in_parallel(batch, cwd=tmp_path)
    monkeypatch.setattr(scheduler, "_case_insensitive", lambda d: False)
    assert may_run_in_parallel(batch, cwd=tmp_path)


def test_case_probe_on_this_disk_is_sensitive(tmp_path: Path) -> None:
    (tmp_path / "Probe").mkdir()
    assert scheduler._case_insensitive(str(tmp_path / "Probe")) is False


def test_p3_variables_and_tilde_expand_like_the_tool(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    batch = [c("write_file", path="$HOME/x", content="1"), c("write_file", path="~/x", content="2")]
    assert not may_run_in_parallel(batch, cwd="/")


def test_p4_search_reserves_its_root(tmp_path: Path) -> None:
    batch = [c("write_file", path="a.txt", content="1"), c("search_files", pattern="x", path=".")]
    assert shape(plan(batch, cwd=tmp_path)) == [(False, ["write_file", "search_files"])]
    default_root = [c("write_file", path="sub/a.txt", content="1"), c("search_files", pattern="x")]
    assert not may_run_in_parallel(default_root, cwd=tmp_path)
    elsewhere = [
        c("write_file", path="a.txt", content="1"),
        c("search_files", pattern="x", path="other"),
    ]
    assert may_run_in_parallel(elsewhere, cwd=tmp_path)


def test_p5_reads_of_the_same_file_share(tmp_path: Path) -> None:
    batch = [c("read_file", path="a.txt", offset=1), c("read_file", path="a.txt", offset=100)]
    assert may_run_in_parallel(batch, cwd=tmp_path)


def test_p6_directory_and_child_conflict(tmp_path: Path) -> None:
    batch = [c("write_file", path="dir", content="1"), c("write_file", path="dir/f", content="2")]
    assert not may_run_in_parallel(batch, cwd=tmp_path)
    siblings = [c("write_file", path="a/b", content="1"), c("write_file", path="a/bc", content="2")]
    assert may_run_in_parallel(siblings, cwd=tmp_path)


def test_p7_symlinks_resolve_to_their_target(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "sym.txt").symlink_to(tmp_path / "a.txt")
    batch = [c("write_file", path="a.txt", content="1"), c("read_file", path="sym.txt")]
    assert not may_run_in_parallel(batch, cwd=tmp_path)


def test_dotdot_is_folded(tmp_path: Path) -> None:
    batch = [c("write_file", path="sub/../a.txt", content="1"), c("read_file", path="a.txt")]
    assert not may_run_in_parallel(batch, cwd=tmp_path)


def test_barriers(tmp_path: Path) -> None:
    batch = [
        c("read_file", path="a"),
        c("read_file", path="b"),
        c("terminal", command="ls"),
        c("read_file", path="c"),
        {"id": "x", "name": "no_such_tool", "arguments": "{}"},
        c("read_file", path="d"),
        {"id": "y", "name": "read_file", "arguments": "{not json"},
        c("read_file", path="e"),
        {"id": "z", "name": "read_file", "arguments": '{"path": 5}'},
        c("read_file", path="f"),
        c("read_file", path="g"),
    ]
    segments = plan(batch, cwd=tmp_path)
    assert [(s.parallel, len(s.calls)) for s in segments] == [(True, 2), (False, 7), (True, 2)]
    reasons = [p.reason for p in segments[1].calls]
    assert reasons == [
        "terminal runs alone (it may change anything)",
        "",
        "unknown tool",
        "",
        "its arguments could not be read",
        "",
        "its arguments could not be read",
    ]


def test_interactive_tools_never_run_in_parallel(reg: ToolRegistry) -> None:
    reg.register("clarify", "clarify", schema(), noop, parallel_safe=True)
    reg.register("ask", "x", schema(), noop, interactive=True, parallel_safe=True)
    reg.register("safe", "x", schema(), noop, parallel_safe=True)
    batch = [
        {"id": "1", "name": "safe"},
        {"id": "2", "name": "clarify"},
        {"id": "3", "name": "ask"},
    ]
    assert [s.parallel for s in plan(batch, registry=reg)] == [False]


def test_mcp_tools_run_in_parallel_only_when_their_server_allows(reg: ToolRegistry) -> None:
    with reg.scope(ToolSource.MCP, "fast"):
        reg.register("mcp__fast__a", "mcp-fast", schema(), noop, parallel_safe=True)
        reg.register("mcp__fast__b", "mcp-fast", schema(), noop, parallel_safe=True)
    with reg.scope(ToolSource.MCP, "slow"):
        reg.register("mcp__slow__a", "mcp-slow", schema(), noop)
    fast = [{"id": "1", "name": "mcp__fast__a"}, {"id": "2", "name": "mcp__fast__b"}]
    assert may_run_in_parallel(fast, registry=reg)
    assert not may_run_in_parallel([*fast, {"id": "3", "name": "mcp__slow__a"}], registry=reg)


def test_call_shapes_are_accepted() -> None:
    class Function:
        name, arguments = "read_file", '{"path": "x"}'

    class OpenAICall:
        id, function = "call_9", Function()

    assert ToolCall.of(OpenAICall()) == ToolCall("call_9", "read_file", '{"path": "x"}')
    nested = {
        "id": "c1",
        "type": "function",
        "function": {"name": "read_file", "arguments": {"path": "x"}},
    }
    assert ToolCall.of(nested) == ToolCall("c1", "read_file", {"path": "x"})
    assert ToolCall.of({"name": "read_file"}, 3).id == "call_3"


def test_default_cwd_is_the_process_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    batch = [
        c("write_file", path=str(tmp_path / "a.txt"), content="1"),
        c("read_file", path="a.txt"),
    ]
    assert not may_run_in_parallel(batch)


def test_segments_keep_the_model_order(tmp_path: Path) -> None:
    batch = [
        c("write_file", path="a", content="1"),
        c("read_file", path="a"),
        c("read_file", path="b"),
    ]
    segments = plan(batch, cwd=tmp_path)
    assert shape(segments) == [(False, ["write_file"]), (True, ["read_file", "read_file"])]
    assert [p.call.id for s in segments for p in s.calls] == [b["id"] for b in batch]


def test_the_global_registry_declares_path_arguments() -> None:
    assert registry.get_entry("write_file").path_args == {"path": "write"}
    assert registry.get_entry("search_files").path_args == {"path": "root"}
    assert registry.get_entry("terminal").path_args == {}
