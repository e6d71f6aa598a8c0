"""The executor: parallel runs, order, immediate events, timeouts, cancel, approvals, budgets."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from tests.support.tools import schema
from tests.support.waiting import PATIENCE, until
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.budget import BudgetConfig, SpillStore
from workbench.core.execution.executor import Executor, ToolCallFinished, ToolCallStarted
from workbench.core.tools.registry import ToolRegistry, registry


def sleeper(seconds: float):
    def handler(args, **kw):
        time.sleep(args.get("s", seconds))
        return f"slept {args.get('tag', '')}"

    return handler


@pytest.fixture
def sleepy(reg: ToolRegistry) -> ToolRegistry:
    reg.register("nap", "t", schema(), sleeper(0.2), parallel_safe=True)
    reg.register("solo", "t", schema(), sleeper(0.05))

    async def anap(args, **kw):
        await asyncio.sleep(args.get("s", 0.2))
        return "async slept"

    reg.register("anap", "t", schema(), anap, is_async=True, parallel_safe=True)

    def boom(args, **kw):
        raise RuntimeError("kaput")

    reg.register("boom", "t", schema(), boom, parallel_safe=True)
    return reg


def calls(*names: str, **args) -> list[dict]:
    return [
        {"id": f"c{i}", "name": n, "arguments": json.dumps({**args, "tag": i})}
        for i, n in enumerate(names)
    ]


async def test_parallel_batch_runs_at_once_and_keeps_order(sleepy: ToolRegistry) -> None:
    # each call returns only once all eight are running: run one after the other, the first
    # would give up waiting (the benchmark holds how fast a batch is)
    everyone = threading.Barrier(8)

    def together(args, **kw):
        everyone.wait(timeout=PATIENCE)
        return f"slept {args['tag']}"

    sleepy.register("together", "t", schema(), together, parallel_safe=True)
    events: list[object] = []
    executor = Executor(sleepy, on_event=events.append)
    outcomes = await executor.run(calls(*["together"] * 8))
    assert [o.content for o in outcomes] == [f"slept {i}" for i in range(8)]
    assert all(o.status == "ok" and o.parallel for o in outcomes)
    assert sum(isinstance(e, ToolCallStarted) for e in events) == 8


async def test_events_arrive_as_each_call_finishes(sleepy: ToolRegistry) -> None:
    seen: list[tuple[str, str, float]] = []

    def record(event: object) -> None:
        kind = "start" if isinstance(event, ToolCallStarted) else "end"
        seen.append((kind, event.call_id, time.monotonic()))

    batch = [
        {"id": "fast", "name": "nap", "arguments": {"s": 0.05}},
        {"id": "slow", "name": "nap", "arguments": {"s": 0.4}},
    ]
    start = time.monotonic()
    await Executor(sleepy, on_event=record).run(batch)
    fast_end = next(t for k, i, t in seen if k == "end" and i == "fast")
    assert fast_end - start < 0.3  # reported long before the slow call (its segment) ends
    assert [k for k, *_ in seen] == ["start", "start", "end", "end"]


async def test_one_failing_call_never_disturbs_the_others(sleepy: ToolRegistry) -> None:
    outcomes = await Executor(sleepy).run(calls("nap", "boom", "nap"))
    assert [o.status for o in outcomes] == ["ok", "error", "ok"]
    assert "RuntimeError: kaput" in outcomes[1].content


async def test_async_call_is_cancelled_on_timeout(reg: ToolRegistry) -> None:
    cancelled = asyncio.Event()

    async def slow(args, **kw):
        try:
            await asyncio.Event().wait()  # never ends by itself
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    reg.register("slow", "t", schema(), slow, is_async=True)
    (outcome,) = await Executor(reg, timeout=0.2).run([{"id": "1", "name": "slow"}])
    assert outcome.status == "timeout"
    assert "timed out after 0.2s. It was cancelled." in outcome.content
    await asyncio.wait_for(cancelled.wait(), PATIENCE)  # stopped, not left running


async def test_sync_timeout_is_honest_and_fences_conflicting_calls(
    reg: ToolRegistry, tmp_path: Path
) -> None:
    """A thread cannot be killed; a later write to its path waits instead of racing it."""
    order: list[str] = []

    def slow_write(args, **kw):
        time.sleep(0.6)
        order.append("slow write done")
        return "ok"

    def quick_write(args, **kw):
        order.append("quick write")
        return "ok"

    reg.register("slow_write", "t", schema(), slow_write, path_args={"path": "write"})
    reg.register("quick_write", "t", schema(), quick_write, path_args={"path": "write"})
    executor = Executor(reg, timeout=0.2, cwd=str(tmp_path))
    (first,) = await executor.run(
        [{"id": "1", "name": "slow_write", "arguments": {"path": "a.txt"}}]
    )
    assert first.status == "timeout"
    assert "may still be running" in first.content
    (second,) = await executor.run(
        [{"id": "2", "name": "quick_write", "arguments": {"path": "a.txt"}}]
    )
    assert second.status == "ok"
    assert order == ["slow write done", "quick write"]


async def test_cancel_stops_running_calls_and_skips_the_rest(sleepy: ToolRegistry) -> None:
    events: list[object] = []
    executor = Executor(sleepy, on_event=events.append)
    batch = [
        {"id": "a", "name": "anap", "arguments": {"s": 600}},  # ends only if cancelled
        {"id": "b", "name": "anap", "arguments": {"s": 600}},
        {"id": "t", "name": "solo"},
        {"id": "u", "name": "solo"},
    ]
    task = asyncio.create_task(executor.run(batch))
    await until(lambda: sum(isinstance(e, ToolCallStarted) for e in events) == 2)
    executor.cancel()
    outcomes = await task
    assert [o.status for o in outcomes] == ["cancelled", "cancelled", "skipped", "skipped"]
    assert json.loads(outcomes[0].content)["status"] == "cancelled"
    assert (
        outcomes[2].content == "[Tool execution cancelled — solo was skipped due to user interrupt]"
    )


async def test_invalid_and_unknown_calls_get_clear_results(sleepy: ToolRegistry) -> None:
    outcomes = await Executor(sleepy).run(
        [{"id": "1", "name": "missing"}, {"id": "2", "name": "nap", "arguments": "{bad"}]
    )
    assert outcomes[0].content == '{"error": "Unknown tool: missing"}'
    assert json.loads(outcomes[1].content)["error"] == "Invalid tool arguments"
    assert [o.status for o in outcomes] == ["invalid", "invalid"]


async def test_destructive_terminal_command_waits_for_approval(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    broker = ApprovalBroker()
    asked = []
    detach = broker.attach(lambda request: (asked.append(request), broker.answer(request.id, "d")))
    executor = Executor(registry, broker=broker, cwd=str(tmp_path))
    (denied,) = await executor.run(
        [{"id": "1", "name": "terminal", "arguments": {"command": "rm victim.txt"}}]
    )
    assert denied.status == "denied" and victim.exists()
    assert asked[0].command == "rm victim.txt" and asked[0].writes == ["victim.txt"]
    assert json.loads(denied.content)["error"] == "Not run: denied by the user"
    detach()
    broker.attach(lambda request: broker.answer(request.id, "o"))
    (allowed,) = await executor.run(
        [{"id": "2", "name": "terminal", "arguments": {"command": "rm victim.txt"}}]
    )
    assert allowed.status == "ok" and not victim.exists()


async def test_no_approval_channel_denies(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x")
    (outcome,) = await Executor(registry, cwd=str(tmp_path)).run(
        [{"id": "1", "name": "terminal", "arguments": {"command": "rm keep"}}]
    )
    assert outcome.status == "denied" and (tmp_path / "keep").exists()


async def test_hardline_is_blocked_even_with_approvals_off(tmp_path: Path) -> None:
    broker = ApprovalBroker(mode="off")
    (outcome,) = await Executor(registry, broker=broker, cwd=str(tmp_path)).run(
        [{"id": "1", "name": "terminal", "arguments": {"command": "rm -rf ~"}}]
    )
    assert outcome.status == "blocked"
    assert "hardline" in json.loads(outcome.content)["error"]


async def test_running_a_file_written_this_session_needs_approval(tmp_path: Path) -> None:
    # A15: write_file then run it: the run must ask
    asked = []
    broker = ApprovalBroker()
    broker.attach(lambda r: (asked.append(r.reason), broker.answer(r.id, "deny")))
    executor = Executor(registry, broker=broker, cwd=str(tmp_path))
    script = "import shutil; shutil.rmtree('data')\n"
    await executor.run(
        [{"id": "1", "name": "write_file", "arguments": {"path": "cleanup.py", "content": script}}]
    )
    (run,) = await executor.run(
        [{"id": "2", "name": "terminal", "arguments": {"command": "python3 cleanup.py"}}]
    )
    assert run.status == "denied"
    assert asked == ["runs cleanup.py, which was written earlier in this session"]


@pytest.mark.parametrize(
    "run",
    ["chmod +x cleanup.sh && ./cleanup.sh", "bash < cleanup.sh", "ln -s cleanup.sh c; sh c"],
)
async def test_a_written_script_run_by_its_path_or_its_input_asks(tmp_path: Path, run) -> None:
    # write_file, then run the file another way than `bash FILE`: headless, nothing runs
    (tmp_path / "data").mkdir()
    executor = Executor(registry, broker=ApprovalBroker(), cwd=str(tmp_path))
    script = {"path": "cleanup.sh", "content": "#!/bin/sh\nrm -rf data\n"}
    await executor.run([{"id": "1", "name": "write_file", "arguments": script}])
    (outcome,) = await executor.run(
        [{"id": "2", "name": "terminal", "arguments": {"command": run}}]
    )
    assert outcome.status == "denied", outcome.content
    assert (tmp_path / "data").is_dir()


@pytest.mark.parametrize(
    "write",
    [
        "printf 'rm -rf data\\n' >> cleanup.sh",
        "touch cleanup.sh && printf 'rm -rf data\\n' | tee -a cleanup.sh",
        "python3 -c \"open('cleanup.sh', 'a').write('rm -rf data')\"",
    ],
)
async def test_a_script_the_terminal_wrote_asks_when_a_later_call_runs_it(tmp_path, write) -> None:
    # appending to a new file runs unasked; the next call runs it: that one must ask
    (tmp_path / "data").mkdir()
    executor = Executor(registry, broker=ApprovalBroker(), cwd=str(tmp_path))
    (wrote,) = await executor.run(
        [{"id": "1", "name": "terminal", "arguments": {"command": write}}]
    )
    assert wrote.status == "ok" and (tmp_path / "cleanup.sh").exists(), wrote.content
    (ran,) = await executor.run(
        [{"id": "2", "name": "terminal", "arguments": {"command": "bash cleanup.sh"}}]
    )
    assert ran.status == "denied", ran.content
    assert (tmp_path / "data").is_dir()


async def test_writes_to_start_up_files_need_approval(tmp_path: Path, monkeypatch) -> None:
    # Hermes wrote shell start-up files and git hooks without asking.
    monkeypatch.setenv("HOME", str(tmp_path))
    (outcome,) = await Executor(registry, cwd=str(tmp_path)).run(
        [{"id": "1", "name": "write_file", "arguments": {"path": "~/.bashrc", "content": "evil"}}]
    )
    assert outcome.status == "denied" and not (tmp_path / ".bashrc").exists()
    hook = {"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\nrm -rf ~\n"}
    (outcome,) = await Executor(registry, cwd=str(tmp_path)).run(
        [{"id": "2", "name": "write_file", "arguments": hook}]
    )
    assert outcome.status == "denied"


async def test_oversized_results_are_spilled_privately(reg: ToolRegistry, tmp_path: Path) -> None:
    reg.register("big", "t", schema(), lambda a, **k: "x" * 50_000, max_result_size_chars=10_000)
    store = SpillStore(tmp_path / "results", "session-1")
    (outcome,) = await Executor(reg, store=store).run([{"id": "call_0", "name": "big"}])
    assert outcome.content.startswith("<persisted-output>")
    assert outcome.spilled is not None and outcome.spilled.read_text() == "x" * 50_000
    assert outcome.spilled.parent == tmp_path / "results" / "session-1"


async def test_turn_budget_spills_the_largest(reg: ToolRegistry, tmp_path: Path) -> None:
    for name, size in (("small", 5_000), ("medium", 9_000), ("large", 9_500)):
        reg.register(name, "t", schema(), lambda a, n=size, **k: "y" * n, parallel_safe=True)
    store = SpillStore(tmp_path / "results", "s")
    budget = BudgetConfig(result_chars=10_000, turn_chars=16_000)
    outcomes = await Executor(reg, budget=budget, store=store).run(
        [{"id": n, "name": n} for n in ("small", "medium", "large")]
    )
    assert [o.spilled is not None for o in outcomes] == [False, False, True]  # then it fits
    assert sum(len(o.content) for o in outcomes) <= 16_000


async def test_finished_events_carry_the_model_visible_content(sleepy: ToolRegistry) -> None:
    finished = []
    await Executor(
        sleepy, on_event=lambda e: isinstance(e, ToolCallFinished) and finished.append(e)
    ).run(calls("nap"))
    assert finished[0].content == "slept 0" and finished[0].duration >= 0.19


async def test_batches_on_one_executor_run_one_after_the_other_each_with_its_own_tools(
    sleepy: ToolRegistry,
) -> None:
    """An agent's batch and a call run by hand share the executor: the second waits for the
    first, and only the agent's batch is held to the tools the model was offered."""
    events: list[object] = []
    executor = Executor(sleepy, on_event=events.append)
    agent = asyncio.create_task(executor.run(calls("nap", "solo"), allowed=frozenset({"nap"})))
    await asyncio.sleep(0)  # the agent's batch holds the executor
    by_hand = await executor.run([{"id": "form-1", "name": "solo", "arguments": "{}"}])
    offered_nap, unoffered_solo = await agent
    assert offered_nap.status == "ok" and unoffered_solo.status == "invalid"
    assert "does not exist" in unoffered_solo.content
    assert by_hand[0].status == "ok"
    order = [(type(e).__name__, e.call_id) for e in events]
    assert order.index(("ToolCallStarted", "form-1")) > order.index(("ToolCallFinished", "c1"))


async def test_an_interrupt_while_a_batch_waits_for_the_running_one_skips_it(
    sleepy: ToolRegistry,
) -> None:
    """The user cancels while a call run by hand holds the executor and the agent's batch
    waits for it: the interrupt is the waiting batch's too, so none of its calls starts."""
    events: list[object] = []
    executor = Executor(sleepy, on_event=events.append)
    by_hand = asyncio.create_task(
        executor.run([{"id": "form-1", "name": "anap", "arguments": json.dumps({"s": 60})}])
    )
    while not any(getattr(e, "call_id", "") == "form-1" for e in events):
        await asyncio.sleep(0.01)  # the call run by hand has started
    agent = asyncio.create_task(executor.run(calls("nap", "solo"), allowed=frozenset({"nap"})))
    await asyncio.sleep(0)  # the agent's batch now waits for the executor
    executor.cancel()
    (hand,) = await by_hand
    assert hand.status != "ok"
    assert [o.status for o in await agent] == ["skipped", "skipped"]
    later = await executor.run(calls("solo"))  # the next batch is not cancelled
    assert later[0].status == "ok"
