"""File-write diffs: computed in the core, carried by the finished event and the approval
request, bounded, and never blocked or fooled by what is on disk."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from workbench.core.edits import diffs
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import Executor, ToolCallFinished
from workbench.core.tools.registry import registry


def write(path: str, content: str) -> dict:
    return {"id": "w", "name": "write_file", "arguments": {"path": path, "content": content}}


def test_a_new_file_shows_as_all_added(tmp_path: Path) -> None:
    diff = diffs.preview("write_file", {"path": "new.txt", "content": "a\nb\n"}, str(tmp_path))
    assert diff is not None and diff.created
    assert diff.lines == ("--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@", "+a", "+b")
    assert (diff.added, diff.removed, diff.summary) == (2, 0, "new file, +2 -0")


def test_a_patch_preview_is_the_change_the_tool_makes(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    args = {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}
    diff = diffs.preview("patch", args, str(tmp_path))
    assert diff is not None and not diff.note
    assert "-    return 1" in diff.lines and "+    return 2" in diff.lines
    missing = diffs.preview("patch", {**args, "old_string": "nope"}, str(tmp_path))
    assert missing is not None and "cannot be worked out" in missing.note


def test_large_binary_and_special_files_get_a_note_not_lines(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    (tmp_path / "big.log").write_bytes(b"x\n" * (diffs.MAX_COMPARED // 2 + 1))
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    os.mkfifo(tmp_path / "pipe")  # read before the write: it must never block
    notes = {
        name: diffs.preview("write_file", {"path": name, "content": "new"}, cwd)
        for name in ("big.log", "blob.bin", "pipe")
    }
    assert "too large to show a diff" in notes["big.log"].note
    assert "binary file (300 bytes)" in notes["blob.bin"].note
    assert "not a regular file" in notes["pipe"].note
    assert not any(diff.lines for diff in notes.values())
    binary = diffs.preview("write_file", {"path": "x.txt", "content": "a\0b"}, cwd)
    assert binary is not None and binary.note == "binary content: no diff"


def test_a_long_diff_keeps_its_first_lines_and_counts_the_rest(tmp_path: Path) -> None:
    content = "".join(f"line {n}\n" for n in range(5000))
    diff = diffs.preview("write_file", {"path": "many.txt", "content": content}, str(tmp_path))
    assert diff is not None and len(diff.lines) == diffs.MAX_LINES
    assert diff.more == 5003 - diffs.MAX_LINES and diff.added == 5000
    assert "4,603 more lines not shown" in diff.summary


def test_through_a_symlink_the_target_is_compared(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    diff = diffs.preview("write_file", {"path": "link.txt", "content": "new\n"}, str(tmp_path))
    assert diff is not None and ("-old" in diff.lines and "+new" in diff.lines)


async def test_a_finished_write_carries_its_diff(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    events: list[object] = []
    executor = Executor(registry, cwd=str(tmp_path), on_event=events.append)
    (outcome,) = await executor.run([write("notes.txt", "alpha\ngamma\n")])
    assert outcome.status == "ok"
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.diff is not None
    assert "-beta" in finished.diff.lines and "+gamma" in finished.diff.lines
    assert "diff" not in json.loads(outcome.content)  # the model's result is unchanged
    patch = {"path": "notes.txt", "old_string": "gamma", "new_string": "delta"}
    await executor.run([{"id": "p", "name": "patch", "arguments": patch}])
    last = [e for e in events if isinstance(e, ToolCallFinished)][-1]
    assert "-gamma" in last.diff.lines and "+delta" in last.diff.lines


async def test_a_failed_or_denied_write_has_no_diff_of_a_change(tmp_path: Path) -> None:
    events: list[object] = []
    executor = Executor(registry, cwd=str(tmp_path), on_event=events.append)
    patch = {"path": "absent.txt", "old_string": "a", "new_string": "b"}
    (outcome,) = await executor.run([{"id": "p", "name": "patch", "arguments": patch}])
    assert outcome.status == "error"
    assert [e.diff for e in events if isinstance(e, ToolCallFinished)] == [None]


async def test_an_approval_for_a_write_shows_the_diff_it_would_make(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    (outside / "settings.ini").write_text("debug = false\nport = 80\n")
    asked = []
    broker = ApprovalBroker()
    seen_on_disk = threading.Event()

    def front_end(request) -> None:
        asked.append(request)
        if (outside / "settings.ini").read_text() == "debug = false\nport = 80\n":
            seen_on_disk.set()  # asked before anything was written
        broker.answer(request.id, "deny")

    broker.attach(front_end)
    executor = Executor(registry, broker=broker, cwd=str(project))
    target = str(outside / "settings.ini")
    (outcome,) = await executor.run([write(target, "debug = true\nport = 80\n")])
    assert outcome.status == "denied" and seen_on_disk.is_set()
    (request,) = asked
    assert request.diff is not None
    assert "-debug = false" in request.diff.lines and "+debug = true" in request.diff.lines
    assert (outside / "settings.ini").read_text() == "debug = false\nport = 80\n"


async def test_a_hardline_write_never_reads_its_target_for_a_diff(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    read: list[str] = []
    real = diffs.preview
    monkeypatch.setattr(diffs, "preview", lambda *a: read.append(a[0]) or real(*a))
    asked = []
    broker = ApprovalBroker()
    broker.attach(lambda r: (asked.append(r), broker.answer(r.id, "deny")))
    executor = Executor(registry, broker=broker, cwd=str(tmp_path))
    (outcome,) = await executor.run([write("~/.ssh/authorized_keys", "ssh-ed25519 BBBB x\n")])
    assert outcome.status == "blocked" and asked == [] and read == []
    await executor.run([write(str(tmp_path.parent / "elsewhere.txt"), "b\n")])  # asks: read
    assert read == ["write_file"] and asked and asked[0].diff is not None
