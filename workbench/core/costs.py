"""What the model is offered and what it costs, and what a switch would change before it is
saved: the tools panel and `hermes-tui tools` show these.

The sizes are of the definitions a session's top agent sends (core.agent.offered), counted
with the configured model's tokenizer. A switch is previewed by making the same change the
command would save to a copy of the config and measuring again, so the preview is the change
that saving makes (a toolset switched off also shortens delegate_task's list of toolsets).
"""

from __future__ import annotations

from typing import Any

from workbench.core.agent.context import Window
from workbench.core.agent.offered import Costs, measure
from workbench.core.commands import CommandFailed, defer_tool_change, tool_change
from workbench.core.config import Config, ConfigError, preview_config
from workbench.core.model import tokens
from workbench.core.model.settings import ModelConfigError, resolve
from workbench.core.runtime import Runtime
from workbench.core.session import sizing_tools
from workbench.core.tools.deferral import ToolSearchSettings
from workbench.core.tools.toolsets import ToolsetError, toolset_change

COST_CACHE = 20_000  # definitions whose counts are kept (every registered tool's, and more)
_meters: dict[str, tokens.Meter] = {}  # one per tokenizer, kept: its counts are its cache


def offered_costs(runtime: Runtime, config: Config | None = None, **model_flags: Any) -> Costs:
    """Each tool's size and what the top agent is offered now (or under `config`): its own
    tools, the memory provider's and the shared ones, counted with the configured model's
    tokenizer (a shipped table for a model we know, else the estimate) and trimmed as a
    small model's lean profile trims them."""
    config = config or runtime.config
    model, lean, window = _model(config, **model_flags)
    meter = _meter(runtime, model)
    # deferral, as the agent applies it for this model's profile
    search = ToolSearchSettings.from_config(config).for_profile(lean)
    tools = sizing_tools(runtime, config)
    return measure(meter, tools, runtime.effective_tools(config, lean=lean), lean, search, window)


def start_tokenizer(runtime: Runtime, **model_flags: Any) -> None:
    """Start what `offered_costs` will count with, now: a shipped table loads in its child
    process (a few tenths of a second) while a command waits for its MCP servers."""
    tokenizer = _meter(runtime, _model(runtime.config, **model_flags)[0]).tokenizer
    start = getattr(tokenizer, "start", None)
    if start is not None:
        start()


def _model(config: Config, **model_flags: Any) -> tuple[str, bool, int | None]:
    """The configured model, whether its profile is lean, and the window a session of it
    sizes its listing by (core.agent.context); no usable model: sized by the estimate."""
    try:
        settings = resolve(config, **model_flags)
    except ModelConfigError:
        return "", False, None
    model = settings.model
    window = Window.for_model(model, settings.context_window, settings.max_tokens, None).context
    return model, settings.lean, window


def _meter(runtime: Runtime, model: str) -> tokens.Meter:
    """One per tokenizer and HERMES_HOME, kept; a shipped table's counts are kept on disk."""
    saved = tokens.SavedCounts(runtime.home / "cache" / "token-counts.json")
    # a front end's loop never stalls: a table is used in a child process
    tokenizer = tokens.tokenizer_for(model, in_child=True, saved=saved)
    key = f"{tokenizer.name}\0{runtime.home}"
    meter = _meters.get(key)
    if meter is None:
        meter = _meters[key] = tokens.Meter(tokenizer, cache_size=COST_CACHE)
    return meter


def preview_tool(
    runtime: Runtime, costs: Costs, name: str, enabled: bool, **model_flags: Any
) -> int:
    """Tokens every request would gain (or lose, negative) with this tool switched."""
    mutate, _ = tool_change(runtime, name, enabled)
    after = offered_costs(runtime, preview_config(runtime.config, mutate), **model_flags)
    return after.total - costs.total


def preview_toolset(
    runtime: Runtime, costs: Costs, name: str, enabled: bool, **model_flags: Any
) -> int:
    """Tokens every request would gain (or lose, negative) with this toolset switched."""
    try:
        mutate = toolset_change(name, enabled, runtime.toolsets, runtime.config)
    except (ToolsetError, ConfigError) as exc:
        raise CommandFailed(str(exc), usage=isinstance(exc, ToolsetError)) from exc
    after = offered_costs(runtime, preview_config(runtime.config, mutate), **model_flags)
    return after.total - costs.total


def preview_defer(
    runtime: Runtime, costs: Costs, name: str, deferred: bool, **model_flags: Any
) -> int:
    """Tokens every request would gain (or lose, negative) with `name` deferred (or sent in
    full): its definition against its listing line, and the bridge appearing or going."""
    mutate, _ = defer_tool_change(runtime, name, deferred)
    after = offered_costs(runtime, preview_config(runtime.config, mutate), **model_flags)
    return after.total - costs.total


def skill_sizes(runtime: Runtime, skills: list[Any], **model_flags: Any) -> dict[str, int]:
    """Each loadable skill's SKILL.md in tokens (what skill_view puts in the context), by its
    folder, counted with the configured model's tokenizer; a skill that cannot be loaded is
    left out (the tree says why instead)."""
    from workbench.core import skills as skill_store

    try:
        model = resolve(runtime.config, **model_flags).model
    except ModelConfigError:
        model = ""
    tokenizer = tokens.tokenizer_for(model, in_child=True)
    meter = _meters.get(tokenizer.name)
    if meter is None:
        meter = _meters[tokenizer.name] = tokens.Meter(tokenizer, cache_size=COST_CACHE)
    texts: dict[str, str] = {}
    for skill in skills:
        if skill.problem:
            continue
        try:
            data = skill_store.read_bytes(skill.root, skill.skill_md)
        except skill_store.SkillError:
            continue
        texts[str(skill.directory)] = data.decode("utf-8", errors="replace")
    counts = meter.texts(list(texts.values())) if texts else []
    return dict(zip(texts, counts, strict=True))
