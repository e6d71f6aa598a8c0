"""The executor's checkpoints: one snapshot a turn before the first change, none for reads,
the events, the ledger, and the write policy's question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.checkpoints import CheckpointSkipped, CheckpointStore, CheckpointTaken
from workbench.core.checkpoints.turns import may_change, reads_only
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


async def test_a_file_changed_by_an_unknown_program_gets_a_new_snapshot_first(
    home: Path, workdir: Path
) -> None:
    """After the turn's snapshot, a program the executor cannot follow rewrote a.txt: its
    content now is in no checkpoint and not the agent's (per the ledger), so before
    write_file replaces it a second snapshot holds it; nothing asks, nothing is lost."""
    (workdir / "w.py").write_text("open('a.txt', 'w').write('z')\n")
    executor, events, asked = _executor(home, workdir, answer="d")
    outcomes = await executor.run(
        [
            _call("terminal", 0, command="python3 w.py"),
            _call("write_file", 1, path="a.txt", content="x"),
            _call("write_file", 2, path="a.txt", content="y"),  # the agent's: no third
        ]
    )
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"] and asked == []
    first, second = _checkpoint_events(events)
    assert first.checkpoint.reason == "terminal: python3 w.py"
    assert second.checkpoint.reason == "write_file a.txt"
    store = CheckpointStore(home)
    store.restore(store.plan_restore(workdir, second.checkpoint.id), overwrite=["a.txt"])
    assert (workdir / "a.txt").read_text() == "z"
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
    from workbench import cli

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
