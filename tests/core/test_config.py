"""config.yaml: clear errors, atomic writes, a user's file never mangled or lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.config import (
    ConfigError,
    ensure_home,
    hermes_home,
    load_config,
    set_path,
    update_config,
)

HAND_WRITTEN = """\
# my config, written by hand
model:
  name: gpt-4o   # the good one
  temperature: 0.2
agent:
  max_turns: 30
"""


def test_home_defaults_to_dot_hermes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    assert hermes_home() == Path.home() / ".hermes"
    monkeypatch.setenv("HERMES_HOME", "~/elsewhere")
    assert hermes_home() == Path.home() / "elsewhere"


def test_ensure_home_creates_the_layout(home: Path) -> None:
    assert ensure_home() == []
    assert {p.name for p in home.iterdir()} == {"logs", "state", "plugins", "config.yaml"}


def test_missing_config_is_empty(home: Path) -> None:
    config = load_config()
    assert (config.data, config.error) == ({}, "")
    assert config.get("a.b", 5) == 5


def test_corrupt_config_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  name: x\n  bad: [unclosed\nagent: {}\n")
    config = load_config(path)
    assert config.data == {}
    assert "line 4" in config.error and str(path) in config.error


def test_non_mapping_top_level(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("- a\n- b\n")
    assert "must be a mapping" in load_config(path).error


def test_update_keeps_comments_order_and_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN)
    update_config(lambda d: set_path(d, "agent.disabled_toolsets", ["web"]), path)
    text = path.read_text()
    assert text.startswith(HAND_WRITTEN.rstrip("\n").rsplit("\n", 1)[0])
    assert "# the good one" in text and "temperature: 0.2" in text
    assert load_config(path).get("agent") == {"max_turns": 30, "disabled_toolsets": ["web"]}


def test_update_refuses_to_overwrite_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    broken = "model: [oops\n"
    path.write_text(broken)
    with pytest.raises(ConfigError, match="line 2"):
        update_config(lambda d: set_path(d, "a", 1), path)
    assert path.read_text() == broken


def test_update_creates_a_private_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    update_config(lambda d: set_path(d, "a.b", [1]), path)
    assert load_config(path).data == {"a": {"b": [1]}}
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config.yaml.lock", "config.yaml"]


def test_update_keeps_existing_permissions(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n")
    os.chmod(path, 0o640)
    update_config(lambda d: set_path(d, "b", 2), path)
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_read_only_home_gives_a_clear_error(tmp_path: Path, make_read_only) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN)
    make_read_only(tmp_path)
    with pytest.raises(ConfigError, match="cannot write"):
        update_config(lambda d: set_path(d, "x", 1), path)
    assert path.read_text() == HAND_WRITTEN


def test_a_failed_write_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk mid-write: the old file stays whole and no temp file is left."""
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN)

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ConfigError, match="No space left on device"):
        update_config(lambda d: set_path(d, "x", 1), path)
    assert path.read_text() == HAND_WRITTEN
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config.yaml.lock", "config.yaml"]


def test_first_run_writes_a_commented_config_once(home: Path) -> None:
    ensure_home()
    text = (home / "config.yaml").read_text()
    assert text.startswith("# hermes-tui") and load_config().data == {}
    (home / "config.yaml").write_text("agent: {max_turns: 3}\n")
    ensure_home()
    assert (home / "config.yaml").read_text() == "agent: {max_turns: 3}\n"


def test_the_first_runs_comments_stay_when_a_choice_is_first_saved(home: Path) -> None:
    ensure_home()
    first = (home / "config.yaml").read_text()
    update_config(lambda d: set_path(d, "tools.disabled", ["patch"]))
    text = (home / "config.yaml").read_text()
    assert text.startswith(first.rstrip()) and load_config().get("tools.disabled") == ["patch"]
    (home / "config.yaml").write_text("~\n")  # a null document is no comment to keep
    update_config(lambda d: set_path(d, "a", 1))
    assert load_config().data == {"a": 1}


def test_concurrent_updates_are_all_saved(tmp_path: Path) -> None:
    """Read-modify-write is locked: twenty writers, twenty keys, none lost."""
    import threading

    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN)
    barrier = threading.Barrier(20)

    def write(n: int) -> None:
        barrier.wait()
        update_config(lambda d: set_path(d, f"keys.k{n}", n), path)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert load_config(path).get("keys") == {f"k{n}": n for n in range(20)}
    assert "# the good one" in path.read_text()


def test_first_run_never_overwrites_a_config_written_meanwhile(home: Path) -> None:
    from workbench.core.storage.atomic import atomic_write_text

    home.mkdir(parents=True)
    (home / "config.yaml").write_text("agent: {max_turns: 3}\n")
    assert atomic_write_text(home / "config.yaml", "other\n", replace=False) is False
    assert (home / "config.yaml").read_text() == "agent: {max_turns: 3}\n"
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]  # no temp file left
