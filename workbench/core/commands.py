"""What both front ends do to the runtime, said the same way in both.

Switching a toolset or a single tool, choosing the memory provider and acting on a source (an MCP server or a plugin) are each
written once here: the command-line tool prints the sentence a command
returns, the workbench shows it as a notification. A command that cannot be done raises
`CommandFailed` with the sentence that says why; nothing was changed then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.plugins.manager import PluginState
    from workbench.core.runtime import Runtime

BUILTIN_MEMORY = "builtin"
NOTHING_CHANGED = "Nothing was changed."


class CommandFailed(Exception):
    """A command that could not be done. `usage` marks a request that was itself wrong (an
    unknown name), as opposed to one that failed (a config file that cannot be written)."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


@dataclass(frozen=True, slots=True)
class Done:
    """A command that was carried out; `ok` is false when what it started then failed (a
    plugin enabled and saved whose code did not load)."""

    message: str
    ok: bool = True


class SourceAction(StrEnum):
    ENABLE = "enable"
    DISABLE = "disable"
    RELOAD = "reload"
    RESTART = "restart"


def set_toolset(runtime: Runtime, name: str, enabled: bool) -> Done:
    """Switch a toolset on or off, saved to config.yaml at once."""
    from workbench.core.config import ConfigError
    from workbench.core.tools.toolsets import ToolsetError, set_toolset_enabled

    try:
        set_toolset_enabled(name, enabled, runtime.toolsets, runtime.config)
    except ToolsetError as exc:
        raise CommandFailed(str(exc), usage=True) from exc
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    runtime.reload_config()
    state = "enabled" if enabled else "disabled"
    done = f"toolset {name} {state} (saved to {runtime.config.path})"
    if not runtime.toolsets.here(name):
        done += f"; {name} is Hermes's, not in hermes-tui: it changes nothing here"
    return Done(done)


def set_tool(runtime: Runtime, name: str, enabled: bool) -> Done:
    """Switch one tool on or off, saved to config.yaml at once: an MCP tool in its server's
    `tools.include`/`tools.exclude` (NAME or Hermes's `server:tool`), any other in
    `tools.disabled`."""
    from workbench.core.config import ConfigError, update_config

    mutate, where = tool_change(runtime, name, enabled)
    try:
        update_config(mutate, runtime.config.path)
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    runtime.reload_config()
    state = "switched on" if enabled else "switched off"
    return Done(f"tool {name} {state} (saved to {runtime.config.path}: {where})")


def set_deferred(runtime: Runtime, name: str, deferred: bool) -> Done:
    """Send one tool in full with every request, or defer it behind tool_search, saved to
    config.yaml at once in Hermes's key (tools.tool_search.defer)."""
    from workbench.core.config import ConfigError, update_config
    from workbench.core.tools.deferral import ToolSearchSettings

    mutate, where = defer_tool_change(runtime, name, deferred)
    try:
        update_config(mutate, runtime.config.path)
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    runtime.reload_config()
    state = "deferred behind tool_search" if deferred else "sent in full"
    done = f"tool {name} {state} (saved to {runtime.config.path}: {where})"
    if not ToolSearchSettings.from_config(runtime.config).on:
        done += "; tool search is off (tools.tool_search.enabled), so every tool is sent in full"
    return Done(done)


def defer_tool_change(
    runtime: Runtime, name: str, deferred: bool
) -> tuple[Callable[[Any], None], str]:
    """The change to config.yaml that sends `name` in full or defers it, and the key."""
    from workbench.core.agent.own_tools import OWN_TOOL_NAMES
    from workbench.core.tools.deferral import DEFER_KEY, DeferError, ToolSearchSettings
    from workbench.core.tools.deferral import defer_change as change

    if runtime.config.error:
        raise CommandFailed(f"{runtime.config.error}\n{NOTHING_CHANGED}")
    entry = runtime.registry.get_entry(name) or runtime.memory.registry().get_entry(name)
    if entry is None and name not in OWN_TOOL_NAMES:
        raise CommandFailed(f"unknown tool '{name}' (see `hermes-tui tools`)", usage=True)
    toolset = entry.toolset if entry is not None else "agent"  # the agent's own: core tools
    try:
        settings = ToolSearchSettings.from_config(runtime.config)
        return change(name, deferred, toolset, settings), DEFER_KEY
    except DeferError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc


def tool_change(runtime: Runtime, name: str, enabled: bool) -> tuple[Callable[[Any], None], str]:
    """The change to config.yaml that switches one tool, and the key it writes."""
    from workbench.core.tools import switches
    from workbench.core.tools.events import ToolSource

    if runtime.config.error:
        raise CommandFailed(f"{runtime.config.error}\n{NOTHING_CHANGED}")
    entry = runtime.registry.get_entry(name)
    if entry is None and ":" in name and not name.startswith("mcp__"):
        server, tool = name.split(":", 1)  # Hermes's notation for an MCP tool
        return _mcp_change(runtime, server, tool, enabled)
    if entry is None:
        raise CommandFailed(_not_a_tool(runtime, name), usage=True)
    helpers = runtime.mcp.utilities if runtime.mcp is not None else {}
    if entry.source is ToolSource.MCP and name not in helpers:  # helpers: tools.disabled
        originals = runtime.mcp.original_names if runtime.mcp is not None else {}
        server, tool = originals.get(name, (entry.owner, name))
        return _mcp_change(runtime, server, tool, enabled)
    return (lambda doc: switches.switch(doc, name, enabled)), switches.DISABLED_KEY


def _not_a_tool(runtime: Runtime, name: str) -> str:
    """Why `name` cannot be switched alone: the agent's own tools switch with their toolset."""
    toolset = runtime.agent_tools().get(name)
    if toolset is None:
        return f"unknown tool '{name}' (see `hermes-tui tools`)"
    return (
        f"{name} is one of the agent's own tools: it switches with its toolset "
        f"(`hermes-tui toolsets disable {toolset}`; in the workbench: the toolset's checkbox)"
    )


def _mcp_change(
    runtime: Runtime, server: str, tool: str, enabled: bool
) -> tuple[Callable[[Any], None], str]:
    from workbench.core.mcp.filters import FilterError, switch

    servers = runtime.config.get("mcp_servers")
    if not isinstance(servers, dict) or not isinstance(servers.get(server), dict):
        raise CommandFailed(f"no MCP server '{server}' in mcp_servers of config.yaml", usage=True)

    def mutate(doc: Any) -> None:
        try:
            switch(doc, server, tool, enabled)
        except FilterError as exc:
            raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc

    return mutate, f"mcp_servers.{server}.tools"


def memory_choices(runtime: Runtime) -> list[str]:
    """The providers one may choose: the built-in one and every provider plugin."""
    plugins = runtime.plugins
    found = plugins.memory_provider_plugins() if plugins is not None else []
    return [BUILTIN_MEMORY, *(state.key for state in found)]


def select_memory(runtime: Runtime, name: str) -> Done:
    """Make `name` the memory provider (saved), and say which tools it brings."""
    from workbench.core.config import ConfigError

    if runtime.plugins is None:
        raise CommandFailed("plugins are off (HERMES_SAFE_MODE): only the built-in memory")
    try:
        state = runtime.plugins.select_memory_provider(name)
    except ValueError as exc:
        raise CommandFailed(str(exc), usage=True) from exc
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    if state is not None and state.status != "loaded":
        raise CommandFailed(f"{name}: {state.error}")
    tools = ", ".join(t.name for t in runtime.memory.tools())
    return Done(
        f"memory provider: {runtime.memory.active_name} (saved to {runtime.config.path}); "
        f"tools: {tools}"
    )


def act_on_source(runtime: Runtime, action: SourceAction, name: str) -> Done:
    """Restart an MCP server; enable, disable or reload a plugin."""
    if action is SourceAction.RESTART:
        return _restart_server(runtime, name)
    return _act_on_plugin(runtime, action, name)


def _restart_server(runtime: Runtime, name: str) -> Done:
    if runtime.mcp is None:
        raise CommandFailed(f"restart {name}: no MCP server is running", usage=True)
    try:
        runtime.mcp.restart(name)
    except KeyError as exc:
        raise CommandFailed(f"restart {name}: no such MCP server", usage=True) from exc
    except Exception as exc:  # a server's own failure: said, and the app goes on
        raise CommandFailed(f"restart {name}: {exc}") from exc
    return Done(f"restarting MCP server {name}")


def _act_on_plugin(runtime: Runtime, action: SourceAction, name: str) -> Done:
    from workbench.core.config import ConfigError

    if runtime.plugins is None:
        raise CommandFailed(f"{action} {name}: plugins are off (HERMES_SAFE_MODE)")
    try:
        if action is SourceAction.RELOAD:
            state = runtime.plugins.reload(name)
            return Done(f"plugin {state.key}: {state.last_change or state.status}")
        state = runtime.plugins.set_enabled(name, action is SourceAction.ENABLE)
    except KeyError as exc:
        raise CommandFailed(str(exc.args[0]) if exc.args else name, usage=True) from exc
    except ConfigError as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_CHANGED}") from exc
    except Exception as exc:  # a plugin's own failure: said, and the app goes on
        raise CommandFailed(f"{action} {name}: {exc}") from exc
    return Done(
        f"plugin {state.key}: {action}d (saved to {runtime.config.path}); {plugin_summary(state)}",
        ok=state.status != "failed",
    )


def plugin_summary(state: PluginState) -> str:
    """One line on a plugin: loaded with what, disabled, failed and why, and its problems."""
    memory = f", memory provider: {', '.join(state.memory_tools)}" if state.memory_tools else ""
    detail = {
        "loaded": f"loaded, {len(state.tools)} tool(s){memory}",
        "failed": f"FAILED: {state.error}",
        "disabled": "disabled (enable with `hermes-tui plugins enable KEY`)",
        "not loaded": f"not loaded: {state.error}" if state.error else "not loaded",
    }.get(state.status, state.status)
    extra = [f"refused {name}: {why}" for name, why in state.refused]
    extra += state.manifest.problems + state.warnings
    running = sum(c.running for c in state.processes)
    if running:
        extra.append(f"{running} process(es) it started running (stopped with hermes-tui)")
    return detail + "".join(f"; {e}" for e in extra)


def plugin_extras(state: PluginState, lines: int = 5) -> list[str]:
    """Below a plugin's line: its hooks (which run here), each process it started as it
    loaded, and the last lines its code printed (which never reach hermes-tui's stdout),
    every character visible."""
    from workbench.core.printable import escape

    said = [state.hooks_said] if state.hooks else []
    said += [
        f"process {c.pid}: {escape(c.command)[:120]}" + ("" if c.running else " (ended)")
        for c in state.processes
    ]
    printed = state.output
    if printed:
        more = f", the last {lines}" if len(printed) > lines else ""
        said.append(f"printed (in the log too{more}):")
        said += [f"  {escape(line)[:200]}" for line in printed[-lines:]]
    return said
