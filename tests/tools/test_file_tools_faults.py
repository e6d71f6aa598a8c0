"""read_file, write_file and patch on the odd files a careless user or a hostile model picks:
symlinks, modes and umasks, FIFOs, devices, and sparse files with a 2 GB line."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.core.invoke import call_tool
from workbench.core.registry import registry


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
