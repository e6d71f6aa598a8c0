"""Replaying cases through the path the agent's calls take (planner, hooks, policy and
approval, dispatch, result budget), with no one to ask: what would need an approval is
denied unless `yes` approves it (deny rules and hardline commands still refuse)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.history import entry
from workbench.core.replay.cases import Case
from workbench.core.replay.checks import failures, what_it_said

if TYPE_CHECKING:
    from workbench.core.execution.executor import CallOutcome, Executor
    from workbench.core.runtime import Runtime

MAX_CHECKED = 64 * 1024 * 1024  # of a spilled result read back for the checks


@dataclass
class CaseResult:
    case: Case
    status: str  # the call's status, or "missing" for a tool that is not there
    seconds: float
    reasons: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.reasons


def replay(
    runtime: Runtime, cases: list[Case], *, yes: bool = False, cwd: str | None = None
) -> list[CaseResult]:
    """Run every case in order (a case may set up the next one); one result per case."""
    from workbench.core.execution.approval import ApprovalBroker
    from workbench.core.plugins.lifecycle import one_call_session

    # the project whose rules hold is the one the calls run in, not where the command started
    project = Path(cwd) if cwd else None
    broker = ApprovalBroker.from_config(
        runtime.config, mode="off" if yes else None, project=project, asker=runtime.asker
    )
    executor = runtime.executor(broker=broker, cwd=cwd)
    try:
        with one_call_session(runtime.hooks, executor.session_id):  # the plugins' session
            return asyncio.run(_run_all(runtime, executor, cases))
    finally:
        executor.shutdown()


async def _run_all(runtime: Runtime, executor: Executor, cases: list[Case]) -> list[CaseResult]:
    return [await _run(runtime, executor, case, n) for n, case in enumerate(cases, 1)]


async def _run(runtime: Runtime, executor: Executor, case: Case, n: int) -> CaseResult:
    missing = _missing(runtime, case.tool)
    if missing:
        return CaseResult(case, "missing", 0.0, [missing])
    began = time.monotonic()
    (outcome,) = await executor.run(
        [{"id": f"replay-{n}", "name": case.tool, "arguments": dict(case.arguments)}]
    )
    seconds = (outcome.finished or time.monotonic()) - (outcome.started or began)
    text = _full_text(outcome)
    _keep(runtime, case, outcome, seconds)
    reasons = failures(case.expect, outcome.status, text, seconds)
    if outcome.status == "denied" and case.expect.status != "denied":
        why = outcome.decision.reason if outcome.decision is not None else ""
        hint = "" if "--yes" in why else " (--yes approves what would ask)"
        reasons.insert(0, f"not approved: {why or 'denied'}{hint}")
        reasons[:] = [r for r in reasons if not r.startswith("status ")]
    elif outcome.status == "blocked" and case.expect.status != "blocked":
        # refused whatever is approved (a hardline command, app state, a plugin's hook): a case
        # with no status check must not pass on a call that never ran
        said = what_it_said(text).removeprefix("Not run: ")
        reasons.insert(0, f"not run: {said or 'blocked'}")
        reasons[:] = [r for r in reasons if not r.startswith("status ")]
    return CaseResult(case, outcome.status, seconds, reasons)


def _missing(runtime: Runtime, tool: str) -> str:
    registry = runtime.registry
    if registry.get_entry(tool) is None:
        return f"no tool named {tool} (`hermes-tui tools` lists them)"
    off = runtime.off_tools().get(tool)
    if off:
        return f"tool {tool} is {off}"
    availability = registry.availability(tool)
    if not availability.available:
        return f"tool {tool} is unavailable: {availability.reason}"
    return ""


def _full_text(outcome: CallOutcome) -> str:
    """What the checks read: the whole result, from its spill file when it was spilled."""
    if outcome.spilled is not None:
        try:
            with open(outcome.spilled, encoding="utf-8", errors="replace") as handle:
                return handle.read(MAX_CHECKED)
        except OSError:
            pass
    content = outcome.content
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _keep(runtime: Runtime, case: Case, outcome: CallOutcome, seconds: float) -> None:
    """The replayed call goes into the tool's history too (a read-only home loses only that)."""
    try:
        runtime.history.add(
            entry(
                case.tool,
                dict(case.arguments),
                outcome.status,
                outcome.content,
                seconds,
                "replay",
                outcome.spilled,
            )
        )
    except OSError:
        pass
