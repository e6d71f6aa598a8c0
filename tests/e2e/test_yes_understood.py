"""`--yes` approves only what was understood, through `hermes-tui call` as a script runs it.

Each class of command the gate cannot read (a computed target, a program without a rule given
a computed operand, items xargs reads, inline code that computes what it deletes, code built
at run time) is run headless with `--yes` in a scratch tree: a working directory, a sibling
"outside" folder, HERMES_HOME beside them. Without the sandbox nothing runs and the target is
intact; in the real bubblewrap sandbox it runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import run
from workbench.core.backends.sandbox import bwrap_status

pytestmark = pytest.mark.e2e


def _rm_build(work: Path) -> Callable[[], bool]:
    (work / "build").mkdir()
    (work / "build" / "out.o").write_text("x")
    return lambda: (work / "build" / "out.o").exists()


def _data(work: Path) -> Callable[[], bool]:
    (work / "data.txt").write_text("precious\n")
    (work / "list.txt").write_text("data.txt\n")
    data = work / "data.txt"
    return lambda: data.exists() and data.read_text() == "precious\n"


def _computed_target(work: Path) -> Callable[[], bool]:
    (work / "target.txt").write_text("build\n")
    return _rm_build(work)


def _built_code(work: Path) -> Callable[[], bool]:
    (work / "cmd.txt").write_text("rm -rf build\n")
    return _rm_build(work)


# (class, setup returning "is the target intact", command)
CLASSES = [
    ("computed target", _computed_target, 'rm -rf "$(cat target.txt)"'),
    ("program without a rule, computed operand", _data, "xz $(cat list.txt)"),
    ("xargs items from input", _data, "cat list.txt | xargs xz"),
    (
        "inline code computing its target",
        _rm_build,
        "TARGET=build python3 -c \"import shutil, os; shutil.rmtree(os.environ['TAR' + 'GET'])\"",
    ),
    ("code built at run time", _built_code, 'eval "$(cat cmd.txt)"'),
]


@pytest.fixture
def tree(cli_env, home: Path, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """HERMES_HOME, a working directory and an outside folder side by side; a fake user home."""
    home.mkdir()
    work, outside, user = tmp_path / "work", tmp_path / "outside", tmp_path / "user-home"
    for folder in (work, outside, user):
        folder.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    return {**cli_env, "HOME": str(user)}, work


def _config(home: Path, sandbox: bool) -> None:
    (home / "config.yaml").write_text(f"terminal:\n  sandbox: {str(sandbox).lower()}\n")


def _yes(env: dict[str, str], work: Path, command: str) -> tuple[int, dict]:
    args = ["call", "terminal", "--args", json.dumps({"command": command}), "--yes"]
    out = run(env, *args, cwd=work)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


@pytest.mark.parametrize(("kind", "setup", "command"), CLASSES, ids=[c[0] for c in CLASSES])
def test_yes_without_the_sandbox_does_not_run_what_was_not_understood(
    tree, home: Path, tmp_path: Path, kind: str, setup, command: str
) -> None:
    env, work = tree
    _config(home, sandbox=False)
    intact = setup(work)
    code, result = _yes(env, work, command)
    assert code == 1 and result["status"] == "denied", result
    assert "not understood" in result["error"] and "terminal.sandbox" in result["error"]
    assert intact(), f"{kind}: the target changed"
    assert (tmp_path / "outside" / "keep.txt").read_text() == "keep\n"


@pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")
@pytest.mark.parametrize(("kind", "setup", "command"), CLASSES, ids=[c[0] for c in CLASSES])
def test_yes_in_the_sandbox_runs_it_confined(
    tree, home: Path, tmp_path: Path, kind: str, setup, command: str
) -> None:
    env, work = tree
    _config(home, sandbox=True)
    intact = setup(work)
    code, result = _yes(env, work, command)
    assert code == 0 and result.get("exit_code") == 0, result
    assert not intact(), f"{kind}: it did not run"
    assert (tmp_path / "outside" / "keep.txt").read_text() == "keep\n"


def test_the_issue_case_beside_hermes_home(tree, home: Path) -> None:
    """`xz $(find .. -name config.yaml)` from a directory beside HERMES_HOME compressed the
    app's config away, unasked: now --yes does not run it unconfined."""
    env, work = tree
    _config(home, sandbox=False)
    before = (home / "config.yaml").read_text()
    for command in ("xz $(find .. -name config.yaml)", "find .. -name config.yaml | xargs xz"):
        code, result = _yes(env, work, command)
        assert code == 1 and result["status"] == "denied", result
        assert (home / "config.yaml").read_text() == before
        assert not (home / "config.yaml.xz").exists()
