"""Private state: what the app creates under HERMES_HOME is 0700 / 0600, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.core.config import ensure_home
from workbench.core.report import home_exposure
from workbench.core.storage.private import open_private, private_dir, tighten


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most careless umask: everything would be created readable and writable by all."""
    old = os.umask(0)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_private_dir_creates_every_missing_level_private(tmp_path: Path, open_umask) -> None:
    os.chmod(tmp_path, 0o755)
    private_dir(tmp_path / "a" / "b" / "c")
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
    assert mode(tmp_path) == 0o755  # a parent that existed is the user's: left alone


def test_open_private_creates_0600_and_tightens_an_old_file(tmp_path: Path, open_umask) -> None:
    with open_private(tmp_path / "logs" / "x.log") as handle:
        handle.write("one\n")
    assert mode(tmp_path / "logs") == 0o700 and mode(tmp_path / "logs" / "x.log") == 0o600
    old = tmp_path / "old.log"
    old.write_text("before\n")
    os.chmod(old, 0o644)
    with open_private(old) as handle:
        handle.write("after\n")
    assert mode(old) == 0o600 and old.read_text() == "before\nafter\n"


def test_open_private_never_follows_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    (tmp_path / "log").symlink_to(victim)
    with pytest.raises(OSError):
        open_private(tmp_path / "log")
    assert victim.read_text() == "mine\n"


def test_tighten_leaves_links_alone_and_keeps_the_owner_bits(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o755)
    assert tighten(script) and mode(script) == 0o700
    target = tmp_path / "shared"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    (tmp_path / "link").symlink_to(target)
    assert not tighten(tmp_path / "link") and mode(target) == 0o755
    assert not tighten(tmp_path / "missing")


def test_a_shared_sticky_folder_is_never_closed(tmp_path: Path, open_umask) -> None:
    """A log or spill file put in /tmp (or any sticky, shared folder) is private itself; the
    folder stays open to others, as root too: closing it would break every other user's."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with open_private(shared / "x.log") as handle:
        handle.write("one\n")
    private_dir(shared)
    assert not tighten(shared)
    assert stat.S_IMODE(os.lstat(shared).st_mode) == 0o1777
    assert mode(shared / "x.log") == 0o600


def test_an_old_readable_home_is_tightened_at_start(tmp_path: Path, open_umask) -> None:
    home = tmp_path / "home"
    for sub in ("", "sessions", "logs", "memories"):
        (home / sub).mkdir(mode=0o755, exist_ok=True)
    (home / "config.yaml").write_text("model: {}\n")
    (home / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    assert home_exposure(home)  # what doctor says before
    assert ensure_home(home) == []
    assert mode(home) == 0o700
    for name in ("sessions", "logs", "memories", "state", "plugins"):
        assert mode(home / name) == 0o700, name
    assert mode(home / "config.yaml") == 0o600 and mode(home / ".env") == 0o600
    assert home_exposure(home) == ""


def test_a_home_behind_a_link_is_tightened_where_it_is(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.chmod(real, 0o755)
    (tmp_path / "home").symlink_to(real)
    assert ensure_home(tmp_path / "home") == []
    assert mode(real) == 0o700


def test_doctor_says_when_the_home_stays_readable(tmp_path: Path, cli_env, home: Path) -> None:
    """A home that is not ours to tighten (another owner) is named as a problem."""
    from tests.support.cli import run

    assert "private)" in run(cli_env, "doctor").stdout
    if os.geteuid() != 0:
        pytest.skip("changing the home's owner needs root")
    os.chmod(home, 0o755)
    os.chown(home, 65534, 65534)
    out = run(cli_env, "doctor")
    assert "READABLE BY OTHERS" in out.stdout and f"{home} is mode 755" in out.stdout
    assert out.returncode == 1
