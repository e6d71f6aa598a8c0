"""The agent's own tools, handled by the session, not the shared registry (as in Hermes).

`todo` is the session's task list, `clarify` asks the user through the session's `Asker`
(never in parallel; unanswered in CLARIFY_TIMEOUT, the agent goes on without an answer), `session_search` searches past sessions, `delegate_task` starts sub-agents; the
memory tools go to the active memory provider (core.tools.memory). They all run through the same
executor as every other call (events, timeline, transcript) via `ToolRouter`, a registry
view that routes each name: the session's own tools, then the memory provider's, then the
shared registry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.agent.delegation import NAME as DELEGATE
from workbench.core.agent.delegation import Delegation
from workbench.core.agent.session_index import SessionIndex, hits_as_json
from workbench.core.asking import Ask, Asker, AskKind, Question
from workbench.core.tools.entry import ToolEntry
from workbench.core.tools.errors import execution_failed, tool_error, tool_result
from workbench.core.tools.registry import ToolRegistry

TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")
OWN_TOOL_NAMES = frozenset({"todo", "clarify", "session_search", DELEGATE})
CLARIFY_TIMEOUT = 300.0  # seconds a question waits for the user (Hermes's TUI waits as long)


class ToolRouter:
    """A registry view: the session's own tools, the memory provider's, then the shared ones.
    With deferral on, `bridge` holds tool_search and tool_describe (names no registry takes,
    core.tools.ownership), answered by the agent's bridge (core.agent.bridge) and run through
    the executor like any call; tool_call never gets here: the agent unwraps it."""

    def __init__(
        self,
        shared: ToolRegistry,
        own: ToolRegistry,
        memory: Callable[[], ToolRegistry] | None = None,
    ) -> None:
        self.shared = shared
        self.own = own
        empty = ToolRegistry()  # no memory tools (a sub-agent's view)
        self._memory = memory or (lambda: empty)
        self.bridge: dict[str, ToolEntry] = {}

    @property
    def memory(self) -> ToolRegistry:
        return self._memory()

    def _owner(self, name: str) -> ToolRegistry:
        for layer in (self.own, self.memory):
            if layer.get_entry(name) is not None:
                return layer
        return self.shared

    def get_entry(self, name: str) -> ToolEntry | None:
        return self.bridge.get(name) or self._owner(name).get_entry(name)

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str | dict[str, Any]:
        bridged = self.bridge.get(name)
        if bridged is not None:
            try:
                answer: str | dict[str, Any] = bridged.handler(args, **kwargs)
                return answer
            except Exception as exc:  # a bug of ours: this call's error, never the turn's
                return execution_failed(exc)
        return self._owner(name).dispatch(name, args, **kwargs)

    async def dispatch_async(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]:
        return await self._owner(name).dispatch_async(name, args, **kwargs)


@dataclass
class OwnToolsState:
    home: Path
    todos: list[dict[str, Any]] = field(default_factory=list)
    asker: Asker | None = None  # where `clarify` asks (None: a sub-agent, which never asks)


TODO_SCHEMA = {
    "description": (
        "Keep the task list for this session. Pass the full list (or merge=true to update items "
        "by id); call with no arguments to read it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(TODO_STATUSES)},
                    },
                    "required": ["id", "content", "status"],
                },
            },
            "merge": {"type": "boolean", "default": False},
        },
    },
}
CLARIFY_SCHEMA = {
    "description": "Ask the user a question when you cannot go on without their answer.",
    "parameters": {
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Optional answers",
            },
        },
        "required": ["question"],
    },
}


def tool_router(
    shared: ToolRegistry,
    state: OwnToolsState,
    memory: Callable[[], ToolRegistry] | None = None,
    *,
    interactive: bool = True,
) -> ToolRouter:
    """The session's own tools; `clarify` only where someone can answer (not sub-agents)."""
    own = ToolRegistry()
    own.register("todo", "todo", TODO_SCHEMA, lambda a, **k: _todo(state, a), emoji="📋")
    if interactive:
        own.register(
            "clarify",
            "clarify",
            CLARIFY_SCHEMA,
            _clarifier(state),
            is_async=True,
            emoji="❓",
            interactive=True,
        )
    return ToolRouter(shared, own, memory)


def agent_tools(
    shared: ToolRegistry,
    state: OwnToolsState,
    memory: Callable[[], ToolRegistry] | None,
    *,
    index: SessionIndex,
    session_id: str,
    delegation: Delegation,
) -> ToolRouter:
    """Every tool an agent of a session has: its own, the memory provider's and the shared
    ones. Sub-agents (depth > 0) get no memory tools and cannot ask the user (as Hermes)."""
    top = delegation.depth == 0
    tools = tool_router(shared, state, memory if top else None, interactive=top)
    add_session_search(tools.own, index, session_id)
    if delegation.allowed:
        add_delegate_task(tools.own, delegation)
    return tools


def add_session_search(own: ToolRegistry, index: SessionIndex, session_id: str) -> None:
    def search(args: dict[str, Any], **_: Any) -> str:
        query, limit = str(args.get("query") or ""), int(args.get("limit") or 10)
        try:
            hits = index.search(query, limit, exclude=session_id)
        except Exception as exc:  # the index is derived data: say so, never crash the turn
            return tool_error(f"Session search failed: {type(exc).__name__}: {exc}")
        return tool_result(query=args.get("query"), hits=hits_as_json(hits), count=len(hits))

    own.register(
        "session_search", "session_search", SESSION_SEARCH_SCHEMA, search, emoji="🔎",
        parallel_safe=True,
    )  # fmt: skip


def add_delegate_task(own: ToolRegistry, delegation: Delegation) -> None:
    own.register(
        DELEGATE,
        "delegation",
        delegation.schema(),
        delegation,
        is_async=True,
        emoji="🧩",
        dynamic_schema_overrides=delegation.schema,  # the limits as config has them now
        parallel_safe=True,
    )


SESSION_SEARCH_SCHEMA = {
    "description": (
        "Full-text search over the user's past sessions with you (messages, tool calls). "
        "Returns the matching messages with session id, time and the messages around them."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to find (all must match)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        },
        "required": ["query"],
    },
}


def _todo(state: OwnToolsState, args: dict[str, Any]) -> str:
    if "todos" in args:
        incoming = {str(t["id"]): dict(t) for t in args["todos"]}
        if args.get("merge"):
            current = {str(t["id"]): t for t in state.todos}
            current.update(incoming)
            state.todos = list(current.values())
        else:
            state.todos = list(incoming.values())
    counts = {s: sum(t["status"] == s for t in state.todos) for s in TODO_STATUSES}
    summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n) or "empty"
    return tool_result(todos=state.todos, summary=summary)


def _clarifier(state: OwnToolsState) -> Callable[..., Awaitable[str]]:
    async def clarify(args: dict[str, Any], **context: Any) -> str:
        asker = state.asker
        if asker is None or not asker.can_ask(AskKind.CLARIFY):
            return tool_error(
                "No one can answer questions in this session; go on with your best judgement."
            )
        choices = tuple(str(c) for c in args.get("choices") or [])
        question = Question(
            asker.next_id(), str(args["question"]), choices, asker.deadline(CLARIFY_TIMEOUT)
        )
        call_id = str(context.get("tool_call_id", ""))
        answer, _ = await asker.ask(Ask.about(AskKind.CLARIFY, question, call_id), None)
        if not isinstance(answer, str) or not answer.strip():
            return tool_result(
                answer="", note="The user gave no answer; go on with your best judgement."
            )
        return tool_result(answer=answer.strip())

    return clarify
