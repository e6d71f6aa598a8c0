"""The agent's own tools, handled by the session, not the shared registry (as in Hermes).

`todo` is the session's task list, `clarify` asks the user through the front end (never in
parallel), `memory` keeps notes under HERMES_HOME. They run through the same executor as
every other call (events, timeline, transcript) via `SessionTools`, a registry view that
puts the session's tools in front of the shared ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.atomic import atomic_write_text
from workbench.core.errors import tool_error, tool_result
from workbench.core.registry import ToolEntry, ToolRegistry

MEMORY_LIMIT = 8_000
TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")
Clarifier = Callable[[str, list[str]], Awaitable[str | None]]


class SessionTools:
    """A registry view: the session's own tools first, then the shared registry."""

    def __init__(self, shared: ToolRegistry, own: ToolRegistry) -> None:
        self.shared = shared
        self.own = own

    def _owner(self, name: str) -> ToolRegistry:
        return self.own if self.own.get_entry(name) is not None else self.shared

    def get_entry(self, name: str) -> ToolEntry | None:
        return self.own.get_entry(name) or self.shared.get_entry(name)

    def dispatch(self, name: str, args: dict, **kwargs: Any) -> str | dict:
        return self._owner(name).dispatch(name, args, **kwargs)

    async def dispatch_async(self, name: str, args: dict, **kwargs: Any) -> str | dict:
        return await self._owner(name).dispatch_async(name, args, **kwargs)


@dataclass
class SessionState:
    home: Path
    todos: list[dict[str, Any]] = field(default_factory=list)
    clarify: Clarifier | None = None  # set by a front end that can ask the user

    @property
    def memory_file(self) -> Path:
        return self.home / "memories" / "MEMORY.md"


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
MEMORY_SCHEMA = {
    "description": (
        f"Persistent notes kept across sessions (at most {MEMORY_LIMIT:,} characters). "
        "action: read, add (content), replace (old_text, content) or remove (old_text)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["read", "add", "replace", "remove"]},
            "content": {"type": "string"},
            "old_text": {"type": "string"},
        },
        "required": ["action"],
    },
}


def session_tools(shared: ToolRegistry, state: SessionState) -> SessionTools:
    own = ToolRegistry()
    own.register("todo", "todo", TODO_SCHEMA, lambda a, **k: _todo(state, a), emoji="📋")
    own.register(
        "clarify",
        "clarify",
        CLARIFY_SCHEMA,
        _clarifier(state),
        is_async=True,
        emoji="❓",
        interactive=True,
    )
    own.register("memory", "memory", MEMORY_SCHEMA, lambda a, **k: _memory(state, a), emoji="🧠")
    return SessionTools(shared, own)


def _todo(state: SessionState, args: dict[str, Any]) -> str:
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


def _clarifier(state: SessionState) -> Callable[..., Awaitable[str]]:
    async def clarify(args: dict[str, Any], **_: Any) -> str:
        if state.clarify is None:
            return tool_error(
                "No one can answer questions in this session; go on with your best judgement."
            )
        try:
            answer = await state.clarify(args["question"], list(args.get("choices") or []))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return tool_error(f"The question could not be asked: {exc}")
        if not answer or not answer.strip():
            return tool_result(
                answer="", note="The user gave no answer; go on with your best judgement."
            )
        return tool_result(answer=answer.strip())

    return clarify


def _memory(state: SessionState, args: dict[str, Any]) -> str:
    path = state.memory_file
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    action, content, old = args["action"], args.get("content") or "", args.get("old_text") or ""
    if action == "read":
        return tool_result(memory=text, chars=len(text), limit=MEMORY_LIMIT)
    if action in ("replace", "remove") and (not old or old not in text):
        return tool_error("old_text not found in memory; nothing was changed")
    if action == "add":
        if not content.strip():
            return tool_error("add needs content")
        updated = (text.rstrip("\n") + "\n" if text.strip() else "") + content.strip() + "\n"
    elif action == "replace":
        updated = text.replace(old, content, 1)
    else:
        updated = text.replace(old, "", 1)
    if len(updated) > MEMORY_LIMIT:
        return tool_error(
            f"memory would be {len(updated):,} characters (limit {MEMORY_LIMIT:,}); "
            "remove or shorten notes first"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, updated)
    except OSError as exc:
        return tool_error(f"Cannot save memory: {exc.strerror or exc}")
    return tool_result(saved=action, chars=len(updated), limit=MEMORY_LIMIT)
