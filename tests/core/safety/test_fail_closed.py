"""Fail closed: what the analyser cannot fully follow asks, run for real with no one to ask.

Each command targets a real file `f` in a scratch project through `hermes-tui call terminal`
with no terminal, so an ask is a denial and the file must survive. Benign commands that are
fully understood still run unasked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.calls import Scratch, terminal
from workbench.core.safety import analyze_command


@pytest.fixture(autouse=True)
def gate_alone(scratch: Scratch) -> None:
    """The detector alone decides here: with checkpoints on, deleting `f` (which a
    checkpoint would hold) runs unasked by design, and these tests are about whether the
    detector sees the `rm f` at all."""
    config = scratch.hermes / "config.yaml"
    config.write_text(config.read_text() + "\ncheckpoints:\n  enabled: false\n")


BYPASSES = [
    "shopt -s expand_aliases; alias r=rm; r f",
    "shopt -s expand_aliases\nalias r='rm -f'\nr f",
    'w(){ "$@"; }; w rm f',
    'bash <<< "rm f"',
    "bash <<EOF\nrm f\nEOF",
    "python3 <<< \"import os; os.remove('f')\"",
    "python3 - <<'EOF'\nimport shutil as s, os\ns.move('f', '/dev/null') if False else os.unlink('f')\nEOF",
    'make -f - <<< "all:\n\trm f"',
    "printf 'all:\\n\\trm f\\n' | make -f -",
    "python3 -c \"__import__('os').remove('f')\"",
    "python3 -c \"import os as o; o.remove('f')\"",
    "python3 -c \"from os import unlink as u; u('f')\"",
    "python3 -c \"o = open; o('f', 'w').write('')\"",
    "python3 -c \"import pathlib; pathlib.Path('f').unlink()\"",
    "python3 -c \"import shutil; shutil.rmtree('d')\"",
    "python3 -c \"getattr(__import__('os'), 'remove')('f')\"",
    "python3 -c \"exec('import os; os.remove(chr(102))')\"",
    "awk 'BEGIN{system(\"rm f\")}'",
    'awk \'BEGIN{print "" > "f"}\'',
    "sed -n '1e rm f' f",
    "sed -n 's/.*/rm f/e' f",
    "git -c alias.x='!rm f' x",
    "strace -o /dev/null rm f",
    'script -qc "rm f" /dev/null',
    "ssh-agent rm f",
    "fakeroot rm f",
    "setpriv rm f",
    "runuser -u root -- rm f",
    'watch -n 1 -g "rm f"',
    'env -S "rm f"',
    "taskset 0x1 rm f",
    "tar -cf f d",
    "ex -sc '%d|x' f",
    'foo-runner <<< "rm f"',
    "trap 'rm f' EXIT",
    "coproc rm f",
    "hash -p /bin/rm r; r f",
    "H=f; rm $H",
    "printf -v c rm; $c f",
    # a wrapper's value in its option's word, or an empty environment
    "env -S'rm f'",
    "env - rm f",
    # writers named by an option or an operand, or a destination computed at run time
    "shuf -o f d/kept",
    "xxd d/kept f",
    'cp d/kept "$(echo f)"',
    # rules, modules and code reached in ways the words did not show
    "make --eval='all:; rm f'",
    "python3 -m venv --clear d",
    "python3 -c \"import os; os.__dict__['remove']('f')\"",
    # shells reached by other doors
    "echo 'rm f' | bash -e",
    "echo 'rm f' | (sh)",
    "sh < <(echo rm f)",
    "sh -c -- 'rm f'",
    "bash -c -e 'rm f'",
    "bwrap --bind / / rm f",
    "start-stop-daemon --start --exec /bin/rm -- f",
]


def test_git_settings_that_run_programs_later_ask(scratch, capsys) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(scratch.project)], check=True)
    f = scratch.project / "f"
    f.write_text("precious\n")
    for command in ("git config alias.x '!rm f'", "git config core.hooksPath /tmp"):
        out = terminal(capsys, command, scratch.project)
        assert out.status == "denied", (command, out.stdout)
    assert "alias" not in (scratch.project / ".git" / "config").read_text()
    assert terminal(capsys, "git config user.name me", scratch.project).ran


GIT_RUNS = [
    "git ls-remote --upload-pack='rm f;' .",
    "git fetch --upload-pack='rm f;' .",
    "GIT_EXTERNAL_DIFF='rm f' git diff",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.y GIT_CONFIG_VALUE_0='!rm f' git y",
    "git -c protocol.ext.allow=always ls-remote 'ext::sh -c rm% f'",
]


@pytest.mark.parametrize("command", GIT_RUNS)
def test_command_lines_git_runs_ask(scratch, capsys, command: str) -> None:
    import subprocess

    def git(*args: str) -> None:
        ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(["git", *ident, *args], cwd=scratch.project, check=True, text=True)

    git("init", "-q")
    (scratch.project / "t").write_text("one\n")
    git("add", "t")
    git("commit", "-qm", "t")
    (scratch.project / "t").write_text("two\n")  # a change for an external diff to show
    f = scratch.project / "f"
    f.write_text("precious\n")
    out = terminal(capsys, command, scratch.project)
    assert out.status == "denied", (command, out.stdout)
    assert f.read_text() == "precious\n"


@pytest.mark.parametrize("command", BYPASSES)
def test_what_is_not_understood_asks(scratch, capsys, command: str) -> None:
    f = scratch.project / "f"
    f.write_text("precious\n")
    (scratch.project / "d").mkdir()
    (scratch.project / "d" / "kept").write_text("kept")
    out = terminal(capsys, command, scratch.project)
    assert out.status == "denied", (command, out.stdout)
    assert f.read_text() == "precious\n" and (scratch.project / "d" / "kept").exists()


BENIGN = [
    "alias ll='ls -la'; ll",
    "python3 -c 'print(sum(range(10)))'",
    "python3 -c \"print('a'.replace('a', 'b'))\"",
    'python3 -c "import os; print(os.getcwd())"',
    'python3 <<< "print(6 * 7)"',
    "bash <<< 'echo hi'",
    "grep precious <<< precious",
    "awk '{print $1}' f",
    "awk '{print $1 > \"/dev/stderr\"}' f",
    "sed -n '/pre/,/x/p' f",
    "sed 's/a/b/g' f",
    "git -c color.ui=never status --short",
    "strace -V",
    "rm --help",
    "tar --version",
    "rsync --dry-run -a d/ e/",
    "git clean -n",
    "tar -cf new.tar d",
]


@pytest.mark.parametrize("command", BENIGN)
def test_fully_understood_commands_run_unasked(scratch, capsys, command: str) -> None:
    (scratch.project / "f").write_text("precious\n")
    (scratch.project / "d").mkdir()
    (scratch.project / ".git").mkdir()  # `git status` needs none, but `git clean -n` does
    assert not analyze_command(command, cwd=scratch.project).dangerous, command
    out = terminal(capsys, command, scratch.project)
    assert out.status != "denied", (command, out.stdout)


def test_a_parser_failure_asks(tmp_path: Path) -> None:
    deep = "(" * 3000 + "rm f" + ")" * 3000
    verdict = analyze_command(deep, cwd=tmp_path)
    assert verdict.dangerous and not verdict.hardline


def test_another_hermes_tui_run_from_the_terminal_asks(scratch, capsys) -> None:
    # `hermes-tui call terminal --yes` from the model's terminal approved its own rm
    import json
    import sys

    binary = Path(sys.executable).parent / "hermes-tui"
    (scratch.project / "d").mkdir()
    (scratch.project / "d" / "kept").write_text("kept")
    inner = json.dumps({"command": "rm -rf d"})
    command = f"{binary} call terminal --yes --args '{inner}'"
    out = terminal(capsys, command, scratch.project)
    assert out.status == "denied", out.stdout
    assert (scratch.project / "d" / "kept").exists()
    out = terminal(capsys, f"{binary} toolsets enable web", scratch.project)
    assert out.status == "blocked", out.stdout


def test_an_archive_holding_a_git_hook_asks_before_it_is_unpacked(scratch, capsys) -> None:
    import io
    import tarfile

    (scratch.project / ".git" / "hooks").mkdir(parents=True)
    with tarfile.open(scratch.project / "x.tgz", "w:gz") as archive:
        info = tarfile.TarInfo(".git/hooks/post-checkout")
        info.size, info.mode = 9, 0o755
        archive.addfile(info, io.BytesIO(b"rm -rf ~\n"))
    out = terminal(capsys, "tar -xzf x.tgz", scratch.project)
    assert out.status == "denied", out.stdout
    assert not (scratch.project / ".git" / "hooks" / "post-checkout").exists()
