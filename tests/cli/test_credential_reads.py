"""Headless, for real: a model's calls that would read a key through a folder or a second
name are denied, and no key is printed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run

KEY = "secret-key-material-4c1d"


@pytest.fixture
def scratch(cli_env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY}\n")
    work = home / "work"
    work.mkdir()
    return {**cli_env, "HOME": str(home)}, work


def call(env: dict[str, str], cwd: Path, tool: str, args: dict) -> str:
    out = run(env, "call", tool, "--args", json.dumps(args), cwd=cwd)
    return out.stdout + out.stderr


@pytest.mark.parametrize(
    "command",
    [
        "grep -r . ~/.ssh",
        "tar cf - -C ~ .ssh | tar xOf -",
        "find ~/.ssh -type f -exec cat {} +",
        "link ~/.ssh/id_rsa k.txt",
        "find ~/.ssh -name id_rsa -exec link {} k.txt \\;",
    ],
)
def test_reads_through_a_folder_or_a_new_link_are_denied(scratch, command: str) -> None:
    env, work = scratch
    said = call(env, work, "terminal", {"command": command})
    assert '"status": "denied"' in said and KEY not in said, said
    assert not (work / "k.txt").exists()


def test_a_hard_link_made_earlier_is_the_key(scratch) -> None:
    env, work = scratch
    os.link(Path(env["HOME"]) / ".ssh" / "id_rsa", work / "k.txt")
    for tool, args in (
        ("read_file", {"path": "k.txt"}),
        ("search_files", {"path": "k.txt", "pattern": "secret"}),
        ("search_files", {"path": ".", "pattern": "secret"}),
        ("terminal", {"command": "cat k.txt"}),
    ):
        said = call(env, work, tool, args)
        assert KEY not in said, (tool, args, said)
