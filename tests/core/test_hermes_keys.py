"""Hermes's keys read first, ours as aliases, and bad values said with the default used."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core import hermes_keys
from workbench.core.config import load_config


def config(tmp_path: Path, text: str):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return load_config(path)


def test_hermes_name_wins_over_our_alias_which_is_read_alone(tmp_path: Path) -> None:
    both = config(tmp_path, "agent:\n  max_turns: 4\nmodel:\n  max_rounds: 9\n")
    assert hermes_keys.read(both.get, hermes_keys.MAX_TURNS) == hermes_keys.Found(
        4, "agent.max_turns"
    )
    ours = config(tmp_path, "model:\n  max_rounds: 9\n")
    assert hermes_keys.read(ours.get, hermes_keys.MAX_TURNS).value == 9
    assert hermes_keys.read(config(tmp_path, "").get, hermes_keys.MAX_TURNS).value is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("agent:\n  max_turns: ten\n", "agent.max_turns must be a whole number (1 or more), not 'ten'"),
        ("agent:\n  max_turns: -3\n", "agent.max_turns must be 1 or more, not -3"),
        ("agent:\n  max_turns: 2.5\n", "agent.max_turns must be a whole number"),
        ("delegation:\n  max_spawn_depth: true\n", "delegation.max_spawn_depth must be a whole"),
        ("delegation:\n  max_concurrent_children: 0\n", "max_concurrent_children must be 1 or more"),
        ("delegation:\n  child_timeout_seconds: -1\n", "child_timeout_seconds must be 0 or more"),
        ("terminal:\n  timeout: 3m\n", "terminal.timeout must be a whole number (1 or more), not '3m'"),
        ("agent:\n  max_turns: .inf\n", "agent.max_turns must be a whole number (1 or more), not inf"),
        ("delegation:\n  child_timeout_seconds: .nan\n", "child_timeout_seconds must be a number"),
    ],
)  # fmt: skip
def test_a_bad_value_is_said_and_not_used(tmp_path: Path, text: str, said: str) -> None:
    cfg = config(tmp_path, text)
    (problem,) = hermes_keys.problems(cfg.get)
    assert said in problem and problem.endswith("the default is used")
    assert all(hermes_keys.read(cfg.get, key).value is None for key in hermes_keys.KEYS)


def test_a_bad_hermes_value_is_not_replaced_by_our_alias(tmp_path: Path) -> None:
    cfg = config(tmp_path, "agent:\n  max_turns: lots\nmodel:\n  max_rounds: 9\n")
    found = hermes_keys.read(cfg.get, hermes_keys.MAX_TURNS)
    assert found.value is None and found.key == "agent.max_turns" and found.problem


def test_terminal_timeout_comes_from_hermes_variable_when_config_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMINAL_TIMEOUT", "45")
    assert hermes_keys.read(config(tmp_path, "").get, hermes_keys.TERMINAL_TIMEOUT).value == 45
    cfg = config(tmp_path, "terminal:\n  timeout: 7\n")
    assert hermes_keys.read(cfg.get, hermes_keys.TERMINAL_TIMEOUT).value == 7  # config wins
    monkeypatch.setenv("TERMINAL_TIMEOUT", "5m")
    (problem,) = hermes_keys.problems(config(tmp_path, "").get)
    assert problem.startswith("TERMINAL_TIMEOUT must be a whole number")


def test_good_values_are_no_problem(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        "agent:\n  max_turns: 90\nterminal:\n  timeout: 180\ndelegation:\n"
        "  max_spawn_depth: 1\n  max_concurrent_children: 3\n  child_timeout_seconds: 0\n",
    )
    assert hermes_keys.problems(cfg.get) == []
