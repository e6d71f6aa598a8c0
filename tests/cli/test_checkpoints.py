"""`hermes-tui checkpoints list|diff|restore`, run as a user runs them: the installed command in
a subprocess, over a real store in a private HERMES_HOME and real files in a tmp project."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.checkpoints import agent_turn, files, make_project, snapshot
from tests.support.cli import BIN, run
from workbench.core.checkpoints import CheckpointStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def store(home: Path) -> CheckpointStore:
    return CheckpointStore(home)


# -- list --------------------------------------------------------------------------


def test_an_empty_list_says_so_and_how_they_are_taken(cli_env, project: Path) -> None:
    out = run(cli_env, "checkpoints", "list", "--cwd", str(project))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"no checkpoints for {project} yet")
    listed = json.loads(run(cli_env, "checkpoints", "list", "--cwd", str(project), "--json").stdout)
    assert listed["checkpoints"] == [] and listed["enabled"] is True


def test_an_empty_list_with_checkpoints_off_says_how_to_turn_them_on(
    cli_env, home: Path, project: Path
) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    out = run(cli_env, "checkpoints", "--cwd", str(project))  # `list` is the default
    assert out.returncode == 0, out.stderr
    assert "checkpoints are off" in out.stdout and "checkpoints.enabled: true" in out.stdout


def test_list_shows_the_newest_first_with_turn_reason_and_files(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    first = snapshot(store, project, "write_file a.txt", 1)
    (project / "a.txt").write_text("changed\n")
    second = snapshot(store, project, "terminal: xz b.txt", 2)
    out = run(cli_env, "checkpoints", "list", cwd=project)  # the current directory by default
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"2 checkpoint(s) of {project.resolve()}, newest first:"
    assert (
        lines[1].startswith(f"  {second.id}  ")
        and "  turn 2  terminal: xz b.txt  (3 files)" in lines[1]
    )
    assert lines[2].startswith(f"  {first.id}  ") and "  turn 1  write_file a.txt" in lines[2]
    rows = json.loads(run(cli_env, "checkpoints", "list", "--json", cwd=project).stdout)
    assert [r["id"] for r in rows["checkpoints"]] == [second.id, first.id]
    assert rows["checkpoints"][0] | {"time": None, "created": None} == {
        "id": second.id, "created": None, "time": None, "turn": 2, "session": "s1",
        "reason": "terminal: xz b.txt", "files": 3,
    }  # fmt: skip


# -- diff --------------------------------------------------------------------------


def test_diff_counts_added_changed_deleted_and_shows_each_file(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    checkpoint = agent_turn(store, project)
    out = run(cli_env, "checkpoints", "diff", "--cwd", str(project))  # the latest
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"checkpoint {checkpoint.id}  " in text
    assert "1 added, 1 changed, 1 deleted since" in text
    assert re.search(r"^  added +c\.txt$", text, re.M)
    assert re.search(r"^  changed +a\.txt$", text, re.M)
    assert re.search(r"^  deleted +b\.txt$", text, re.M)
    assert "\n-alpha\n+ALPHA, by the agent\n" in text
    assert "\n-beta\n" in text and "\n+new\n" in text
    by_id = run(cli_env, "checkpoints", "diff", checkpoint.id, "--cwd", str(project))
    assert by_id.stdout == text


# -- restore -----------------------------------------------------------------------


def test_without_a_terminal_or_yes_a_restore_says_what_it_would_do_and_changes_nothing(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    agent_turn(store, project)
    before = files(project)
    out = run(cli_env, "checkpoints", "restore", "--cwd", str(project))
    assert out.returncode == 1
    assert files(project) == before
    assert "nothing was changed" in out.stderr and "--yes" in out.stderr
    assert out.stdout.splitlines()[2:] == [  # after the checkpoint and the directory
        "  deletes (added since the checkpoint): 1",
        "    c.txt",
        "  writes back (changed or deleted since): 2",
        "    a.txt",
        "    b.txt",
    ]
    assert len(store.list(str(project))) == 1  # not even a backup was taken


def restore_all(env: dict[str, str], project: Path) -> str:
    """`checkpoints restore --yes` of the latest; returns the backup's id from its output."""
    out = run(env, "checkpoints", "restore", "--yes", "--cwd", str(project))
    assert out.returncode == 0, out.stderr
    undo = re.search(r"undo with: hermes-tui checkpoints restore (\w+) --cwd (\S+)", out.stdout)
    assert undo is not None and undo.group(2) == str(project), out.stdout
    return undo.group(1)


def test_yes_restores_and_names_the_backup(cli_env, store: CheckpointStore, project: Path) -> None:
    original = files(project)
    agent_turn(store, project)
    backup = restore_all(cli_env, project)
    assert files(project) == original
    newest = store.list(str(project))[0]
    assert newest.id == backup and newest.reason.startswith("before restore")


def test_restoring_the_backup_with_yes_undoes_the_restore(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    agent_turn(store, project)
    changed = files(project)
    backup = restore_all(cli_env, project)
    again = run(cli_env, "checkpoints", "restore", backup, "--yes", "--cwd", str(project))
    assert again.returncode == 0, again.stderr
    assert files(project) == changed


def test_yes_keeps_hand_edits_and_names_them_unless_told_to_overwrite(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    agent_turn(store, project)
    (project / "src" / "app.py").write_text("print('my own edit')\n")  # by hand: no ledger
    alone = run(cli_env, "checkpoints", "restore", "--file", "src/app.py", "--yes", cwd=project)
    assert alone.returncode == 1  # the only file is a hand edit: kept, nothing changed
    assert "nothing restored from checkpoint" in alone.stdout and "undo" not in alone.stdout
    out = run(cli_env, "checkpoints", "restore", "--yes", "--cwd", str(project))
    assert out.returncode == 0, out.stderr
    assert "src/app.py  ← changed by hand since (not by the agent)" in out.stdout
    assert "kept your edits to src/app.py" in out.stdout
    assert (project / "src" / "app.py").read_text() == "print('my own edit')\n"
    assert (project / "a.txt").read_text() == "alpha\n"  # the agent's change was undone
    # the latest is now the backup: restore the first checkpoint, overwriting the edit
    first = store.list(str(project))[-1]
    out = run(
        cli_env, "checkpoints", "restore", first.id, "--yes", "--overwrite-hand-edits",
        "--cwd", str(project),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"


def test_file_restores_only_that_file(cli_env, store: CheckpointStore, project: Path) -> None:
    agent_turn(store, project)
    out = run(cli_env, "checkpoints", "restore", "--file", "b.txt", "--yes", cwd=project)
    assert out.returncode == 0, out.stderr
    assert (project / "b.txt").read_text() == "beta\n"
    assert (project / "a.txt").read_text() == "ALPHA, by the agent\n" and (
        project / "c.txt"
    ).exists()
    by_path = run(
        cli_env, "checkpoints", "restore", "--file", str(project / "a.txt"), "--yes",
        "--cwd", str(project),
    )  # fmt: skip
    assert by_path.returncode == 0, by_path.stderr


@pytest.mark.e2e  # the installed command as a process: on a pseudo-terminal
def test_on_a_terminal_it_asks_and_only_y_restores(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    agent_turn(store, project)
    (project / "src" / "app.py").write_text("mine\n")
    before = files(project)
    declined = on_a_terminal(cli_env, project, "n\nn\n")
    assert declined.returncode == 1
    assert "Overwrite your changes to 1 file marked above? [y/N]" in declined.stderr
    assert "Restore? [y/N]" in declined.stderr and files(project) == before
    keep = on_a_terminal(cli_env, project, "\ny\n")  # Enter keeps the hand edit; y restores
    assert keep.returncode == 0, keep.stderr
    assert (project / "src" / "app.py").read_text() == "mine\n"
    assert (project / "b.txt").read_text() == "beta\n"


def on_a_terminal(env: dict[str, str], project: Path, answers: str) -> subprocess.CompletedProcess:
    """`checkpoints restore` with a terminal on stdin (a pty), the answers typed ahead."""
    leader, follower = os.openpty()
    try:
        os.write(leader, answers.encode())
        return subprocess.run(
            [str(BIN / "hermes-tui"), "checkpoints", "restore", "--cwd", str(project)],
            env=env,
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(follower)
        os.close(leader)


# -- errors: a clear message, exit 2, nothing changed -------------------------------


def test_a_cwd_that_is_not_a_directory(cli_env, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for cwd in (tmp_path / "file", tmp_path / "missing"):
        for action in ("list", "diff", "restore"):
            out = run(cli_env, "checkpoints", action, "--cwd", str(cwd))
            assert out.returncode == 2
            assert f"{cwd} is not a directory" in out.stderr


def test_an_unknown_id(cli_env, store: CheckpointStore, project: Path) -> None:
    agent_turn(store, project)
    before = files(project)
    for args in (("diff",), ("restore", "--yes")):
        out = run(cli_env, "checkpoints", *args, "0123456789ab", cwd=project)
        assert out.returncode == 2
        assert "0123456789ab" in out.stderr and "nothing was changed" in out.stderr
    assert files(project) == before


def test_no_checkpoint_yet_to_diff_or_restore(cli_env, project: Path) -> None:
    for action in ("diff", "restore"):
        out = run(cli_env, "checkpoints", action, cwd=project)
        assert out.returncode == 2 and out.stderr.startswith("hermes-tui: ")


def test_a_file_outside_the_working_directory(
    cli_env, store: CheckpointStore, project: Path, tmp_path: Path
) -> None:
    agent_turn(store, project)
    before = files(project)
    (tmp_path / "outside.txt").write_text("x")
    for path in (str(tmp_path / "outside.txt"), "../outside.txt"):
        out = run(cli_env, "checkpoints", "restore", "--file", path, "--yes", cwd=project)
        assert out.returncode == 2, out.stdout
        assert "outside" in out.stderr
    assert files(project) == before
    assert len(store.list(str(project))) == 1


def test_options_of_another_action_are_refused(cli_env, project: Path) -> None:
    for args in (("list", "--yes"), ("diff", "--file", "a.txt"), ("--json", "diff")):
        out = run(cli_env, "checkpoints", *args, cwd=project)
        assert out.returncode == 2 and out.stderr


def test_the_command_loads_no_textual(cli_env, project: Path) -> None:
    probe = (
        "import sys; from workbench.cli.main import main; main(['checkpoints', 'list']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')), "
        "file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=cli_env, cwd=project, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == "[]"


@pytest.mark.parametrize("damage", ["no HEAD", "objects lost"])
def test_a_damaged_store(
    cli_env, home: Path, store: CheckpointStore, project: Path, damage
) -> None:
    agent_turn(store, project)
    before = files(project)
    shadow = store.location(project)
    if damage == "no HEAD":
        (shadow / "HEAD").unlink()
    else:
        for folder in (shadow / "objects").iterdir():
            if len(folder.name) == 2:  # the loose objects: commits, trees, blobs
                shutil.rmtree(folder)
    for args in (("list",), ("diff",), ("restore", "--yes")):
        out = run(cli_env, "checkpoints", *args, cwd=project)
        assert out.returncode == 2, (args, out.stdout)
        assert "damaged" in out.stderr and "nothing was changed" in out.stderr
        assert "Traceback" not in out.stderr
    assert files(project) == before


# -- a working directory whose shape changed since -------------------------------------


def test_a_folder_that_became_a_file_is_restored_when_told_to_overwrite(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    original = files(project)
    snapshot(store, project, "before", 1)
    shutil.rmtree(project / "src")
    (project / "src").write_text("a file where a folder was\n")
    out = run(cli_env, "checkpoints", "restore", "--yes", "--overwrite-hand-edits", cwd=project)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert files(project) == original


def test_a_folder_that_became_a_kept_file_refuses_and_changes_nothing(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    snapshot(store, project, "before", 1)
    shutil.rmtree(project / "src")
    (project / "src").write_text("a file where a folder was\n")
    (project / "a.txt").write_text("changed\n")
    before = files(project)
    out = run(cli_env, "checkpoints", "restore", "--yes", cwd=project)
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert "src" in out.stderr and "nothing was restored" in out.stderr
    assert files(project) == before


@pytest.mark.e2e  # the installed command as a process: a file-size limit on it
def test_a_restore_that_fails_midway_says_what_it_did_and_did_not(
    cli_env, store: CheckpointStore, project: Path
) -> None:
    """The disk fills while writing back (a file-size limit on the process stands for it):
    the files written are named, the others too, and the backup that undoes it."""
    (project / "big.txt").write_text("x" * 300_000)
    snapshot(store, project, "before", 1)
    for name in ("a.txt", "big.txt", "b.txt"):
        (project / name).unlink()
        store.record_write(str(project), name)

    def limit() -> None:  # git's objects and the index stay under it, big.txt does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    out = subprocess.run(
        [str(BIN / "hermes-tui"), "checkpoints", "restore", "--yes"],
        env=cli_env, cwd=project, capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL, preexec_fn=limit,
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "stopped at big.txt: the disk is full" in out.stderr
    assert "restored a.txt, b.txt; not restored big.txt" in out.stderr
    undo = re.search(r"undo with: hermes-tui checkpoints restore (\w+)", out.stderr)
    assert undo is not None and (project / "b.txt").exists()
    assert not (project / "big.txt").exists()
    again = run(cli_env, "checkpoints", "restore", undo.group(1), "--yes", cwd=project)
    assert again.returncode == 0, again.stderr  # the backup undoes what was done
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
