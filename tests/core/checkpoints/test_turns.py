"""The executor's checkpoints: one snapshot a turn before the first change, none for reads,
the events, the ledger, and the write policy's question."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.waiting import until
from workbench.core.checkpoints import CheckpointSkipped, CheckpointStore, CheckpointTaken
from workbench.core.checkpoints.turns import may_change, reads_only, written_exactly
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import Executor
from workbench.core.runtime import load_runtime


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    return root


def _executor(home: Path, workdir: Path, answer: str = "y") -> tuple[Executor, list, list]:
    runtime = load_runtime(home, load_plugins=False)
    broker = ApprovalBroker()
    asked: list = []
    broker.attach(lambda request: (asked.append(request), broker.answer(request.id, answer)))
    events: list = []
    executor = runtime.executor(broker=broker, cwd=str(workdir), on_event=events.append)
    return executor, events, asked


def _call(name: str, n: int = 0, **args: object) -> dict:
    return {"id": f"c{n}", "name": name, "arguments": json.dumps(args)}


def _checkpoint_events(events: list) -> list:
    return [e for e in events if isinstance(e, CheckpointTaken | CheckpointSkipped)]


async def test_one_snapshot_a_turn_before_the_first_change(home: Path, workdir: Path) -> None:
    executor, events, asked = _executor(home, workdir)
    await executor.run(
        [
            _call("read_file", 0, path="a.txt"),
            _call("write_file", 1, path="a.txt", content="1\n"),
            _call("write_file", 2, path="b.txt", content="2\n"),
            _call("terminal", 3, command="echo 3 > a.txt"),
        ]
    )
    (taken,) = _checkpoint_events(events)
    assert isinstance(taken, CheckpointTaken)
    # the writes of two files run in parallel: the first to get there takes it
    assert taken.checkpoint.reason in ("write_file a.txt", "write_file b.txt")
    assert taken.checkpoint.turn == 1
    assert asked == []  # each replaced file is held by the turn's checkpoint
    # the next turn changes files again: a new snapshot, holding what the last turn left
    await executor.run([_call("write_file", 4, path="a.txt", content="4\n")])
    second = _checkpoint_events(events)[1]
    assert isinstance(second, CheckpointTaken) and second.checkpoint.turn == 2
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir, taken.checkpoint.id)
    assert plan.writes == ("a.txt", "b.txt") and plan.hand_edited == ()  # all the agent's
    executor.shutdown()


async def test_no_snapshot_for_calls_that_only_read(home: Path, workdir: Path) -> None:
    executor, events, _ = _executor(home, workdir)
    await executor.run(
        [
            _call("read_file", 0, path="a.txt"),
            _call("search_files", 1, pattern="a"),
            _call("terminal", 2, command="ls -la && cat a.txt | grep a"),
            _call("terminal", 3, command="git status; find . -name '*.txt'"),
        ]
    )
    assert _checkpoint_events(events) == []
    assert not (home / "checkpoints").exists()
    executor.shutdown()


async def test_an_unchanged_tree_says_so(home: Path, workdir: Path) -> None:
    executor, events, _ = _executor(home, workdir)
    await executor.run([_call("terminal", 0, command="touch a.txt")])
    await executor.run([_call("terminal", 1, command="touch a.txt b.txt")])  # times, not bytes
    first, second = _checkpoint_events(events)
    assert isinstance(first, CheckpointTaken) and isinstance(second, CheckpointSkipped)
    assert second.note.startswith("no change since") and not second.failed
    executor.shutdown()


async def test_the_question_for_a_file_no_checkpoint_holds(home: Path, workdir: Path) -> None:
    (home / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    executor, events, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("write_file", 0, path="a.txt", content="x")])
    assert outcome.status == "denied" and (workdir / "a.txt").read_text() == "a\n"
    (request,) = asked
    (finding,) = request.verdict.findings
    assert finding.rule == "unrecoverable-overwrite"
    assert "checkpoints are off" in finding.reason and request.diff is not None
    assert _checkpoint_events(events) == []
    executor.shutdown()


async def test_the_terminal_asks_as_before_where_no_checkpoint_holds(
    home: Path, workdir: Path
) -> None:
    (home / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    executor, _, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command="rm a.txt")])
    assert outcome.status == "denied" and (workdir / "a.txt").exists()
    assert [f.rule for f in asked[0].verdict.findings] == ["delete"]
    executor.shutdown()


async def test_a_hard_link_to_a_file_outside_still_asks(home: Path, tmp_path: Path) -> None:
    """A redirection writes through a second name into the file outside too: no checkpoint
    of the working directory brings that back, so the question stays (confined or not;
    write_file replaces the name, leaving the other file as it was)."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    os.link(outside, work / "x.txt")
    executor, _, asked = _executor(home, work, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command="echo evil > x.txt")])
    assert outcome.status == "denied" and outside.read_text() == "precious\n"
    assert [f.rule for f in asked[0].verdict.findings] == ["overwrite"]
    executor.shutdown()


async def test_what_a_search_feeds_a_delete_still_asks(home: Path, workdir: Path) -> None:
    """`{}` is the detector's stand-in for each file found, not a file: a real file named
    `{}` (which a checkpoint holds) must not let the whole listing's delete run unasked;
    `.env` is left out of snapshots, so nothing could bring it back."""
    (workdir / "{}").write_text("")
    (workdir / ".env").write_text("OPENAI_API_KEY=sk-x\n")
    executor, _, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command="ls -A | xargs rm")])
    assert outcome.status == "denied" and len(asked) == 1
    assert (workdir / ".env").exists() and (workdir / "a.txt").exists()
    executor.shutdown()


async def test_what_an_unknown_program_left_is_the_agents(home: Path, workdir: Path) -> None:
    """After the turn's snapshot, a program the executor cannot follow rewrote a.txt: the
    ledger notes its content now as the agent's (every change since the turn's checkpoint
    is), so write_file replaces it with no second snapshot, and restoring the turn's one
    brings back the file as it was before the turn, no hand edit named."""
    (workdir / "w.py").write_text("open('a.txt', 'w').write('z')\n")
    executor, events, asked = _executor(home, workdir, answer="d")
    outcomes = await executor.run(
        [
            _call("terminal", 0, command="python3 w.py"),
            _call("write_file", 1, path="a.txt", content="x"),
        ]
    )
    assert [o.status for o in outcomes] == ["ok", "ok"] and asked == []
    (first,) = _checkpoint_events(events)
    assert first.checkpoint.reason == "terminal: python3 w.py"
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir, first.checkpoint.id)
    assert plan.hand_edited == ()
    store.restore(plan)
    assert (workdir / "a.txt").read_text() == "a\n"
    executor.shutdown()


async def test_a_persons_edit_between_two_calls_of_a_turn_stays_theirs(
    home: Path, workdir: Path
) -> None:
    """Only what changed while a command ran is the agent's: an edit the person made while
    the model was thinking (after the turn's snapshot, before the command) was taken for the
    agent's, and `restore --yes` overwrote it."""
    executor, events, _ = _executor(home, workdir)
    executor.checkpoints.begin_turn()
    await executor.run([_call("write_file", 0, path="a.txt", content="agent\n")])
    (workdir / "b.txt").write_text("typed by the person meanwhile\n")
    (outcome,) = await executor.run([_call("terminal", 1, command="touch c.txt")])
    executor.checkpoints.end_turn()
    assert outcome.status == "ok", outcome.content
    (taken,) = _checkpoint_events(events)
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir, taken.checkpoint.id)
    assert plan.hand_edited == ("b.txt",)
    result = store.restore(plan)  # what --yes does: hand edits kept
    assert result.kept == ("b.txt",) and not (workdir / "c.txt").exists()
    assert (workdir / "a.txt").read_text() == "a\n"
    assert (workdir / "b.txt").read_text() == "typed by the person meanwhile\n"
    executor.shutdown()


async def test_an_edit_made_while_a_command_that_names_its_writes_runs_stays_the_persons(
    home: Path, workdir: Path
) -> None:
    """A command whose reading names every place it changes (readers and exact writers:
    `touch`, `echo > a.txt`): a file that changed while it ran and that it does not name is
    the person's, so a restore keeps it and names it, while the command's own change is
    undone."""
    executor, _, _ = _executor(home, workdir)
    command = "touch started; while [ ! -e go ]; do sleep 0.02; done; echo agent > a.txt"
    running = asyncio.create_task(executor.run([_call("terminal", 0, command=command)]))
    await until(lambda: (workdir / "started").exists(), what="the command started")
    (workdir / "b.txt").write_text("typed while it ran\n")
    (workdir / "go").touch()
    (outcome,) = await running
    assert outcome.status == "ok"
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir)
    # `go` the test made too: the person's, like b.txt; `started` is the command's
    assert sorted(Path(p).name for p in plan.hand_edited) == ["b.txt", "go"]
    store.restore(plan)
    assert not (workdir / "started").exists()
    assert (workdir / "b.txt").read_text() == "typed while it ran\n"
    assert (workdir / "a.txt").read_text() == "a\n"
    executor.shutdown()


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("chmod u-s tool", ["tool"]),
        ("chmod -x a b", ["a", "b"]),  # `-x` is the mode, not an option
        ("chmod -v 0600 a && touch b", ["a", "b"]),
        ("chmod --reference=a b", ["b"]),
    ],
)
def test_a_mode_change_names_its_files(workdir: Path, command: str, named: list[str]) -> None:
    """chmod changes no content the analysis reads as a write, yet its files are the
    command's: a restore gives their modes back rather than taking them for a person's."""
    places = written_exactly(command, str(workdir))
    assert places is not None and sorted(Path(p).name for p in places) == named


async def test_an_edit_made_while_a_program_of_unknown_writes_runs_is_held_by_the_backup(
    home: Path, workdir: Path
) -> None:
    """Beside a program whose writes are not known (here a script), what changes while it
    runs cannot be told from what it did: it is taken for the agent's (so what the program
    did is undone), and the restore's backup holds it, so restoring the backup brings it
    back."""
    (workdir / "run.sh").write_text("touch started; while [ ! -e go ]; do sleep 0.02; done\n")
    executor, _, _ = _executor(home, workdir)
    running = asyncio.create_task(executor.run([_call("terminal", 0, command="bash run.sh")]))
    await until(lambda: (workdir / "started").exists(), what="the command started")
    (workdir / "b.txt").write_text("typed while it ran\n")
    (workdir / "go").touch()
    (outcome,) = await running
    assert outcome.status == "ok"
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir)
    assert plan.hand_edited == ()
    result = store.restore(plan)
    assert (workdir / "b.txt").read_text() == "b\n"
    store.restore(store.plan_restore(workdir, result.backup.id))
    assert (workdir / "b.txt").read_text() == "typed while it ran\n"
    executor.shutdown()


async def test_a_git_stash_in_a_turn_is_the_agents_at_restore(home: Path, workdir: Path) -> None:
    """`git stash -u` changes and removes files the gate cannot name: after it, every change
    since the turn's checkpoint is the agent's, so a restore names no hand edit and brings
    the files back; a real hand edit made after the turn is still named."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=workdir, check=True)
    subprocess.run([*git, "add", "a.txt"], cwd=workdir, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=workdir, check=True)
    (workdir / "a.txt").write_text("a, edited before the turn\n")
    (workdir / "notes.md").write_text("notes\n")
    executor, events, _ = _executor(home, workdir)
    (outcome,) = await executor.run([_call("terminal", 0, command=f"{' '.join(git)} stash -u")])
    assert outcome.status == "ok", outcome.content
    assert (workdir / "a.txt").read_text() == "a\n" and not (workdir / "notes.md").exists()
    (taken,) = _checkpoint_events(events)
    store = CheckpointStore(home)
    plan = store.plan_restore(workdir, taken.checkpoint.id)
    assert plan.hand_edited == ()
    (workdir / "b.txt").write_text("by hand\n")
    plan = store.plan_restore(workdir, taken.checkpoint.id)
    assert plan.hand_edited == ("b.txt",)
    store.restore(plan, overwrite=["b.txt"])
    assert (workdir / "notes.md").read_text() == "notes\n"
    assert (workdir / "a.txt").read_text() == "a, edited before the turn\n"
    executor.shutdown()


async def test_the_ledger_knows_what_the_terminal_wrote(home: Path, workdir: Path) -> None:
    executor, _, _ = _executor(home, workdir)
    await executor.run([_call("terminal", 0, command="echo new > a.txt")])
    store = CheckpointStore(home)
    assert store.plan_restore(workdir).hand_edited == ()
    (workdir / "b.txt").write_text("by hand\n")
    assert store.plan_restore(workdir).hand_edited == ("b.txt",)
    executor.shutdown()


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("ls -la", True),
        ("cat a.txt | grep x | sort | uniq -c", True),
        ("git log --oneline | head", True),
        ("find . -name '*.py'", True),
        ("find . -name '*.pyc' -delete", False),
        ("echo x > a.txt", False),
        ("sort -o a.txt a.txt", False),
        ("xz a.txt", False),
        ("git stash -u", False),
        ("python3 script.py", False),
        ("", False),
    ],
)
def test_reads_only(command: str, reads: bool, tmp_path: Path) -> None:
    assert reads_only(command, str(tmp_path)) is reads


def test_may_change(tmp_path: Path, module_registry) -> None:
    assert may_change(module_registry, "write_file", {"path": "x"}, str(tmp_path))
    assert not may_change(module_registry, "read_file", {"path": "x"}, str(tmp_path))
    assert not may_change(module_registry, "web_search", {"query": "x"}, str(tmp_path))
    assert may_change(module_registry, "terminal", {"command": "make"}, str(tmp_path))


def test_approvals_test_says_a_checkpoint_would_hold_the_file(
    home: Path, workdir: Path, capsys
) -> None:
    from workbench.cli import main as cli

    code = cli.main(["approvals", "test", "rm a.txt", "--cwd", str(workdir)])
    out = capsys.readouterr().out
    assert code == 1 and out.startswith("asks: rm a.txt")  # the detector's finding stays
    assert f"checkpoint: a turn's snapshot would hold {workdir / 'a.txt'}" in out
    cli.main(["approvals", "test", "rm *.txt", "--cwd", str(workdir)])
    assert "checkpoint:" not in capsys.readouterr().out


async def test_a_failed_snapshot_is_an_event_and_the_call_runs(
    home: Path, workdir: Path, make_read_only
) -> None:
    executor, events, _ = _executor(home, workdir)
    make_read_only(home)  # the store cannot be created there
    (outcome,) = await executor.run([_call("write_file", 0, path="new.txt", content="x")])
    assert outcome.status == "ok" and (workdir / "new.txt").read_text() == "x"
    (skipped,) = _checkpoint_events(events)
    assert isinstance(skipped, CheckpointSkipped) and skipped.failed
    assert skipped.note.startswith("failed: ") and skipped.cwd == str(workdir)
    executor.shutdown()


async def test_the_agents_turn_takes_one_snapshot_for_all_its_rounds(
    make_session, fake: FakeOpenAI, home: Path, workdir: Path
) -> None:
    fake.add(
        tools(("write_file", {"path": "a.txt", "content": "1\n"})),
        tools(("write_file", {"path": "b.txt", "content": "2\n"})),
        text("done"),
        tools(("write_file", {"path": "a.txt", "content": "3\n"})),
        text("again"),
    )
    session, events = await make_session()
    await session.turn("write both")
    await session.turn("write a again")
    taken = [e for e in events if isinstance(e, CheckpointTaken)]
    assert [t.checkpoint.turn for t in taken] == [1, 2]
    assert {t.checkpoint.session for t in taken} == {session.id}
    store = CheckpointStore(home)
    first = store.plan_restore(workdir, taken[0].checkpoint.id)  # before the first turn
    assert first.writes == ("a.txt", "b.txt") and first.hand_edited == ()
    store.restore(first)
    assert (workdir / "a.txt").read_text() == "a\n" and (workdir / "b.txt").read_text() == "b\n"
    await session.close()


# -- the write policy as an attack: a checkpoint never "holds" what it cannot give back -----


@pytest.mark.parametrize(
    "command",
    [
        "rm `echo .env` a.txt",  # a target computed at run time besides a held one
        "rm $(echo .env) a.txt",
        "echo .env | xargs rm a.txt",  # xargs appends what it reads
    ],
)
async def test_a_target_known_only_at_run_time_asks(
    home: Path, workdir: Path, command: str
) -> None:
    (workdir / ".env").write_text("SECRET=1\n")  # left out of checkpoints
    executor, _, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command=command)])
    assert outcome.status == "denied" and asked
    assert (workdir / ".env").read_text() == "SECRET=1\n" and (workdir / "a.txt").exists()
    executor.shutdown()


@pytest.mark.parametrize(
    "call",
    [
        {"name": "terminal", "command": ": > h.txt"},
        {"name": "terminal", "command": "truncate -s0 h.txt"},
        {"name": "write_file", "path": "h.txt", "content": "PWNED\n"},
    ],
)
async def test_a_hard_link_to_a_file_outside_is_not_held(
    home: Path, workdir: Path, tmp_path: Path, call: dict
) -> None:
    """A checkpoint holds a name: changing a file with another name outside the working
    directory changes that one too, and no restore brings it back."""
    outside = tmp_path / "precious.txt"
    outside.write_text("PRECIOUS\n")
    (workdir / "h.txt").hardlink_to(outside)
    executor, _, asked = _executor(home, workdir, answer="d")
    name = call.pop("name")
    (outcome,) = await executor.run([_call(name, 0, **call)])
    assert outcome.status == "denied" and asked
    assert outside.read_text() == "PRECIOUS\n"
    executor.shutdown()


@pytest.mark.parametrize(
    "command",
    [
        "cd node_modules && rm a.txt",
        "cd node_modules; : > a.txt",
        "(cd node_modules; rm a.txt)",
        "pushd node_modules && rm a.txt",
        "env -C node_modules rm a.txt",
        "env --chdir=node_modules rm a.txt",
        "sh -c 'cd node_modules && rm a.txt'",
    ],
)
async def test_a_target_in_another_directory_is_not_covered(
    home: Path, workdir: Path, command: str
) -> None:
    """The held a.txt of the working directory is not the a.txt a command deletes after
    changing directory (node_modules is left out of checkpoints)."""
    (workdir / "node_modules").mkdir()
    (workdir / "node_modules" / "a.txt").write_text("module\n")
    executor, _, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command=command)])
    assert outcome.status == "denied" and asked
    assert (workdir / "node_modules" / "a.txt").read_text() == "module\n"
    executor.shutdown()


@pytest.mark.parametrize(
    "command",
    [
        "(cd sub); rm big.bin",  # the subshell's cd does not move the shell
        "cd missing; rm big.bin",  # a failed cd leaves it where it was
        "cd sub || rm big.bin",
    ],
)
async def test_a_cd_bash_does_not_follow_is_not_taken_for_one(
    home: Path, workdir: Path, command: str
) -> None:
    """sub/big.bin is small and held; ./big.bin is over the size cap, left out: bash deletes
    the second, so the command asks."""
    (workdir / "sub").mkdir()
    (workdir / "sub" / "big.bin").write_text("small\n")
    (workdir / "big.bin").write_bytes(b"0" * (11 * 1024 * 1024))
    executor, _, asked = _executor(home, workdir, answer="d")
    (outcome,) = await executor.run([_call("terminal", 0, command=command)])
    assert outcome.status == "denied" and asked and (workdir / "big.bin").exists()
    executor.shutdown()
