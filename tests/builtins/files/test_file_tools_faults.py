"""read_file, write_file and patch on the odd files a careless user or a hostile model picks:
symlinks, modes and umasks, FIFOs, devices, and sparse files with a 2 GB line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry


def call(name: str, cwd: Path, **args) -> dict:
    return json.loads(call_tool(registry, name, args, cwd=str(cwd)))


@pytest.fixture
def umask() -> Iterator[callable]:
    old = os.umask(0o022)
    os.umask(old)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(old)


# -- symlinks and modes ----------------------------------------------------------------


@pytest.mark.parametrize("tool", ["write_file", "patch"])
def test_a_write_through_a_symlink_changes_the_target_and_keeps_the_link(
    tmp_path: Path, tool: str
) -> None:
    target = tmp_path / "dotfiles" / "bashrc"
    target.parent.mkdir()
    target.write_text("alias ll='ls -l'\n")
    target.chmod(0o640)
    link = tmp_path / "link-to-bashrc"
    link.symlink_to(target)
    if tool == "write_file":
        out = call(tool, tmp_path, path=link.name, content="alias la='ls -a'\n")
    else:
        out = call(tool, tmp_path, path=link.name, old_string="ll='ls -l'", new_string="la='ls -a'")
    assert "error" not in out, out
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "alias la='ls -a'\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["bashrc"]  # no temp left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dotfiles", "link-to-bashrc"]


def test_a_chain_of_symlinks_is_followed_to_the_end(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "one").symlink_to("real.txt")
    (tmp_path / "two").symlink_to("one")
    call("patch", tmp_path, path="two", old_string="old", new_string="new")
    assert (tmp_path / "real.txt").read_text() == "new\n"
    assert (tmp_path / "one").is_symlink() and (tmp_path / "two").is_symlink()


def test_write_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "made" / "here.txt")
    out = call("write_file", tmp_path, path="link", content="x\n")
    assert "error" not in out, out
    assert (tmp_path / "made" / "here.txt").read_text() == "x\n"
    assert (tmp_path / "link").is_symlink()


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_the_umask_gives(
    tmp_path: Path, umask, mask: int, expected: int
) -> None:
    umask(mask)
    call("write_file", tmp_path, path="new.txt", content="x")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == expected


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o444])
def test_patch_keeps_an_existing_files_mode(tmp_path: Path, mode: int) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(mode)
    out = call("patch", tmp_path, path="run.sh", old_string="old", new_string="new")
    assert "error" not in out, out
    assert script.read_text() == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == mode


# -- FIFOs, devices and a 2 GB line ------------------------------------------------------

REPO = Path(__file__).resolve().parents[3]
SPARSE_SIZE = 2 << 30
TEXT_LINES = 1000  # about 12 KB of text before the zeros


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    """12 KB of text, then zeros to 2 GB: its last line is 2 GB long. No disk is used."""
    path = tmp_path / "sparse.log"
    path.write_text("".join(f"entry {i:05d}\n" for i in range(1, TEXT_LINES + 1)))
    os.truncate(path, SPARSE_SIZE)
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("tool", ["read_file", "patch", "write_file"])
def test_a_fifo_is_refused_at_once(tmp_path: Path, fifo: Path, tool: str) -> None:
    args = {"path": "pipe"}
    if tool == "patch":
        args |= {"old_string": "a", "new_string": "b"}
    if tool == "write_file":
        args |= {"content": "x"}
    out = call(tool, tmp_path, **args)  # with no writer, an open() that blocked would hang here
    assert "is a FIFO (named pipe)" in out["error"] and "regular files only" in out["error"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # write_file did not replace it


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_character_device_is_refused(tmp_path: Path, device: str) -> None:
    out = call("read_file", tmp_path, path=device)
    assert out["error"] == (
        f"Cannot read {device}: {device} is a character device: "
        "the file tools read regular files only"
    )


def test_a_socket_is_refused(tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        out = call("read_file", tmp_path, path="sock")
    assert "is a socket" in out["error"]


def test_reading_a_fifo_leaves_no_thread_behind_and_the_process_exits(
    tmp_path: Path, fifo: Path
) -> None:
    script = (
        "import json, sys, threading; from workbench.core.tools.discovery import "
        "discover_builtin_tools; from workbench.core.tools.invoke import call_tool; "
        "from workbench.core.tools.registry import registry; discover_builtin_tools(); "
        "out = call_tool(registry, 'read_file', {'path': sys.argv[1]}); "
        "print(json.dumps({'out': json.loads(out), 'threads': threading.active_count()}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(fifo)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "is a FIFO" in report["out"]["error"] and report["threads"] == 1


def test_read_file_limit_2_on_a_2_gb_line(tmp_path: Path, sparse: Path) -> None:
    out = call("read_file", tmp_path, path=sparse.name, limit=2)
    assert out["content"] == "     1|entry 00001\n     2|entry 00002"
    assert out["next_offset"] == 3 and out["total_lines"] == TEXT_LINES + 1


def test_the_2_gb_line_itself_is_cut_and_says_so(tmp_path: Path, sparse: Path) -> None:
    out = call("read_file", tmp_path, path=sparse.name, offset=TEXT_LINES, limit=5)
    first, long_line = out["content"].split("\n")
    assert first == f"{TEXT_LINES:>6}|entry {TEXT_LINES:05d}"
    assert long_line.endswith("... [truncated]") and len(long_line) < 2100
    assert out["lines_cut"] == 1 and "next_offset" not in out


def test_patch_refuses_a_file_too_large_to_hold(tmp_path: Path, sparse: Path) -> None:
    out = call("patch", tmp_path, path=sparse.name, old_string="entry 00001", new_string="x")
    assert "is too large (2,147,483,648 bytes" in out["error"]
    assert sparse.stat().st_size == SPARSE_SIZE


def test_patch_keeps_windows_line_ends(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = call("patch", tmp_path, path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert "error" not in out, out
    assert (tmp_path / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_the_file_tools_stay_in_bounded_memory_on_a_2_gb_line(sparse: Path) -> None:
    # Peak memory of a process doing all three; holding the line would take over 2 GB. The
    # peak is this process's own (VmHWM): ru_maxrss would carry the parent's peak over exec,
    # so a test run grown large would fail it.
    script = (
        "import json, re, sys; from workbench.core.tools.discovery import "
        "discover_builtin_tools; from workbench.core.tools.invoke import call_tool; "
        "from workbench.core.tools.registry import registry; discover_builtin_tools(); p = sys.argv[1]; "
        "outs = [call_tool(registry, 'read_file', {'path': p, 'limit': 2}), "
        "call_tool(registry, 'read_file', {'path': p, 'offset': 1000}), "
        "call_tool(registry, 'patch', {'path': p, 'old_string': 'entry', 'new_string': 'x'}), "
        "call_tool(registry, 'search_files', {'pattern': 'entry', 'path': p})]; "
        "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1); "
        "print(json.dumps({'peak_kb': int(peak), "
        "'sizes': [len(o) for o in outs]}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(sparse)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["peak_kb"] < 400 * 1024, report  # generous: the app alone is ~60 MB
    assert all(size < 200_000 for size in report["sizes"]), report
