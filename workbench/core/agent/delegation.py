"""delegate_task: a sub-agent with its own conversation works on one goal for its parent.

The sub-agent gets the parent's model, registry, scheduler, approvals (its requests carry its
name) and result budgets, and a set of tools never larger than the parent's: the toolsets
it asks for, cut down to what the parent may use. Its tool calls are events like the
parent's, labelled with its name and the call that started it. Its final answer is the
call's result (budgeted like any other); a failure, a timeout or a cancel is a clear error.
Several delegated tasks in one batch run at once, up to `delegation.max_concurrent_children`
(default 3); an agent at depth d may delegate only while d < `delegation.max_spawn_depth`
(default 1: the top agent may, its sub-agents may not); a sub-agent is stopped after
`delegation.child_timeout_seconds` (0: never; Hermes's floor is 30 s). Our older names
`delegation.max_concurrent`, `delegation.max_depth` (one more than max_spawn_depth) and
`delegation.timeout` are read when Hermes's are not set (core.hermes_keys).

The plugins' `subagent_start` (the child built, before it runs) and `subagent_stop` (it
ended, however) hooks run with Hermes's arguments; a sub-agent's session id is the one its
transcript records (`SESSION/sub-agent N`).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from workbench.core import hermes_keys
from workbench.core.agent.events import SubagentFinished, SubagentStarted
from workbench.core.plugins.hooks import HookRegistry
from workbench.core.tools.errors import tool_error, tool_result

NAME = "delegate_task"
DEFAULT_MAX_DEPTH = 2
DEFAULT_MAX_CONCURRENT = 3
DEFAULT_TIMEOUT = 600.0  # when neither key is set: Hermes has none, but a stuck one must end
HERMES_TIMEOUT_FLOOR = 30.0  # Hermes raises a shorter child_timeout_seconds to this
SUBAGENT_PROMPT = (
    "You are a sub-agent: another agent gave you one task. Work on it with the tools you "
    "have, then answer with a short report of what you did and found; that answer is all "
    "the other agent will see.\n\nGoal: {goal}"
)


@dataclass(frozen=True)
class Limits:
    max_depth: int = DEFAULT_MAX_DEPTH  # agents at depth d < max_depth - 1 may delegate
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    timeout: float | None = DEFAULT_TIMEOUT  # None: no limit

    @property
    def spawn_depth(self) -> int:
        """Hermes's delegation.max_spawn_depth: agents at depth d < it may delegate."""
        return self.max_depth - 1

    @classmethod
    def from_config(cls, get: Callable[[str], Any]) -> Limits:
        children = hermes_keys.read(get, hermes_keys.MAX_CHILDREN).value
        return cls(
            _max_depth(hermes_keys.read(get, hermes_keys.MAX_SPAWN_DEPTH)),
            DEFAULT_MAX_CONCURRENT if children is None else int(children),
            _timeout(hermes_keys.read(get, hermes_keys.CHILD_TIMEOUT)),
        )


def _max_depth(found: hermes_keys.Found) -> int:
    if found.value is None:
        return DEFAULT_MAX_DEPTH
    if found.key == hermes_keys.MAX_SPAWN_DEPTH.name:  # Hermes counts the levels that spawn
        return int(found.value) + 1
    return int(found.value)  # our delegation.max_depth counts the levels that run


def _timeout(found: hermes_keys.Found) -> float | None:
    if found.value is None:
        return DEFAULT_TIMEOUT
    if found.value == 0:
        return None
    if found.key == hermes_keys.CHILD_TIMEOUT.name:
        return max(HERMES_TIMEOUT_FLOOR, found.value)
    return found.value


@dataclass(frozen=True)
class SubagentTask:
    call_id: str  # the parent's delegate_task call
    name: str  # "sub-agent 2"
    goal: str
    context: str
    tools: tuple[str, ...]  # the shared tools it may be offered
    depth: int
    subagent_id: str = ""  # Hermes's child_subagent_id: "sa-N-xxxxxxxx"


class Subagent(Protocol):
    """What `spawn` returns: a sub-agent ready to run its one turn."""

    transcript: Path | None
    run: Callable[[str], Awaitable[Any]]  # the prompt -> TurnFinished
    cancel: Callable[[], None]


class Delegation:
    """The delegate_task tool of one agent."""

    def __init__(
        self,
        *,
        depth: int,
        limits: Callable[[], Limits],
        offered: Callable[[], list[str]],
        toolset_of: Callable[[str], str | None],
        spawn: Callable[[SubagentTask], Subagent],
        emit: Callable[[object], None],
        counter: list[int],
        hooks: HookRegistry | None = None,
        session_id: str = "",
        me: SubagentTask | None = None,
        turn_id: Callable[[], str] = lambda: "",
    ) -> None:
        self.depth = depth
        self.hooks = hooks  # subagent_start / subagent_stop
        self.session_id = session_id  # the session's (its sub-agents' ids are under it)
        self.me = me  # the sub-agent this delegation is the tool of (None: the top agent)
        self.turn_id = turn_id  # the delegating agent's turn now
        self.limits = limits
        self.offered = offered  # the tools the parent may use now (its own among them)
        self.toolset_of = toolset_of
        self.spawn = spawn
        self.emit = emit
        self._counter = counter  # shared by a session's agents: names stay unique
        self._slots: asyncio.Semaphore | None = None
        self._slots_size = 0

    @property
    def allowed(self) -> bool:
        return self.depth + 1 < self.limits().max_depth

    def toolsets(self) -> list[str]:
        return sorted({t for n in self.offered() if (t := self.toolset_of(n))})

    def schema(self) -> dict[str, Any]:
        limits, toolsets = self.limits(), self.toolsets()
        further = "cannot" if self.depth + 2 >= limits.max_depth else "may"
        return {
            "description": (
                "Hand one self-contained task to a sub-agent with its own conversation; its "
                "final answer comes back as this call's result. Call it several times in one "
                f"reply to run tasks at once (at most {limits.max_concurrent} run at a time). "
                f"Spawn depth limit {limits.spawn_depth}: sub-agents {further} delegate "
                f"further. A sub-agent gets the toolsets you name (default: all of yours: "
                f"{', '.join(toolsets) or 'none'}); {_stops(limits.timeout)}."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "goal": {"type": "string", "description": "What the sub-agent must do"},
                    "context": {
                        "type": "string",
                        "description": "What it needs to know: files, findings, constraints",
                    },
                    "toolsets": {
                        "type": "array",
                        "items": {"type": "string", "enum": toolsets},
                        "description": "Toolsets it may use (fewer is safer)",
                    },
                },
                "required": ["goal"],
            },
        }

    def _slots_for(self, size: int) -> asyncio.Semaphore:
        if self._slots is None or self._slots_size != size:  # the limit changed in config
            self._slots, self._slots_size = asyncio.Semaphore(size), size
        return self._slots

    async def __call__(self, args: dict[str, Any], **context: Any) -> str:
        limits = self.limits()
        if not self.allowed:
            return tool_error(
                f"Delegation depth limit reached (depth {self.depth}, delegation.max_spawn_depth "
                f"{limits.spawn_depth}): raise delegation.max_spawn_depth in config.yaml to let "
                "sub-agents at this depth delegate"
            )
        goal = str(args.get("goal") or "").strip()
        if not goal:
            return tool_error("delegate_task needs a goal")
        tools, problem = self._tools_for(args.get("toolsets"))
        if problem:
            return tool_error(problem)
        async with self._slots_for(limits.max_concurrent):
            self._counter[0] += 1
            task = SubagentTask(
                str(context.get("tool_call_id") or ""),
                f"sub-agent {self._counter[0]}",
                goal,
                str(args.get("context") or ""),
                tools,
                self.depth + 1,
                f"sa-{self._counter[0]}-{secrets.token_hex(4)}",
            )
            return await self._run(task, limits)

    def _tools_for(self, requested: Any) -> tuple[tuple[str, ...], str]:
        mine = self.offered()
        if requested in (None, []):
            return tuple(mine), ""
        if not isinstance(requested, list):
            return (), "toolsets must be a list of toolset names"
        unknown = sorted(set(map(str, requested)) - set(self.toolsets()))
        if unknown:
            return (), (
                f"toolsets not available to you: {', '.join(unknown)} "
                f"(yours: {', '.join(self.toolsets())})"
            )
        return tuple(n for n in mine if self.toolset_of(n) in requested), ""

    async def _run(self, task: SubagentTask, limits: Limits) -> str:
        subagent = self.spawn(task)
        parent = self._ids()
        role = "orchestrator" if task.depth + 1 < limits.max_depth else "leaf"
        await self._hook(
            "subagent_start",
            **parent,
            parent_subagent_id=self.me.subagent_id if self.me is not None else None,
            child_session_id=self._session_of(task),
            child_subagent_id=task.subagent_id,
            child_role=role,
            child_goal=task.goal,
        )
        began = time.monotonic()
        status, summary = "error", None
        try:
            result, status, summary = await self._run_child(subagent, task, limits)
        except asyncio.CancelledError:
            status = "interrupted"
            raise
        finally:
            await self._hook(
                "subagent_stop",
                **parent,
                child_session_id=self._session_of(task),
                child_role=role,
                child_summary=summary,
                child_status=status,
                duration_ms=int((time.monotonic() - began) * 1000),
            )
        return result

    def _session_of(self, task: SubagentTask | None) -> str:
        return self.session_id if task is None else f"{self.session_id}/{task.name}"

    def _ids(self) -> dict[str, str]:
        return {"parent_session_id": self._session_of(self.me), "parent_turn_id": self.turn_id()}

    async def _hook(self, name: str, **kwargs: Any) -> None:
        if self.hooks is not None and self.hooks.has(name):
            await asyncio.to_thread(self.hooks.invoke, name, **kwargs)

    async def _run_child(
        self, subagent: Subagent, task: SubagentTask, limits: Limits
    ) -> tuple[str, str, str | None]:
        """The child's result, and its status and summary as Hermes's subagent_stop says them."""
        self.emit(SubagentStarted(task.call_id, task.name, task.goal, subagent.transcript))
        prompt = SUBAGENT_PROMPT.format(goal=task.goal)
        if task.context:
            prompt += f"\n\nContext from the other agent:\n{task.context}"
        running = asyncio.ensure_future(subagent.run(prompt))
        try:  # shielded: on a timeout or a cancel the  is told, and records its end
            finished = await asyncio.wait_for(asyncio.shield(running), limits.timeout)
        except TimeoutError:
            await _stop(subagent, running)
            self.emit(SubagentFinished(task.call_id, task.name, "timeout", 0))
            return (
                tool_error(
                    f"{task.name} did not finish within {limits.timeout:g} s and was stopped",
                    status="timeout",
                ),
                "timeout",
                None,
            )
        except asyncio.CancelledError:  # the parent was cancelled: so is its
            await _stop(subagent, running)
            self.emit(SubagentFinished(task.call_id, task.name, "cancelled", 0))
            raise
        self.emit(
            SubagentFinished(
                task.call_id,
                task.name,
                finished.reason,
                finished.rounds,
                finished.error,
                task.goal,
                finished.text,
            )
        )
        where = str(subagent.transcript) if subagent.transcript else ""
        if finished.reason == "error":
            error = tool_error(f"{task.name} failed: {finished.error}", transcript=where)
            return error, "error", finished.text or None
        if finished.reason == "cancelled":
            stopped = tool_error(f"{task.name} was cancelled", status="cancelled")
            return stopped, "interrupted", finished.text or None
        result = tool_result(
            agent=task.name,
            answer=finished.text,
            rounds=finished.rounds,
            complete=finished.reason == "answered",
            transcript=where,
        )
        return result, "completed" if finished.text.strip() else "failed", finished.text


def _stops(timeout: float | None) -> str:
    return "it has no time limit" if timeout is None else f"it stops after {timeout:g} s"


async def _stop(subagent: Subagent, running: asyncio.Future[Any], grace: float = 5.0) -> None:
    subagent.cancel()
    await asyncio.wait({running}, timeout=grace)
