"""Views of the core's state for front ends: the CLI prints them, the UI shows them."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core import hermes_keys, requirements
from workbench.core.execution.approval import read_mode
from workbench.core.tools.memory import BUILTIN
from workbench.core.tools.toolsets import AGENT_TOOLSETS

if TYPE_CHECKING:
    from workbench.core.plugins.sources import PluginManifest
    from workbench.core.runtime import Runtime


def tool_rows(runtime: Runtime) -> list[dict[str, Any]]:
    """One row per tool: where it came from, whether the model may be offered it, and why not."""
    report = runtime.registry.availability_report()
    off, every_off = runtime.switched_off(), runtime.off_tools()
    offered = set(runtime.effective_tools())
    rows = []
    for name, entry in sorted(runtime.registry.snapshot().items()):
        availability = report[name]
        size = entry.max_result_size_chars
        rows.append(
            {
                "name": name,
                "toolset": entry.toolset,
                "source": entry.source.value,
                "owner": entry.owner,
                "available": availability.available,
                "reason": availability.reason or None,
                # why its schema cannot be used, so it is never offered (core.schema)
                "schema_problem": entry.schema_problem or None,
                "enabled": name not in every_off,  # by itself or with its toolset
                "switched_off": off.get(name),  # why this one tool is off, or None
                "offered": name in offered,
                "not_offered": None
                if name in offered
                else _not_offered(runtime, off.get(name), name in every_off),
                "emoji": entry.emoji,
                "description": entry.description,
                "max_result_size_chars": "inf" if size == float("inf") else size,
                "annotations": dict(entry.annotations),  # an MCP tool's hints, as declared
                "untrusted": entry.untrusted,
            }
        )
    return rows


def _not_offered(runtime: Runtime, alone: str | None, off: bool) -> str:
    """Why a tool is not offered, short enough for the detail's line."""
    if runtime.config.error:
        return "config.yaml cannot be read"
    if alone:
        return alone
    return "toolset disabled" if off else "unavailable"


def toolset_rows(runtime: Runtime) -> list[dict[str, Any]]:
    """One row per toolset a switch shows: the registry's and the agent's own (`source`
    "agent"), on when every tool of it is offered (a composite such as `hermes-cli` in
    platform_toolsets.cli switches on those it holds: `via` names it), with its tools."""
    choices, toolsets = runtime.choices, runtime.toolsets
    members = {n: e.toolset for n, e in runtime.registry.snapshot().items()}
    members |= runtime.agent_tools()
    held: dict[str, list[str]] = {}  # toolset -> its tools
    for tool, toolset in sorted(members.items()):
        held.setdefault(toolset, []).append(tool)
    switchable = toolsets.switchable()
    states = choices.states(toolsets, switchable, members)
    return [
        {
            "name": name,
            "source": source,
            "enabled": states[name][0],
            "via": states[name][1],
            "tools": held.get(name, []),
        }
        for name, source in switchable.items()
    ]


def not_in_hermes_tui(runtime: Runtime) -> list[str]:
    """Hermes's toolsets config.yaml names that hermes-tui has no tools for (`browser`,
    `vision`, ...): kept there for Hermes, nothing to offer here; said once by `doctor`."""
    if runtime.config.error:
        return []
    return runtime.choices.not_here(runtime.toolsets)


def agent_toolsets_left_out(runtime: Runtime) -> list[str]:
    """The agent's own toolsets (todo, memory, ...) that are off only because
    `platform_toolsets.cli` is a list that does not name them (as in Hermes): an older
    hermes-tui wrote such lists, so `doctor` says it rather than let them go silently."""
    choices = runtime.choices
    if runtime.config.error or choices.enabled is None:
        return []
    return [
        ts
        for ts in AGENT_TOOLSETS
        if ts not in choices.disabled and not choices.is_enabled(ts, runtime.toolsets)
    ]


def home_exposure(home: Path) -> str:
    """Why others can read HERMES_HOME, or "" when they cannot (start-up tightens our own)."""
    try:
        info = home.stat()
    except OSError:
        return ""  # the home's own problem is reported where it is created
    if stat.S_IMODE(info.st_mode) & 0o077 == 0:
        return ""
    return (
        f"{home} is mode {stat.S_IMODE(info.st_mode):o}: others can read your sessions, logs "
        f"and results (it is not yours to tighten, or could not be: chmod 700 it)"
    )


def home_io_problem(home: Path) -> str:
    """Why HERMES_HOME cannot be read or written now, found by trying: "" when it can.

    A full disk still lets a file be created, and a read-only or immutable folder can look
    writable to a permission check; one byte written, synced and removed tells the truth.
    """
    import tempfile

    try:
        os.listdir(home)
    except OSError as exc:
        return f"{home} cannot be read ({exc.strerror or exc}): nothing of yours can be loaded"
    try:
        fd, name = tempfile.mkstemp(dir=home, prefix=".doctor-")
        try:
            os.write(fd, b"x")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        return (
            f"{home} cannot be written ({exc.strerror or exc}): sessions run in memory, "
            "their transcripts, large results and your choices are not saved"
        )
    return ""


def backend_problems(runtime: Runtime) -> list[str]:
    """What is wrong with where commands run: a refused backend, a sandbox that cannot work."""
    backend = runtime.backend()
    problems = [f"terminal: {p}" for p in backend.problems]
    works, why = backend.working()
    if not works:  # a refused backend, or a sandbox that cannot start: never run unconfined
        problems.append(why)
    return problems


def schema_problems(runtime: Runtime) -> list[str]:
    """The tools whose schemas cannot be used, each with where it came from and why: they
    are listed, and never offered to the model."""
    return [
        f"tool {name} ({entry.source.value} '{entry.owner}'): its schema cannot be used, so "
        f"the model is not offered it: {entry.schema_problem}"
        for name, entry in sorted(runtime.registry.snapshot().items())
        if entry.schema_problem
    ]


def plugin_conflicts(manifest: PluginManifest) -> list[str]:
    """What a plugin declares that would replace a package hermes-tui needs."""
    return requirement_conflicts(manifest.requirements)


def requirement_conflicts(lines: list[str]) -> list[str]:
    """Which of these declared requirements would replace a package hermes-tui needs."""
    if not lines:
        return []
    ours = requirements.own_requirements()
    installed = {name: requirements.installed_version(name) for name in ours}
    return requirements.conflicts(lines, ours, installed)


def collect_problems(runtime: Runtime) -> list[str]:
    problems = list(runtime.home_problems)
    if exposed := home_exposure(runtime.home):
        problems.append(exposed)
    if runtime.config.untrusted:  # the approval rules say what it means for them
        problems.append(f"config: not trusted: {runtime.config.untrusted}")
    if runtime.config.error:
        problems.append(f"config: {runtime.switches_unknown()}")  # and what that means
    else:
        problems.extend(f"toolsets: {p}" for p in runtime.choices.problems(runtime.toolsets))
    problems.extend(f"tool module {f.module}: {f.error}" for f in runtime.discovery.failed)
    problems.extend(schema_problems(runtime))
    for server in runtime.mcp.statuses() if runtime.mcp else []:
        if server.state not in ("ready", "disabled"):
            problems.append(f"MCP server {server.name}: {server.state}: {server.error}")
    for state in runtime.plugins.list() if runtime.plugins else []:
        if state.status == "failed":
            problems.append(f"plugin {state.key}: {state.error}")
        problems.extend(f"plugin {state.key}: {c}" for c in plugin_conflicts(state.manifest))
    if runtime.mcp is not None and (sdk := requirements.installed_sdk_problem()):
        problems.append(f"MCP: {sdk}")
    problems.extend(backend_problems(runtime))
    problems.extend(hermes_keys.problems(runtime.config.get))  # a bad value, and its default
    if mode_problem := read_mode(runtime.config.get("approvals.mode"))[2]:
        problems.append(mode_problem)
    problems.extend(runtime.checkpoints().problems)  # a bad `checkpoints:` value, and its fallback
    memory = runtime.memory
    if memory.selected != BUILTIN and memory.plugin is None:
        problems.append(
            f"memory.provider names '{memory.selected}', which is not loaded (see `hermes-tui "
            "plugins`); the built-in memory is used meanwhile"
        )
    return problems
