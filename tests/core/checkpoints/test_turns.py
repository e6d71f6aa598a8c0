"""The executor's checkpoints: one snapshot a turn before the first change, none for reads,
the events, the ledger, and the write policy's question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    assert taken.checkpoint.reason == "write_file a.txt" and taken.checkpoint.turn == 1
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


async def test_a_file_changed_by_an_unknown_program_in_the_turn_asks(
    home: Path, workdir: Path
) -> None:
    """After the snapshot, a program the executor cannot follow rewrote a.txt: its content
    now is in no checkpoint and not the agent's (per the ledger), so replacing it asks."""
    (workdir / "w.py").write_text("open('a.txt', 'w').write('z')\n")
    executor, _, asked = _executor(home, workdir, answer="d")
    outcomes = await executor.run(
        [
            _call("terminal", 0, command="python3 w.py"),
            _call("write_file", 1, path="a.txt", content="x"),
        ]
    )
    assert [o.status for o in outcomes] == ["ok", "denied"]
    assert asked[-1].verdict.findings[0].rule == "unrecoverable-overwrite"
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
