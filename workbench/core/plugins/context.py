"""The context a plugin's `register(ctx)` receives: Hermes's PluginContext, recorded.

Nothing a plugin registers takes effect until its `register` returns: the manager then
commits the recording in one step, so a plugin that raises half-way leaves nothing behind
and a hot reload swaps old for new atomically. Every method Hermes plugins call is
accepted; the ones this front end does not run are recorded and shown in the plugin's
details. A method hermes-tui does not offer fails that plugin with a message naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.plugins.hooks import MIDDLEWARE_KINDS, VALID_HOOKS
from workbench.core.plugins.sources import PluginManifest

logger = logging.getLogger(__name__)

# Hermes PluginContext methods accepted and recorded (not run by this front end).
RECORDED = (
    "register_context_engine",
    "register_image_gen_provider",
    "register_video_gen_provider",
    "register_web_search_provider",
    "register_browser_provider",
    "register_tts_provider",
    "register_transcription_provider",
    "register_secret_source",
    "register_dashboard_auth_provider",
    "register_platform",
    "register_slack_action_handler",
    "register_auxiliary_task",
    "register_provider",
)


class PluginUnsupported(AttributeError):
    """The plugin used something hermes-tui does not offer."""


@dataclass
class Recording:
    tools: list[dict[str, Any]] = field(default_factory=list)
    hooks: list[tuple[str, Callable[..., Any]]] = field(default_factory=list)
    middleware: list[tuple[str, Callable[..., Any]]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    cli_commands: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    memory_providers: list[Any] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # other context methods it called
    warnings: list[str] = field(default_factory=list)


class PluginContext:
    def __init__(
        self,
        manifest: PluginManifest,
        *,
        config: dict[str, Any] | None = None,
        dispatcher: Callable[..., str] | None = None,
    ) -> None:
        self.manifest = manifest
        self.config = dict(config or {})
        self.recording = Recording()
        self._dispatcher = dispatcher

    @property
    def profile_name(self) -> str:
        return "default"

    @property
    def llm(self) -> Any:
        raise PluginUnsupported(
            f"plugin '{self.manifest.key}' uses ctx.llm (host LLM access), which hermes-tui "
            "does not offer"
        )

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Callable[..., Any],
        check_fn: Callable[[], Any] | None = None,
        requires_env: list[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
        **extra: Any,
    ) -> None:
        """Hermes's positional order; `max_result_size_chars` and other extras are kept."""
        allowed = {
            "max_result_size_chars",
            "dynamic_schema_overrides",
            "path_args",
            "parallel_safe",
        }
        unknown = sorted(set(extra) - allowed)
        if unknown:
            self.recording.warnings.append(f"register_tool({name!r}) ignored {', '.join(unknown)}")
        self.recording.tools.append(
            {
                "name": name,
                "toolset": toolset,
                "schema": schema,
                "handler": handler,
                "check_fn": check_fn,
                "requires_env": requires_env,
                "is_async": is_async,
                "description": description,
                "emoji": emoji,
                "override": override,
                **{k: v for k, v in extra.items() if k in allowed},
            }
        )

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        if hook_name not in VALID_HOOKS:
            self.recording.warnings.append(f"unknown hook '{hook_name}' (stored, never called)")
        self.recording.hooks.append((hook_name, callback))

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        if kind not in MIDDLEWARE_KINDS:
            self.recording.warnings.append(f"unknown middleware kind '{kind}'")
        self.recording.middleware.append((kind, callback))

    def register_command(
        self, name: str, handler: Callable[..., Any], description: str = "", args_hint: str = ""
    ) -> None:
        self.recording.commands.append("/" + name.lower().lstrip("/").replace(" ", "-"))

    def register_cli_command(
        self,
        name: str,
        help: str = "",
        setup_fn: Any = None,
        handler_fn: Any = None,
        description: str = "",
    ) -> None:
        self.recording.cli_commands.append(name)

    def register_skill(self, name: str, path: Any = None, description: str = "") -> None:
        self.recording.skills.append(f"{self.manifest.name}:{name}")

    def register_memory_provider(self, provider: Any) -> None:
        """An exclusive plugin's provider; it becomes active when memory.provider names it."""
        self.recording.memory_providers.append(provider)

    def inject_message(self, content: str, role: str = "user") -> bool:
        self.recording.other.append("inject_message")
        return False

    def dispatch_tool(
        self, tool_name: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> str:
        """Call a tool through the same pipeline as the agent (approvals, budgets;
        Hermes's skips them)."""
        if self._dispatcher is None:
            raise PluginUnsupported("tool dispatch is not available while the plugin loads")
        return self._dispatcher(tool_name, args or {}, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in RECORDED:

            def record(*args: Any, **kwargs: Any) -> None:
                self.recording.other.append(name)

            return record
        raise PluginUnsupported(
            f"plugin '{self.manifest.key}' called ctx.{name}, which hermes-tui does not offer"
        )
