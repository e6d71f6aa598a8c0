"""Memory providers: where the agent's memory tools go.

At most one provider is active. The built-in one (notes in HERMES_HOME/memories/MEMORY.md,
the `memory` tool) is the default; a plugin of Hermes's `exclusive` kind may register
another with `ctx.register_memory_provider(provider)`, and when `memory.provider` in
config.yaml names it, its tools take over from the built-in's. A provider is Hermes's
MemoryProvider shape: `name`, `get_tool_schemas()` (a list of {name, description,
parameters}) and `handle_tool_call(name, args, **kwargs)`; `is_available()` is optional.
The agent routes these tools to the provider, never to the shared registry.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.storage.atomic import atomic_write_text
from workbench.core.storage.private import private_dir
from workbench.core.tools.errors import tool_error, tool_result
from workbench.core.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

BUILTIN = "builtin"
MEMORY_TOOLSET = "memory"  # Hermes's toolset: every tool of the active provider is in it
MEMORY_LIMIT = 8_000
MEMORY_SCHEMA = {
    "name": "memory",
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


class BuiltinMemory:
    """The default provider: one Markdown file of notes, written atomically."""

    name = BUILTIN

    def __init__(self, home: Path) -> None:
        self.path = home / "memories" / "MEMORY.md"

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [MEMORY_SCHEMA]

    def system_prompt_block(self) -> str:
        """The notes themselves: the model sees what it saved in earlier sessions."""
        try:
            notes = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return ""
        return (
            f"Your notes from earlier sessions (the memory tool edits them):\n{notes}"
            if notes
            else ""
        )

    def handle_tool_call(self, name: str, args: dict[str, Any], **_: Any) -> str:
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        action, content = args["action"], args.get("content") or ""
        old = args.get("old_text") or ""
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
            private_dir(self.path.parent)
            atomic_write_text(self.path, updated)
        except OSError as exc:
            return tool_error(f"Cannot save memory: {exc.strerror or exc}")
        return tool_result(saved=action, chars=len(updated), limit=MEMORY_LIMIT)


@dataclass(frozen=True)
class ProviderTool:
    name: str
    description: str
    available: bool
    reason: str = ""


class MemoryProviders:
    """The built-in provider and, when a plugin's is selected and loaded, that one instead."""

    def __init__(self, home: Path, reserved: Any = None) -> None:
        self.builtin = BuiltinMemory(home)
        self.selected = BUILTIN  # memory.provider from config.yaml
        self.plugin: tuple[str, Any] | None = None  # (plugin key, provider)
        self.problems: list[str] = []
        self._reserved = reserved  # names a provider may not take (built-in and other tools)
        self._registry: ToolRegistry | None = None

    @property
    def active(self) -> Any:
        return self.plugin[1] if self.plugin is not None else self.builtin

    @property
    def active_name(self) -> str:
        return str(getattr(self.active, "name", "") or (self.plugin or ("", ""))[0])

    def install(self, plugin_key: str, provider: Any) -> list[str]:
        """Make a plugin's provider the active one; returns the problems found with it."""
        problems = _check(provider)
        if not problems:
            self.plugin = (plugin_key, provider)
            self._registry = None
        return problems

    def remove(self, plugin_key: str) -> None:
        if self.plugin is not None and self.plugin[0] == plugin_key:
            self.plugin = None
            self._registry = None

    def registry(self) -> ToolRegistry:
        """The active provider's tools as a registry the agent's calls are routed to."""
        if self._registry is None:
            self._registry, self.problems = self._build(self.active)
        return self._registry

    def tools(self) -> list[ProviderTool]:
        """For the tools panel: the active provider's tools and whether they can run."""
        available, reason = _availability(self.active)
        registry = self.registry()
        entries = (registry.get_entry(name) for name in registry.get_all_tool_names())
        return [
            ProviderTool(entry.name, entry.description, available, reason)
            for entry in entries
            if entry is not None
        ]

    def _build(self, provider: Any) -> tuple[ToolRegistry, list[str]]:
        registry, problems = ToolRegistry(), []
        try:
            schemas = list(provider.get_tool_schemas() or [])
        except Exception as exc:
            return registry, [f"get_tool_schemas failed: {type(exc).__name__}: {exc}"]
        for schema in schemas:
            name = str(schema.get("name") or "")
            if not name or (self._reserved is not None and self._reserved(name)):
                problems.append(f"tool '{name}' refused: the name belongs to another tool")
                continue
            registry.register(
                name,
                MEMORY_TOOLSET,  # switched on and off as one, whichever provider is active
                {"name": name, **{k: v for k, v in schema.items() if k != "name"}},
                _forward(provider, name),
                check_fn=getattr(provider, "is_available", None),
                is_async=inspect.iscoroutinefunction(provider.handle_tool_call),
                description=str(schema.get("description") or ""),
                emoji="🧠",
            )
        return registry, problems


class MemorySession:
    """One session's use of the active provider: Hermes's lifecycle hooks, each optional and
    each called safely (a provider that raises is logged and noted, never the turn's end).
    Blocking hooks: the agent calls these from a worker thread."""

    def __init__(self, providers: MemoryProviders, session_id: str, home: Path) -> None:
        self.providers = providers
        self.session_id = session_id
        self.home = home
        self.turns = 0
        self.problems: list[str] = []
        self._started: list[Any] = []  # providers initialized for this session

    def _provider(self) -> Any:
        provider = self.providers.active
        if all(p is not provider for p in self._started):
            self._started.append(provider)
            self._call(provider, "initialize", self.session_id, hermes_home=str(self.home),
                       platform="tui", agent_context="primary")  # fmt: skip
        return provider

    def _call(self, provider: Any, hook: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(provider, hook, None)
        if not callable(method):
            return None
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            problem = f"memory provider {getattr(provider, 'name', '?')}: {hook} failed: {exc}"
            logger.warning(problem)
            self.problems.append(problem)
            return None

    def context(self, prompt: str) -> str:
        """What the provider adds to the system prompt for this turn (static block, recall)."""
        self.turns += 1
        provider = self._provider()
        self._call(provider, "on_turn_start", self.turns, prompt)
        parts = [
            self._call(provider, "system_prompt_block"),
            self._call(provider, "prefetch", prompt, session_id=self.session_id),
        ]
        return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())

    def turn_finished(self, prompt: str, answer: str, messages: list[dict[str, Any]]) -> None:
        provider = self._provider()
        self._call(provider, "sync_turn", prompt, answer, session_id=self.session_id,
                   messages=messages)  # fmt: skip
        self._call(provider, "queue_prefetch", prompt, session_id=self.session_id)

    def pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """The messages about to be compressed away; the provider's text is kept in the summary."""
        text = self._call(self._provider(), "on_pre_compress", messages)
        return text if isinstance(text, str) else ""

    def delegated(self, task: str, result: str, child_session_id: str) -> None:
        """The parent's provider observes what a sub-agent was asked and answered."""
        self._call(self._provider(), "on_delegation", task, result,
                   child_session_id=child_session_id)  # fmt: skip

    def end(self, messages: list[dict[str, Any]]) -> None:
        for provider in self._started:
            self._call(provider, "on_session_end", messages)
            self._call(provider, "shutdown")
        self._started.clear()


def _forward(provider: Any, name: str) -> Any:
    if inspect.iscoroutinefunction(provider.handle_tool_call):

        async def call_async(args: dict[str, Any], **kwargs: Any) -> Any:
            return await provider.handle_tool_call(name, args, **kwargs)

        return call_async

    def call(args: dict[str, Any], **kwargs: Any) -> Any:
        return provider.handle_tool_call(name, args, **kwargs)

    return call


def _check(provider: Any) -> list[str]:
    missing = [
        m
        for m in ("get_tool_schemas", "handle_tool_call")
        if not callable(getattr(provider, m, None))
    ]
    return [f"not a memory provider: it has no {', '.join(missing)}"] if missing else []


def _availability(provider: Any) -> tuple[bool, str]:
    check = getattr(provider, "is_available", None)
    if not callable(check):
        return True, ""
    try:
        return (True, "") if check() else (False, "the provider says it is not available")
    except Exception as exc:
        return False, f"is_available failed: {exc}"
