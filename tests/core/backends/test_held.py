"""What the sandbox holds read-only inside the places a command may write, and the life of
a placeholder `.hermes`: made on the host for as long as a command of ours uses it, left
alone while another command (of this process or another) holds it, removed by the last.
Real folders, real locks, a real second process; bubblewrap is not needed here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.core.backends.held import MARK, HeldError, hold


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_a_missing_hermes_folder_is_a_placeholder_while_the_command_runs(project: Path) -> None:
    holding = hold([str(project)])
    placeholder = project / ".hermes"
    assert [p.name for p in placeholder.iterdir()] == [".gitignore"]  # git leaves it alone
    assert str(placeholder) in holding.read_only
    assert os.getxattr(placeholder, MARK) == b"1"
    holding.release()
    assert not placeholder.exists()


def test_an_existing_hermes_folder_is_held_and_kept(project: Path) -> None:
    (project / ".hermes").mkdir()
    (project / ".hermes" / "approvals.yaml").write_text("rules: []\n")
    holding = hold([str(project)])
    assert str(project / ".hermes") in holding.read_only
    holding.release()
    assert (project / ".hermes" / "approvals.yaml").read_text() == "rules: []\n"
    (project / ".hermes" / "approvals.yaml").unlink()
    hold([str(project)]).release()  # empty now, but the person's (not marked): kept
    assert (project / ".hermes").is_dir()


def test_two_commands_at_once_share_one_placeholder(project: Path) -> None:
    first, second = hold([str(project)]), hold([str(project)])
    first.release()
    assert (project / ".hermes").is_dir()  # the second command still runs over it
    second.release()
    assert not (project / ".hermes").exists()


def test_a_command_of_another_process_keeps_it(project: Path) -> None:
    """The other process holds it as this one does (a shared lock on the folder)."""
    holding = hold([str(project)])
    script = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
        "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); sys.stdin.read()"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", script, str(project / ".hermes")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        holding.release()
        assert (project / ".hermes").is_dir()
    finally:
        other.communicate("")
    hold([str(project)]).release()  # left by a process that ended: the next one removes it
    assert not (project / ".hermes").exists()


def test_one_filled_meanwhile_is_the_persons(project: Path) -> None:
    holding = hold([str(project)])
    (project / ".hermes" / "approvals.yaml").write_text("rules: []\n")  # on the host
    holding.release()
    assert (project / ".hermes" / "approvals.yaml").exists()
    with pytest.raises(OSError):
        os.getxattr(project / ".hermes", MARK)  # no longer ours to remove


def test_a_hermes_link_cannot_be_held(project: Path, tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (project / ".hermes").symlink_to(tmp_path / "rules")
    with pytest.raises(HeldError, match="is a link"):
        hold([str(project)])


def test_a_place_where_nothing_can_be_made_holds_nothing(project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may make a folder anywhere")
    project.chmod(0o555)
    try:
        assert hold([str(project)]).read_only == []
    finally:
        project.chmod(0o755)


def test_the_git_dirs_executable_parts(project: Path, tmp_path: Path) -> None:
    """config and hooks of the repository, of a submodule's git dir and of a linked
    worktree (its commondir and gitdir too); the git dirs themselves pinned; the `.git`
    files of the checkouts inside."""
    lib = tmp_path / "lib"
    lib.mkdir()
    _git(lib, "init", "-q")
    _git(
        lib, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x"
    )
    _git(project, "init", "-q")
    _git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "lib")
    _git(project, "worktree", "add", "-q", "wt")
    holding = hold([str(project)])
    git = str(project / ".git")
    try:
        assert holding.pinned == [git, f"{git}/worktrees/wt", f"{git}/modules/lib"]
        for part in ("config", "hooks"):
            assert f"{git}/{part}" in holding.read_only
            assert f"{git}/modules/lib/{part}" in holding.read_only
        for part in ("commondir", "gitdir"):
            assert f"{git}/worktrees/wt/{part}" in holding.read_only
        assert str(project / "lib" / ".git") in holding.read_only
        assert str(project / "wt" / ".git") in holding.read_only
    finally:
        holding.release()
    assert (project / ".git" / "hooks").is_dir()  # git's own: kept


def test_a_missing_hooks_folder_is_a_placeholder(project: Path) -> None:
    _git(project, "init", "-q", "--template=")
    hooks = project / ".git" / "hooks"
    assert not hooks.exists()
    holding = hold([str(project)])
    assert hooks.is_dir() and str(hooks) in holding.read_only
    holding.release()
    assert not hooks.exists()
