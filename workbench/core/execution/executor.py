"""The executor: runs a planned batch, with approvals, timeouts, cancel and result budgets.

* Up to `max_workers` calls at once (default 8), results returned in the model's order.
* Started and finished events the moment each happens: a finished call is recorded
  before its segment ends, so a crash mid-segment loses no finished result.
* A per-call timeout on every path (Hermes has none on its sequential path): an async call
  is cancelled; a sync call cannot be stopped, so it is reported as still running, and
  later calls touching its paths wait for it instead of racing it (a call reported timed
  out must not write after the model was told so).
* `cancel()` is the user's interrupt: running calls are cancelled, calls not started are
  skipped, and every call still gets a result for the model.
* The remaining calls are re-planned after each segment, so a link an earlier segment made
  is seen.
* Whatever fails inside hermes-tui for one call (its planning, its approval check, the
  hooks, the budget) becomes that call's error result; the other calls of the batch run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.core.backends import Backend
from workbench.core.backends.sandbox_cause import (
    STAYS_INSIDE,
    failed_output,
    possibility,
    with_note,
    with_sandbox_note,
)
from workbench.core.checkpoints.turns import Prepared, TurnCheckpoints, Watch, may_change
from workbench.core.edits import diffs
from workbench.core.execution import venvs
from workbench.core.execution.approval import (
    ApprovalBroker,
    Choice,
    Decision,
    needs_approval,
    plugin_verdict,
)
from workbench.core.execution.budget import (
    BudgetConfig,
    Budgeted,
    SpillSlot,
    SpillStore,
    apply_result_budget,
    enforce_turn_budget,
)
from workbench.core.execution.confine import leaves_sandbox
from workbench.core.execution.events import ToolCallFinished, ToolCallStarted, VenvChanged
from workbench.core.execution.sandbox_refusal import known_cause
from workbench.core.execution.scheduler import PlannedCall, Reservation, Segment, ToolCall, plan
from workbench.core.execution.scripts import scripts_run
from workbench.core.plugins.hooks import HookRegistry, MiddlewareBlocked
from workbench.core.policy import CallFacts, Outcome, Ruling
from workbench.core.policy.assess import assess, facts_for, written_by
from workbench.core.safety import analyze_command
from workbench.core.tools import errors
from workbench.core.tools.invoke import is_error_result
from workbench.core.tools.paths import resolve_path
from workbench.core.tools.registry import ToolTable

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0
DEFAULT_WORKERS = 8
FENCE_WAIT = 30.0

CANCELLED = json.dumps(
    {"error": "Tool execution cancelled by user interrupt", "status": "cancelled"}
)


@dataclass
class CallOutcome:
    call: ToolCall
    status: str
    content: str | dict[str, Any]
    segment: int = 0
    parallel: bool = False
    reason: str = ""
    started: float | None = None
    finished: float | None = None
    spilled: Path | None = None
    decision: Decision | None = None
    stubbed: bool = False  # the content is already the stub of a spilled result
    diff: diffs.FileDiff | None = None


@dataclass
class _Zombie:
    """A sync call that outlived its timeout or a cancel: it may still change its paths."""

    future: asyncio.Future[Any]
    reservations: tuple[Reservation, ...]
    barrier: bool  # it reserved nothing, so it may touch anything


@dataclass
class Executor:
    registry: ToolTable
    broker: ApprovalBroker | None = None
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    store: SpillStore | None = None
    cwd: str = field(default_factory=os.getcwd)
    max_workers: int = DEFAULT_WORKERS
    timeout: float = DEFAULT_TIMEOUT
    tool_timeouts: dict[str, float] = field(default_factory=dict)
    on_event: Callable[[object], None] | None = None
    label: str = ""
    parent: str = ""  # a sub-agent's executor: the delegate_task call it works for
    written: set[str] = field(default_factory=set)  # files this session wrote (A15)
    hooks: HookRegistry | None = None  # plugin hooks and middleware around each call
    session_id: str = ""
    allowed: frozenset[str] | None = None  # only these may run (the tools the model was offered)
    # tools switched off (by themselves or with their toolset) → why: run by no one
    switched_off: Callable[[], Mapping[str, str]] | None = None
    write_roots: tuple[str, ...] = ()  # besides cwd, where writes need no approval
    backend: Backend | None = None  # where terminal and file calls run (None: here, no sandbox)
    # a snapshot before each turn's first change, and the write policy that counts on it
    checkpoints: TurnCheckpoints | None = None

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="tool")
        self._cancelled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stops: set[threading.Event] = set()  # one per running call, set on cancel
        self._zombies: list[_Zombie] = []
        self._batch_budget: BudgetConfig | None = None
        # One batch at a time: a front end runs its calls by hand on the executor its agent
        # uses (one spill directory, one memory of written files), and a batch's state (the
        # tools allowed, its budget, the cancel flag) is the executor's.
        self._one_batch = asyncio.Lock()
        self._cancels = 0  # how many interrupts came: one that comes while a batch waits counts

    # -- public ----------------------------------------------------------------------

    async def run(
        self,
        calls: list[Any],
        budget: BudgetConfig | None = None,
        allowed: frozenset[str] | None = None,
    ) -> list[CallOutcome]:
        """Run a batch; every call gets an outcome, in the model's order. `budget` sizes
        this batch's results (the agent's: what is left of the model's window); `allowed`:
        only these tools may run (the agent's: those the model was offered; None for a call
        run by hand). A batch waits for the one running on this executor."""
        asked = self._cancels
        async with self._one_batch:
            return await self._run_batch(calls, budget, allowed, self._cancels != asked)

    async def _run_batch(
        self,
        calls: list[Any],
        budget: BudgetConfig | None,
        allowed: frozenset[str] | None,
        cancelled: bool = False,
    ) -> list[CallOutcome]:
        # an interrupt while this batch waited for the one before is this batch's too (the
        # user cancelled the turn whose calls these are): none of them starts
        self._cancelled = cancelled
        self._batch_budget = budget
        self.allowed = allowed
        if self.checkpoints is not None:
            self.checkpoints.new_batch()
        normalised = [ToolCall.of(c, i) for i, c in enumerate(calls)]
        outcomes: list[CallOutcome | None] = [None] * len(normalised)
        position, segment_index = 0, 0
        while position < len(normalised):
            if self._cancelled:
                for i in range(position, len(normalised)):
                    outcomes[i] = self._skipped(normalised[i], segment_index)
                break
            segment = self._next_segment(normalised[position:])
            indices = range(position, position + len(segment.calls))
            await self._run_segment(
                segment.calls, indices, segment_index, segment.parallel, outcomes
            )
            position += len(segment.calls)
            segment_index += 1
        done = [o for o in outcomes if o is not None]
        try:
            return await asyncio.to_thread(self._turn_budget, done)
        except Exception:  # the results are whole; only their total could not be trimmed
            logger.exception("the turn's result budget failed; results kept as they are")
            return done

    def _next_segment(self, calls: list[ToolCall]) -> Segment:
        """The next segment to run; a call that cannot be planned is a segment of its own."""
        try:
            return plan(calls, self.cwd, self.registry)[0]
        except Exception:
            logger.exception("planning a batch of %d call(s) failed", len(calls))
        try:
            return plan(calls[:1], self.cwd, self.registry)[0]
        except Exception as exc:
            reason = f"it could not be planned ({type(exc).__name__}: {exc})"
            return Segment(False, (PlannedCall(calls[0], None, reason, reason),))

    def cancel(self) -> None:
        """The user's interrupt: cancel what runs, skip what has not started (a batch that
        waits for the running one included)."""
        self._cancelled = True
        self._cancels += 1
        for stop in list(self._stops):  # a sync tool that watches it stops its own work
            stop.set()
        for task in list(self._tasks):
            task.cancel()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- segments --------------------------------------------------------------------

    async def _run_segment(
        self,
        calls: Sequence[PlannedCall],
        indices: Sequence[int],
        segment: int,
        parallel: bool,
        outcomes: list[CallOutcome | None],
    ) -> None:
        if parallel:
            limit = asyncio.Semaphore(self.max_workers)

            async def bounded(planned: PlannedCall, index: int) -> None:
                async with limit:
                    outcomes[index] = await self._tracked(planned, segment, True)

            await asyncio.gather(*(bounded(p, i) for p, i in zip(calls, indices, strict=True)))
            return
        for planned, index in zip(calls, indices, strict=True):
            if self._cancelled:
                outcomes[index] = self._skipped(planned.call, segment)
                continue
            outcomes[index] = await self._tracked(planned, segment, False)

    async def _tracked(self, planned: PlannedCall, segment: int, parallel: bool) -> CallOutcome:
        if self._cancelled:
            return self._skipped(planned.call, segment)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            return await self._run_call(planned, segment, parallel)
        finally:
            if task is not None:
                self._tasks.discard(task)

    # -- one call --------------------------------------------------------------------

    async def _run_call(self, planned: PlannedCall, segment: int, parallel: bool) -> CallOutcome:
        call = planned.call
        started = time.monotonic()
        self._emit(
            ToolCallStarted(
                call.id,
                call.name,
                planned.args,
                segment,
                parallel,
                planned.reason,
                started,
                self.label,
                self.parent,
                call.via,
            )
        )
        outcome = CallOutcome(call, "ok", "", segment, parallel, planned.reason, started)
        try:
            await self._execute(planned, outcome)
        except asyncio.CancelledError:
            if not self._cancelled:
                raise
            outcome.status, outcome.content = "cancelled", CANCELLED
        except Exception as exc:  # ours, not the tool's: still this call's result alone
            logger.exception("tool call %s (%s) failed in hermes-tui", call.id, call.name)
            outcome.status = "error"
            outcome.content = errors.tool_error(
                f"hermes-tui failed on this call ({type(exc).__name__}: {exc}); "
                "if it had not reached the tool yet, it did not run",
                status="error",
            )
        outcome.finished = time.monotonic()
        self._emit(
            ToolCallFinished(
                call.id,
                call.name,
                outcome.status,
                outcome.content,
                started,
                outcome.finished,
                outcome.spilled,
                outcome.decision,
                self.label,
                self.parent,
                outcome.diff,
                call.via,
            )
        )
        return outcome

    async def _execute(self, planned: PlannedCall, outcome: CallOutcome) -> None:
        call, args = planned.call, planned.args
        # a call named in a tool_call was checked by the bridge: a deferred tool of this
        # conversation, never sent in full, so never among the offered names
        if self.allowed is not None and call.name not in self.allowed and not call.via:
            # As Hermes tells the model; never a fuzzy redirect to another tool.
            outcome.status = "invalid"
            outcome.content = f"Tool '{call.name}' does not exist. Available tools: {', '.join(sorted(self.allowed))}"
            return
        off = self.switched_off() if self.switched_off is not None else {}
        if call.name in off:  # a hand call or a plugin's: the model is never offered one
            outcome.status = "invalid"
            outcome.content = errors.tool_error(f"Tool '{call.name}' is {off[call.name]}")
            return
        if args is None:
            outcome.status = "invalid"
            if planned.reason == "unknown tool":
                outcome.content = errors.unknown_tool(call.name)
            elif planned.reason.startswith("it could not be planned"):
                outcome.status = "error"
                outcome.content = errors.tool_error(f"Not run: {planned.error}", status="error")
            else:
                outcome.content = errors.invalid_arguments(planned.error)
            return
        if not await self._fence(planned, outcome):
            return
        hooks = self.hooks if self.hooks is not None and self.hooks.active else None
        meta = {
            "task_id": self.label or "default",
            "session_id": self.session_id,
            "tool_call_id": call.id,
            "turn_id": "",
            "api_request_id": "",
        }
        if hooks is not None:
            args = await self._before(hooks, call.name, args, meta, outcome)
            if args is None:
                return
        # `spill`: where a tool streams a result too large to hold (the terminal's output);
        # `cancel_event`: set when the user cancels, for a tool a thread cannot stop.
        slot, stop = SpillSlot(self.store, call.id), threading.Event()
        context: dict[str, Any] = {
            "cwd": self.cwd,
            "tool_call_id": call.id,
            "spill": slot,
            "cancel_event": stop,
        }
        read_chars = self._budget_now().read_chars
        if call.name == "read_file" and read_chars:  # it never spills: it reads what fits
            context["max_chars"] = read_chars
        if self.backend is not None:
            context["backend"] = self.backend
        hooks_all = self.hooks
        if call.name == "terminal" and hooks_all and hooks_all.has("transform_terminal_output"):
            context["output_hook"] = functools.partial(  # plugins may replace its output
                hooks_all.terminal_output,
                task_id=meta["task_id"],
                env_type=self.backend.name if self.backend is not None else "local",
            )
        prepared = await self._checkpoint(call.name, args)
        if prepared.refusal:
            outcome.status = "error"
            outcome.content = errors.tool_error(f"Not run: {prepared.refusal}", status="error")
            return
        if not await self._approve(call.name, args, context, outcome, prepared):
            return
        old = None  # the file a write changes, as it was, for the diff shown with the result
        if call.name in diffs.DIFFED and self._files_here():
            old = await asyncio.to_thread(diffs.before, call.name, args, self.cwd)
        watch = await asyncio.to_thread(self._watch_venvs, call.name, args)
        files = await self._watch(call.name, args, prepared)
        self._stops.add(stop)
        try:
            result = await self._dispatch(planned, args, context, outcome, hooks, meta)
        finally:
            self._stops.discard(stop)
            if call.name == "terminal":  # its writes count even if it was stopped midway
                self._remember_writes(call.name, args, files)
        if call.name == "terminal" and outcome.status not in ("timeout", "cancelled", "blocked"):
            result = await self._sandbox_refused(
                planned, args, context, outcome, result, hooks, meta, prepared
            )
        if watch is not None:
            result = self._venvs_named(
                call, result, await asyncio.to_thread(self._venv_changes, watch, call.name, args)
            )
        outcome.spilled = slot.path
        if outcome.status in ("timeout", "cancelled", "blocked"):
            return
        status = "error" if is_error_result(result) else "ok"
        if hooks is not None:
            took = (time.monotonic() - (outcome.started or time.monotonic())) * 1000
            result = await asyncio.to_thread(
                hooks.after, call.name, args, result, meta, status, took
            )
        outcome.status = status
        if status == "ok" and old is not None:
            outcome.diff = diffs.compare(old, diffs.planned(call.name, args, old))
        if status == "ok" and call.name != "terminal":
            self._remember_writes(call.name, args)
        await self._budget(call, result, outcome)

    async def _sandbox_refused(
        self,
        planned: PlannedCall,
        args: dict[str, Any],
        context: dict[str, Any],
        outcome: CallOutcome,
        result: Any,
        hooks: HookRegistry | None,
        meta: dict[str, Any],
        prepared: Prepared,
    ) -> Any:
        """A sandboxed command that failed because of the sandbox, as hermes-tui knows it
        (the command's analysis and the sandbox's layout, never its output): a person may
        let that one command out (`x`), shown the scripts it runs, and its result is then
        the one from outside. Headless, --yes and approvals off never leave: the result
        says why it failed and who can let it out. An output that only reads like the
        sandbox's refusal gets a note for the model, worded as a possibility, and no offer."""
        backend = self.backend
        if backend is None or not backend.sandboxed or context.get("outside_sandbox"):
            return result
        if not isinstance(result, str):
            return result
        command = str(args.get("command", ""))
        place = self._place(args)
        cause = await asyncio.to_thread(self._refusal, command, place, result)
        if cause is None:
            suggested = backend.output_suggests(result)
            return with_sandbox_note(result, possibility(suggested)) if suggested else result
        if self.broker is None or not self.broker.can_ask:
            return with_sandbox_note(result, f"{cause}. {STAYS_INSIDE}")
        runs = analyze_command(command, cwd=place).runs
        scripts = await asyncio.to_thread(
            scripts_run, runs, place, set(self.written), prepared.coverage
        )
        decision = await self.broker.ask_to_leave(
            command,
            f"it failed in the sandbox: {cause}; x runs it again, once, outside the sandbox",
            cwd=self.cwd,
            label=self.label,
            where=backend.describe(),
            call_id=str(context.get("tool_call_id", "")),
            scripts=scripts,
        )
        if decision.choice is not Choice.OUTSIDE:
            return with_sandbox_note(
                result, f"{cause}. It stayed in the sandbox: {decision.reason}"
            )
        outcome.decision = decision
        context["outside_sandbox"] = True
        context["approved_command"] = command  # the person approved this exact command
        stop = context["cancel_event"]
        files = await self._watch(planned.call.name, args, prepared)
        self._stops.add(stop)
        try:
            again = await self._dispatch(planned, args, context, outcome, hooks, meta)
        finally:
            self._stops.discard(stop)
            self._remember_writes(planned.call.name, args, files)
        if outcome.status in ("timeout", "cancelled", "blocked"):
            return again
        return with_sandbox_note(
            again, f"ran outside the sandbox, allowed once by the user ({cause})"
        )

    def _refusal(self, command: str, place: str, result: str) -> str | None:
        """What the sandbox refused this failed command, as its analysis and the sandbox's
        layout tell (None: nothing known, or it did not fail)."""
        # the places are the session's, whatever folder the command started in
        layout = self.backend.layout(self.cwd) if self.backend is not None else None
        if layout is None or failed_output(result) is None:
            return None
        return known_cause(analyze_command(command, cwd=place), place, layout)

    def _watch_venvs(self, name: str, args: dict[str, Any]) -> venvs.Watch | None:
        """Before a call that may change files here: the venvs of the writable places."""
        if not self._files_here() or not may_change(self.registry, name, args, self.cwd):
            return None
        try:
            return venvs.Watch([self.cwd, *(os.path.expanduser(r) for r in self.write_roots)])
        except Exception:  # the call runs whatever this could not look at
            logger.exception("could not look at the venvs before %s", name)
            return None

    def _venv_changes(
        self, watch: venvs.Watch, name: str, args: dict[str, Any]
    ) -> list[venvs.VenvChange]:
        """After it: what it changed of each venv (what it is known to have written too)."""
        try:
            return watch.changes(written_by(self.registry, name, args, self.cwd))
        except Exception:
            logger.exception("could not look at the venvs after %s", name)
            return []

    def _venvs_named(self, call: ToolCall, result: Any, found: list[venvs.VenvChange]) -> Any:
        """Each venv the call changed, named on the stream and in its result."""
        notes = [change.describe(self.cwd) for change in found]
        for change, note in zip(found, notes, strict=True):
            self._emit(VenvChanged(call.id, call.name, change.venv, change.paths, note, self.label))
        if not notes or not isinstance(result, str):
            return result
        return with_note(result, "venv", "; ".join(notes))

    def _place(self, args: dict[str, Any]) -> str:
        """Where a terminal call's command runs: its `workdir`, else the session's."""
        workdir = args.get("workdir")
        return (
            str(resolve_path(workdir, self.cwd))
            if isinstance(workdir, str) and workdir
            else self.cwd
        )

    def _remember_writes(self, name: str, args: dict[str, Any], files: Watch | None = None) -> None:
        """The files this call wrote: running one later asks (see `written_by`); the
        checkpoint ledger notes them as the agent's (a restore tells them from hand edits),
        and after a command that may change files (watched: it has the turn's coverage),
        every file changed while it ran, which the gate could not name."""
        try:
            found = written_by(self.registry, name, args, self.cwd)
        except Exception:  # the call already ran: a failure here must not fail it
            logger.exception("could not tell which files %s wrote", name)
            return
        self.written.update(found)
        if self.checkpoints is not None and self._files_here():
            try:
                self.checkpoints.record(self.cwd, found)
                self.checkpoints.record_changes(files)
            except Exception:
                logger.exception("could not note %s's writes in the checkpoint ledger", name)

    async def _watch(
        self, name: str, args: dict[str, Any], prepared: Prepared | None
    ) -> Watch | None:
        """Before a terminal command in a turn with a checkpoint: the files' stat, to tell
        afterwards what changed while it ran (see `TurnCheckpoints.watch`)."""
        if name != "terminal" or prepared is None or self.checkpoints is None:
            return None
        try:
            command = str(args.get("command", ""))
            return await asyncio.to_thread(
                self.checkpoints.watch, prepared.coverage, command, self._place(args)
            )
        except Exception:  # the ledger is a help to the restore: it never stops the call
            logger.exception("could not watch the files before %s", name)
            return None

    async def _checkpoint(self, name: str, args: dict[str, Any]) -> Prepared:
        """Before a call that may change files, this turn's snapshot (the first such call
        takes it); its event goes on the stream once."""
        if self.checkpoints is None or not self._files_here():
            return Prepared(None)
        blocked = functools.partial(self._hardline, name, args)
        try:
            prepared = await asyncio.to_thread(
                self.checkpoints.prepare, self.registry, name, args, self.cwd, blocked
            )
        except Exception:  # a snapshot never blocks the call (prepare says when it must)
            logger.exception("the checkpoint before %s failed", name)
            return Prepared(None)
        if prepared.event is not None:
            self._emit(prepared.event)
        return prepared

    async def _before(
        self,
        hooks: HookRegistry,
        name: str,
        args: dict[str, Any],
        meta: dict[str, Any],
        outcome: CallOutcome,
    ) -> dict[str, Any] | None:
        """Plugin hooks before a call: new arguments, or None when the call was stopped."""
        try:
            before = await asyncio.to_thread(hooks.before, name, args, meta)
        except MiddlewareBlocked as exc:
            outcome.status, outcome.content = (
                "blocked",
                errors.tool_error(str(exc), status="blocked"),
            )
            return None
        if before.block:
            outcome.status, outcome.content = "blocked", errors.tool_error(before.block)
            await asyncio.to_thread(
                hooks.after, name, before.args, outcome.content, meta, "blocked", 0.0
            )
            return None
        if before.approve:
            shown = f"{name} {json.dumps(before.args, ensure_ascii=False)}"
            facts = facts_for(self.registry, name, before.args)
            verdict = plugin_verdict(shown, before.approve)
            decision = await self._decide(
                name, verdict, shown=shown, facts=facts, call_id=str(meta.get("tool_call_id", ""))
            )
            outcome.decision = decision
            if not decision.approved:
                outcome.status, outcome.content = "denied", _refusal(name, decision, "denied")
                return None
        return before.args

    def _hardline(self, name: str, args: dict[str, Any]) -> bool:
        try:
            _, check = assess(self.registry, name, args, self.cwd, self.written, self.write_roots)
        except Exception:
            return False  # _approve meets the same failure and says so
        return check is not None and check.verdict.hardline

    async def _approve(
        self,
        name: str,
        args: dict[str, Any],
        context: dict[str, Any],
        outcome: CallOutcome,
        prepared: Prepared | None = None,
    ) -> bool:
        """The rules and the detector on every call: a deny rule refuses a call the detector
        has nothing against, an ask rule asks about it. Replacing a file inside the working
        directory asks only when no checkpoint of this turn holds it."""
        facts, check = assess(
            self.registry,
            name,
            args,
            self.cwd,
            self.written,
            self.write_roots,
            prepared.coverage if prepared is not None else None,
            checkpoints=self.checkpoints is not None and self._files_here(),
            spilled=str(self.store.directory) if self.store is not None else None,
        )
        verdict = check.verdict if check is not None else None
        shown = check.shown if check is not None else _shown(name, args)
        broker = self.broker
        if broker is not None:
            broker.note(facts, shown)
        ruling = None
        # a file tool doing what the sandboxed terminal could not: a person decides
        leaves = leaves_sandbox(self.backend, name, args.get("path"), self.cwd)
        if check is None and leaves:
            verdict = needs_approval(shown, leaves)
        elif check is None:
            # nothing to ask (a replaced file the turn's checkpoint holds included): the
            # terminal runs what the gate let through
            context["approved_command"] = shown
            if broker is None or not broker.book.policy:
                return True  # no rules and nothing found: the fast path
            ruling = broker.judge(facts, None)
            if ruling.outcome is Outcome.ALLOW:
                return True
        diff = None  # a file write shows what it would change, from the file as it is now
        hardline = verdict is not None and verdict.hardline  # never asked: nothing to read
        if name in diffs.DIFFED and self._files_here() and not hardline:
            diff = await asyncio.to_thread(diffs.preview, name, args, self.cwd)
        decision = await self._decide(
            name,
            verdict,
            shown=shown,
            facts=facts,
            diff=diff,
            ruling=ruling,
            leaves=leaves,
            call_id=str(context.get("tool_call_id", "")),
        )
        outcome.decision = decision
        if decision.choice is Choice.OUTSIDE:  # this one command, out of the sandbox
            context["outside_sandbox"] = True
        if not decision.approved:
            blocked = verdict is not None and verdict.hardline
            outcome.status = "blocked" if blocked else "denied"
            outcome.content = _refusal(name, decision, outcome.status)
            return False
        context["approved_command"] = shown
        return True

    async def _budget(self, call: ToolCall, result: Any, outcome: CallOutcome) -> None:
        entry = self.registry.get_entry(call.name)
        budget = self._budget_now()
        threshold = budget.threshold(call.name, entry.max_result_size_chars if entry else None)
        budgeted = Budgeted(
            call.name, call.id, result, len(result) if isinstance(result, str) else 0
        )
        if isinstance(result, str) and len(result) > threshold:
            budgeted = await asyncio.to_thread(
                apply_result_budget, budgeted, threshold, self.store, budget.preview_chars
            )
        # A tool's own spill file holds its whole output: that is what the viewer opens.
        outcome.content, outcome.stubbed = budgeted.content, budgeted.spilled is not None
        outcome.spilled = outcome.spilled or budgeted.spilled

    def _files_here(self) -> bool:
        """The file tools work on this machine's files (not over ssh): they can be diffed."""
        return self.backend is None or self.backend.remote is None

    async def _decide(
        self,
        name: str,
        verdict: Any,
        *,
        shown: str,
        facts: CallFacts | None = None,
        diff: diffs.FileDiff | None = None,
        ruling: Ruling | None = None,
        leaves: str = "",
        call_id: str = "",
    ) -> Decision:
        if verdict is not None and verdict.hardline:
            return Decision(Choice.DENY, "blocked (hardline): " + "; ".join(verdict.reasons))
        if self.broker is None:
            return Decision(Choice.DENY, "denied: no approval channel in this session")
        backend = self.backend
        return await self.broker.decide(
            name,
            shown,
            verdict,
            facts=facts,
            ruling=ruling,
            cwd=self.cwd,
            label=self.label,
            where=backend.describe() if backend is not None and name == "terminal" else "",
            can_leave=name == "terminal" and backend is not None and backend.outside() is not None,
            diff=diff,
            confined=self._confined(name),
            leaves=leaves,
            call_id=call_id,
        )

    def _confined(self, name: str) -> bool:
        """The call runs in the working sandbox: what the gate could not read in it is held
        there (a command the person lets out is approved by that person, not by this)."""
        return name == "terminal" and self.backend is not None and self.backend.sandboxed

    async def _dispatch(
        self,
        planned: PlannedCall,
        args: dict[str, Any],
        context: dict[str, Any],
        outcome: CallOutcome,
        hooks: HookRegistry | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Any:
        name = planned.call.name
        entry = self.registry.get_entry(name)
        timeout = self._timeout_for(name, args)
        # A tool that can bound its own work (search_files) ends it inside this, with an
        # error that says why, rather than being abandoned at it.
        context = {**context, "timeout": timeout}
        wrapped = hooks is not None and hooks.wraps_execution
        if entry is not None and entry.is_async and not wrapped:
            # Awaited in this task under a deadline: no extra task, and a timeout cancels it.
            try:
                async with asyncio.timeout(timeout):
                    return await self.registry.dispatch_async(name, args, **context)
            except TimeoutError:
                outcome.status = "timeout"
                outcome.content = _timed_out(name, timeout, " It was cancelled.")
                return outcome.content
        loop = asyncio.get_running_loop()
        call = functools.partial(self.registry.dispatch, name, **context)
        if hooks is not None and wrapped:  # middleware wraps the dispatch, in the same thread
            call = functools.partial(hooks.around, name, args, meta or {}, call)
            future = loop.run_in_executor(self._pool, call)
        else:
            future = loop.run_in_executor(self._pool, call, args)
        try:
            done, _ = await asyncio.wait({future}, timeout=timeout)
        except asyncio.CancelledError:
            self._abandon(future, planned)
            raise
        if done:
            try:
                return future.result()
            except MiddlewareBlocked as exc:
                outcome.status = "blocked"
                outcome.content = errors.tool_error(str(exc), status="blocked")
                return outcome.content
        self._abandon(future, planned)
        outcome.status = "timeout"
        outcome.content = _timed_out(
            name,
            timeout,
            " It could not be stopped and may still be running; calls that "
            "touch the same paths wait for it.",
        )
        return outcome.content

    def _abandon(self, future: asyncio.Future[Any], planned: PlannedCall) -> None:
        """Stop waiting for a sync call; a thread cannot be cancelled, so fence it: later calls
        touching its paths wait for it."""
        if future.done():
            return
        entry = self.registry.get_entry(planned.call.name)
        barrier = not planned.reservations and not (entry is not None and entry.parallel_safe)
        zombie = _Zombie(future, planned.reservations, barrier)
        self._zombies.append(zombie)
        future.add_done_callback(
            lambda _: self._zombies.remove(zombie) if zombie in self._zombies else None
        )

    async def _fence(self, planned: PlannedCall, outcome: CallOutcome) -> bool:
        """Wait for abandoned calls this one could race; refuse to run if they do not finish."""
        entry = self.registry.get_entry(planned.call.name)
        barrier = not planned.reservations and not (entry is not None and entry.parallel_safe)
        blocking = [
            z
            for z in self._zombies
            if z.barrier
            or barrier
            or any(r.conflicts(m) for r in z.reservations for m in planned.reservations)
        ]
        if not blocking:
            return True
        _, pending = await asyncio.wait([z.future for z in blocking], timeout=FENCE_WAIT)
        if not pending:
            return True
        outcome.status = "blocked"
        outcome.content = errors.tool_error(
            "Not run: an earlier call that timed out is still running and may touch the same "
            "files. Try again when it has finished.",
            status="blocked",
        )
        return False

    def _timeout_for(self, name: str, args: dict[str, Any]) -> float:
        timeout = self.tool_timeouts.get(name, self.timeout)
        requested = args.get("timeout") if name == "terminal" else None
        if name == "terminal" and not requested and self.backend is not None:
            requested = self.backend.command_timeout  # terminal.timeout: the user's default
        if isinstance(requested, int | float):
            timeout = max(timeout, float(requested) + 10)  # the tool's own limit fires first
        return timeout

    # -- helpers ---------------------------------------------------------------------

    def _skipped(self, call: ToolCall, segment: int) -> CallOutcome:
        content = f"[Tool execution cancelled — {call.name} was skipped due to user interrupt]"
        now = time.monotonic()
        self._emit(
            ToolCallFinished(
                call.id,
                call.name,
                "skipped",
                content,
                None,
                now,
                label=self.label,
                parent=self.parent,
                via=call.via,
            )
        )
        return CallOutcome(call, "skipped", content, segment, finished=now)

    def _turn_budget(self, outcomes: list[CallOutcome]) -> list[CallOutcome]:
        # Only a stub is exempt: a tool's head and tail of an output it saved still count.
        results = [
            Budgeted(o.call.name, o.call.id, o.content, 0, o.spilled if o.stubbed else None)
            for o in outcomes
        ]
        budgeted = enforce_turn_budget(results, self._budget_now(), self.store)
        return [
            replace(
                o, content=b.content, spilled=o.spilled or b.spilled, stubbed=b.spilled is not None
            )
            for o, b in zip(outcomes, budgeted, strict=True)
        ]

    def _budget_now(self) -> BudgetConfig:
        return self._batch_budget or self.budget

    def _emit(self, event: object) -> None:
        if self.on_event is not None:
            self.on_event(event)


def _timed_out(name: str, timeout: float, note: str) -> str:
    return json.dumps(
        {"error": f"Tool '{name}' timed out after {timeout:g}s.{note}", "status": "timeout"}
    )


def _shown(name: str, args: dict[str, Any]) -> str:
    """A call nothing was found in, as the approval history lists it (never its content)."""
    if name == "terminal":
        return str(args.get("command", ""))
    path = args.get("path")
    return f"{name} {path}" if isinstance(path, str) else name


def _refusal(name: str, decision: Decision, status: str) -> str:
    message = f"Not run: {decision.reason}"
    if name == "terminal":
        return json.dumps({"output": "", "exit_code": -1, "error": message, "status": status})
    return json.dumps({"error": message, "status": status})
