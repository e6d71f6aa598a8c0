"""The persistent call history: round trip, caps, pins, damaged files, modes, two writers."""

from __future__ import annotations

import json
import multiprocessing
import stat
from pathlib import Path

import pytest

from workbench.core.history import (
    MAX_ARGS_CHARS,
    MAX_FILE_BYTES,
    PREVIEW_CHARS,
    CallHistory,
    entry,
)


def _call(tool: str = "read_file", n: int = 0, **kw):
    return entry(tool, {"path": f"f{n}.txt"}, "ok", f"result {n}", 0.01 * n, "form", **kw)


def test_a_call_comes_back_in_a_new_store(tmp_path: Path) -> None:
    store = CallHistory(tmp_path / "history")
    store.add(entry("read_file", {"path": "a.txt"}, "ok", '{"x": 1}', 0.25, "agent", "/s/r.txt"))
    (back,) = CallHistory(tmp_path / "history").calls("read_file")
    assert back.arguments == {"path": "a.txt"}
    assert (back.status, back.duration, back.origin) == ("ok", 0.25, "agent")
    assert (back.preview, back.spilled, back.pinned) == ('{"x": 1}', "/s/r.txt", False)


def test_newest_first_and_pinned_on_top(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    calls = [_call(n=n) for n in range(4)]
    for c in calls:
        store.add(c)
    assert store.pin("read_file", calls[1].id)
    order = [c.arguments["path"] for c in CallHistory(tmp_path).calls("read_file")]
    assert order == ["f1.txt", "f3.txt", "f2.txt", "f0.txt"]


def test_the_cap_evicts_the_oldest_unpinned_but_never_a_pinned_call(tmp_path: Path) -> None:
    store = CallHistory(tmp_path, per_tool=3)
    first = _call(n=0)
    store.add(first)
    store.pin("read_file", first.id)
    for n in range(1, 8):
        store.add(_call(n=n))
    kept = [c.arguments["path"] for c in CallHistory(tmp_path, per_tool=3).calls("read_file")]
    assert kept == ["f0.txt", "f7.txt", "f6.txt", "f5.txt"]
    store.pin("read_file", first.id, pinned=False)
    store.add(_call(n=8))
    kept = [c.arguments["path"] for c in store.calls("read_file")]
    assert kept == ["f8.txt", "f7.txt", "f6.txt"]


def test_the_total_cap_removes_the_least_recent_tool_without_pins(tmp_path: Path) -> None:
    import os

    store = CallHistory(tmp_path, max_tools=2)
    pinned = _call("a")
    store.add(pinned)
    store.pin("a", pinned.id)
    store.add(_call("b"))
    os.utime(store.path("a"), (1, 1))  # the oldest two: a (pinned) and b
    os.utime(store.path("b"), (2, 2))
    store.add(_call("c"))
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == ["a", "c"]
    assert store.calls("b") == []


def test_a_large_result_keeps_a_preview_and_large_arguments_are_not_kept(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    store.add(entry("terminal", {"command": "yes"}, "ok", "y\n" * 1_000_000, 1.0, "agent"))
    store.add(entry("write_file", {"content": "x" * (MAX_ARGS_CHARS + 1)}, "ok", "", 0, "form"))
    (big,) = store.calls("terminal")
    assert len(big.preview) == PREVIEW_CHARS and big.size == 2_000_000 and big.truncated
    (write,) = store.calls("write_file")
    assert write.arguments is None and not write.can_rerun and "not kept" in write.note
    assert store.path("terminal").stat().st_size < 2 * PREVIEW_CHARS


def test_a_damaged_file_is_set_aside_said_and_the_others_kept(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    store.add(_call("read_file"))
    store.add(_call("terminal"))
    store.path("read_file").write_text('{"calls": [{"id": 1', encoding="utf-8")
    fresh = CallHistory(tmp_path)
    assert fresh.calls("read_file") == []
    assert len(fresh.calls("terminal")) == 1
    (problem,) = fresh.problems
    assert "read_file.json" in problem and "kept as" in problem
    (aside,) = tmp_path.glob("read_file.json.corrupt-*")
    assert aside.read_text(encoding="utf-8") == '{"calls": [{"id": 1'
    fresh.add(_call("read_file", 5))  # starts again
    assert [c.arguments["path"] for c in CallHistory(tmp_path).calls("read_file")] == ["f5.txt"]


def test_a_call_of_the_wrong_shape_counts_as_damage(tmp_path: Path) -> None:
    bad = {"calls": [{"id": "x", "tool": "t", "arguments": None, "status": "ok", "duration": "slow",
                      "at": 0, "origin": "form", "preview": "", "size": 0}]}  # fmt: skip
    tmp_path.joinpath("t.json").write_text(json.dumps(bad), encoding="utf-8")
    store = CallHistory(tmp_path)
    assert store.calls("t") == [] and "not a number" in store.problems[0]


def test_files_are_private(tmp_path: Path) -> None:
    store = CallHistory(tmp_path / "state" / "history")
    store.add(_call())
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path("read_file").stat().st_mode) == 0o600


def test_an_unsafe_tool_name_gets_a_hashed_file_inside_the_folder(tmp_path: Path) -> None:
    store = CallHistory(tmp_path / "h")
    store.add(_call("../../evil/name"))
    (only,) = (tmp_path / "h").glob("*.json")
    assert only.name.startswith("tool-")
    assert store.calls("../../evil/name")[0].tool == "../../evil/name"


def _writer(root: str, tool: str, count: int) -> None:
    store = CallHistory(Path(root), per_tool=1000)
    for n in range(count):
        store.add(_call(tool, n))


def test_two_processes_writing_one_tool_lose_no_call(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_writer, args=(str(tmp_path), "t", 25)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(CallHistory(tmp_path, per_tool=1000).calls("t")) == 50


def test_a_change_shown_first_is_saved_once_when_written(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    call = _call()
    store.add(call, write=False)
    assert store.calls("read_file") == [call] and not store.path("read_file").exists()
    store.pin("read_file", call.id, write=False)
    store.add(call)
    store.pin("read_file", call.id)
    (back,) = CallHistory(tmp_path).calls("read_file")
    assert back.id == call.id and back.pinned


def test_calls_written_by_another_process_show_without_a_restart(tmp_path: Path) -> None:
    shown, other = CallHistory(tmp_path), CallHistory(tmp_path)
    shown.add(_call(n=0))
    assert len(shown.calls("read_file")) == 1
    other.add(_call(n=1))  # a replay, or `hermes-tui call`, beside the workbench
    assert [c.arguments["path"] for c in shown.calls("read_file")] == ["f1.txt", "f0.txt"]


def _one(**fields) -> dict:
    call = {"id": "x", "tool": "t", "arguments": None, "status": "ok", "duration": 0.1, "at": 1e9,
            "origin": "form", "preview": "", "size": 0}  # fmt: skip
    return {"calls": [{**call, **fields}]}


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"at": 1e300}, "not a number"),  # no clock shows it: the list's row would raise
        ({"at": float("nan")}, "not a number"),
        ({"duration": float("inf")}, "not a number"),
        ({"pinned": "no"}, "pinned"),  # a string is true: an unpinned call would never go
    ],
)
def test_a_value_the_list_cannot_show_counts_as_damage(
    tmp_path: Path, fields: dict, says: str
) -> None:
    store = CallHistory(tmp_path)
    store.path("t").write_text(json.dumps(_one(**fields)), encoding="utf-8")
    assert store.calls("t") == [] and says in store.problems[0]


def test_json_nested_too_deeply_counts_as_damage(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    store.path("t").write_text("[" * 100_000, encoding="utf-8")
    assert store.calls("t") == [] and "nested too deeply" in store.problems[0]


def test_a_link_to_a_device_or_a_huge_file_is_set_aside_unread(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    store.path("t").symlink_to("/dev/zero")  # read whole, it never ends
    assert store.calls("t") == [] and "not a regular file" in store.problems[0]
    with open(store.path("u"), "wb") as big:
        big.truncate(MAX_FILE_BYTES + 1)
    assert store.calls("u") == [] and "limit" in store.problems[1]
    assert Path("/dev/zero").exists() and not store.path("t").is_symlink()


def test_a_deferred_tools_call_keeps_the_bridge_call_it_came_through(tmp_path: Path) -> None:
    store = CallHistory(tmp_path)
    store.add(entry("search_files", {"pattern": "a"}, "ok", "{}", 0.1, "agent", via="call_7"))
    (back,) = CallHistory(tmp_path).calls("search_files")
    assert back.via == "call_7"
    store.add(_call())  # a call made directly has none
    assert CallHistory(tmp_path).calls("read_file")[0].via == ""
