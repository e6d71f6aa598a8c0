"""Each class the gate now reads (text bash evaluates, the rules added beside it), run for
real through `hermes-tui call terminal` headless (no one to ask, so an ask is a refusal):
the file the payload deletes or rewrites is still there, as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run


@pytest.fixture(autouse=True)
def gate_alone(home: Path) -> None:
    """The detector alone decides here: with checkpoints on, replacing `f` (which a
    checkpoint would hold) runs unasked by design; these tests are about the gate reading
    the payload at all."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")


EVALUATED = [
    "x='a[$(rm f)]'; echo $((x))",
    "x='$(rm f)'; echo ${x@P}",
    "printf -v 'a[$(rm f)]' %s 1",
    "compgen -C 'rm f' x",
    "read x <<< 'a[$(rm f)]'; echo $((x))",
]


@pytest.mark.parametrize("command", EVALUATED)
def test_text_bash_evaluates_is_refused_headless(cli_env, tmp_path: Path, command: str) -> None:
    (tmp_path / "f").write_text("keep")
    out = run(cli_env, "call", "terminal", "--args", json.dumps({"command": command}), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert (tmp_path / "f").read_text() == "keep"


def _needs(program: str):
    return pytest.mark.skipif(shutil.which(program) is None, reason=f"{program} not installed")


MISSING_RULES = [
    pytest.param("sqlite3 db \"select writefile('f', 'gone')\"", marks=_needs("sqlite3")),
    pytest.param("sqlite3 db \"VACUUM INTO 'f'\"", marks=_needs("sqlite3")),
    pytest.param(
        "node -e \"const m = require('fs'); m['unl' + 'inkSync']('f')\"", marks=_needs("node")
    ),
    "echo rm f | xargs -I{} sh -c '{}'",
    "echo rm f | xargs -I{} {}",
    "printf 'rm\\0f' | xargs -0 sh -c '\"$@\"' _",
]


@pytest.mark.parametrize("command", MISSING_RULES)
def test_missing_rules_are_refused_headless(cli_env, tmp_path: Path, command: str) -> None:
    (tmp_path / "f").write_text("keep")
    out = run(cli_env, "call", "terminal", "--args", json.dumps({"command": command}), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert (tmp_path / "f").read_text() == "keep"


def test_plain_arithmetic_runs_headless(cli_env, tmp_path: Path) -> None:
    command = "i=2; for ((j=0; j<3; j++)); do i=$((i+j)); done; echo $i"
    out = run(cli_env, "call", "terminal", "--args", json.dumps({"command": command}), cwd=tmp_path)
    assert out.returncode == 0 and json.loads(out.stdout)["output"] == "5\n"
