"""A terminal call's `workdir` never moves where commands may write (issue 36, item 1): one
outside the working directory and the write roots asks, headless it is refused, and `--yes`
never approves it, with the sandbox or without; one inside runs as before, and what it
changes a checkpoint of the session's working directory holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run
from workbench.core.policy.gate import WORKDIR_OUTSIDE, check_call


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("work", "roots", "outside")}
    for folder in found.values():
        folder.mkdir()
    (found["work"] / "src").mkdir()
    (found["work"] / "door").symlink_to(found["outside"])
    return found


def _finding(places: dict[str, Path], workdir: str, command: str = "ls"):
    check = check_call(
        "terminal",
        {"command": command, "workdir": workdir},
        places["work"],
        roots=[str(places["roots"])],
    )
    found = [f for f in check.verdict.findings if f.rule == WORKDIR_OUTSIDE] if check else []
    return found[0] if found else None


def test_a_workdir_outside_the_writable_places_asks_in_person(places: dict[str, Path]) -> None:
    for outside in (str(places["outside"]), "/", "door", "..", str(Path.home())):
        finding = _finding(places, outside)
        assert finding is not None and finding.in_person, outside
        assert "outside the working directory and the write roots" in finding.reason
    for inside in ("src", str(places["work"]), str(places["roots"]), "."):
        assert _finding(places, inside) is None, inside


@pytest.fixture
def project(cli_env, home: Path, tmp_path: Path) -> dict[str, object]:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "main.py").write_text("print('hello')\n")
    user = tmp_path / "user"
    user.mkdir()
    (user / ".bashrc").write_text("alias ll='ls -l'\n")
    home.mkdir()
    return {"env": {**cli_env, "HOME": str(user)}, "work": work, "user": user, "home": home}


def _term(project: dict, args: dict, *flags: str) -> dict:
    out = run(project["env"], "call", "terminal", "--args", json.dumps(args), *flags,
              "--cwd", str(project["work"]), cwd=project["work"])  # fmt: skip
    assert out.stdout, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("config", ["", "terminal:\n  sandbox: false\n"], ids=["default", "off"])
def test_yes_never_approves_a_workdir_outside(project: dict, config: str) -> None:
    (project["home"] / "config.yaml").write_text(config)
    args = {"command": "echo x >> .bashrc", "workdir": str(project["user"])}
    for flags in (("--yes",), ()):
        out = _term(project, args, *flags)
        assert out["status"] == "denied" and out["exit_code"] == -1, out
        assert "outside the working directory and the write roots" in out["error"]
    assert "never approves this, sandbox or not" in _term(project, args, "--yes")["error"]
    assert (project["user"] / ".bashrc").read_text() == "alias ll='ls -l'\n"
    said = run(project["env"], "approvals", "test", "--tool", "terminal", "--args",
               json.dumps(args), "--cwd", str(project["work"]), "--json")  # fmt: skip
    assert json.loads(said.stdout)["outcome"] == "ask"


def test_a_workdir_inside_runs_and_a_checkpoint_of_the_session_holds_its_changes(
    project: dict,
) -> None:
    """The checkpoint is of the session's working directory; the command writes only
    there (and in the write roots), wherever inside it starts."""
    args = {"command": "pwd && echo changed > main.py", "workdir": "src"}
    out = _term(project, args, "--yes")
    assert out["exit_code"] == 0 and out["output"].strip().endswith("/work/src"), out
    assert (project["work"] / "src" / "main.py").read_text() == "changed\n"
    restore = run(project["env"], "checkpoints", "restore", "--yes",
                  "--cwd", str(project["work"]), cwd=project["work"])  # fmt: skip
    assert restore.returncode == 0, restore.stdout + restore.stderr
    assert (project["work"] / "src" / "main.py").read_text() == "print('hello')\n"
