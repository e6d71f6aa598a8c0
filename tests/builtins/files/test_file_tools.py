"""read_file, write_file and patch on real files, called through the agent's call path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.builtins.files.file_tools import MAX_LINE_CHARS, MAX_READ_CHARS
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry


def call(name: str, cwd: Path, **args) -> dict:
    return json.loads(call_tool(registry, name, args, cwd=str(cwd)))


# -- read_file -------------------------------------------------------------------------


def test_read_with_line_numbers_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = call("read_file", tmp_path, path="a.txt", offset=3, limit=2)
    assert out["content"] == "     3|line 3\n     4|line 4"
    assert (out["total_lines"], out["lines_returned"], out["next_offset"]) == (10, 2, 5)
    tail = call("read_file", tmp_path, path="a.txt", offset=9)
    assert tail["content"] == "     9|line 9\n    10|line 10"
    assert "next_offset" not in tail


def test_read_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "notes.md").write_text("hi\n")
    assert call("read_file", Path("/"), path="~/notes.md")["content"] == "     1|hi"


def test_read_refuses_binary_clearly(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + os.urandom(100))
    out = call("read_file", tmp_path, path="img.png")
    assert "binary file" in out["error"] and "read_file reads text only" in out["error"]


def test_read_utf8_text_is_not_binary(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_text("grüße — 日本語\n" * 1000)
    assert call("read_file", tmp_path, path="u.txt", limit=1)["content"] == "     1|grüße — 日本語"


def test_read_is_bounded_on_a_line_boundary(tmp_path: Path) -> None:
    line = "x" * 1000
    (tmp_path / "big.txt").write_text((line + "\n") * 2000)
    out = call("read_file", tmp_path, path="big.txt", limit=2000)
    assert len(out["content"]) <= MAX_READ_CHARS
    assert out["truncated"] is True
    assert out["next_offset"] == out["lines_returned"] + 1
    assert out["content"].endswith(line)


def test_read_takes_its_size_from_the_agents_budget(tmp_path: Path) -> None:
    """The agent passes what is left of the model's window: the head, and where to go on."""
    (tmp_path / "doc.txt").write_text("".join(f"line {i} " + "z" * 50 + "\n" for i in range(500)))
    out = json.loads(
        call_tool(registry, "read_file", {"path": "doc.txt"}, cwd=str(tmp_path), max_chars=700)
    )
    assert out["content"].startswith("     1|line 0 ") and len(out["content"]) <= 700
    assert out["next_offset"] == out["lines_returned"] + 1 and out["truncated"] is True
    more = json.loads(call_tool(registry, "read_file", {"path": "doc.txt", "offset": out["next_offset"]},
                                cwd=str(tmp_path), max_chars=700))  # fmt: skip
    assert more["content"].startswith(f"{out['next_offset']:>6}|line {out['next_offset'] - 1} ")
    # a first line longer than the budget still gives its head; a budget never widens the cap
    (tmp_path / "wide.txt").write_text("w" * 1500 + "\nsecond\n")
    wide = json.loads(
        call_tool(registry, "read_file", {"path": "wide.txt"}, cwd=str(tmp_path), max_chars=300)
    )
    assert wide["content"].endswith("... [truncated]") and len(wide["content"]) < 330
    assert wide["next_offset"] == 2
    huge = json.loads(call_tool(registry, "read_file", {"path": "doc.txt", "limit": 2000},
                                cwd=str(tmp_path), max_chars=10**9))  # fmt: skip
    assert huge["lines_returned"] == 500


def test_read_clips_very_long_lines(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("y" * (MAX_LINE_CHARS + 500))
    content = call("read_file", tmp_path, path="min.js")["content"]
    assert content.endswith("... [truncated]")


def test_read_errors(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    missing = call("read_file", tmp_path, path="config.yml")["error"]
    assert "File not found" in missing and "config.yaml" in missing  # suggests the near name
    assert "is a directory" in call("read_file", tmp_path, path=".")["error"]
    assert "past the end" in call("read_file", tmp_path, path="config.yaml", offset=5)["error"]


def test_read_file_is_pinned_to_an_unbounded_result_cap() -> None:
    # A spilled result is read back with read_file; spilling that read would loop.
    assert registry.get_max_result_size("read_file") == float("inf")


# -- write_file ------------------------------------------------------------------------


def test_write_creates_parents_and_reports(tmp_path: Path) -> None:
    out = call("write_file", tmp_path, path="deep/er/new.txt", content="héllo\n")
    assert out == {
        "path": str(tmp_path / "deep/er/new.txt"),
        "bytes_written": 7,
        "created": True,
    }
    assert (tmp_path / "deep/er/new.txt").read_text() == "héllo\n"
    again = call("write_file", tmp_path, path="deep/er/new.txt", content="x")
    assert again["created"] is False
    assert sorted(p.name for p in (tmp_path / "deep/er").iterdir()) == ["new.txt"]  # no temp


def test_write_keeps_the_file_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    call("write_file", tmp_path, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o755


def test_write_missing_content_is_an_argument_error(tmp_path: Path) -> None:
    out = json.loads(call_tool(registry, "write_file", {"path": "x"}, cwd=str(tmp_path)))
    assert out["error"] == "Invalid tool arguments"
    assert "missing required argument 'content'" in out["message"]
    assert not (tmp_path / "x").exists()


def test_write_into_a_read_only_dir_fails_clearly(tmp_path: Path, make_read_only) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    make_read_only(locked)
    assert "Cannot write" in call("write_file", tmp_path, path="locked/f.txt", content="x")["error"]


# -- patch -----------------------------------------------------------------------------


def test_patch_replaces_a_unique_match_and_returns_a_diff(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    out = call("patch", tmp_path, path="m.py", old_string="return 1", new_string="return 2")
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 2\n"
    assert "-    return 1\n+    return 2" in out["diff"]
    assert out["replacements"] == 1


def test_patch_fails_clearly_on_no_match_or_several(tmp_path: Path) -> None:
    original = "a = 1\na = 1\n"
    (tmp_path / "m.py").write_text(original)
    none = call("patch", tmp_path, path="m.py", old_string="b = 1", new_string="b = 2")
    assert "not found" in none["error"] and "nothing was changed" in none["error"]
    many = call("patch", tmp_path, path="m.py", old_string="a = 1", new_string="a = 2")
    assert "occurs 2 times" in many["error"] and "replace_all" in many["error"]
    assert (tmp_path / "m.py").read_text() == original
    out = call(
        "patch", tmp_path, path="m.py", old_string="a = 1", new_string="a = 2", replace_all=True
    )
    assert out["replacements"] == 2
    assert (tmp_path / "m.py").read_text() == "a = 2\na = 2\n"


def test_patch_missing_file(tmp_path: Path) -> None:
    assert (
        "File not found"
        in call("patch", tmp_path, path="no.py", old_string="a", new_string="b")["error"]
    )
