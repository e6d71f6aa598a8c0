"""Toolsets: static bundles, toolsets derived from the registry, and the user's choices.

Resolution follows Hermes's `toolsets.py`: a static toolset's tools are merged with
every registry tool in a toolset of that name, `all`/`*` means everything, and disabled
toolsets are subtracted last, by tool name ("disabled wins"; a disabled platform bundle such
as `hermes-cli` takes away only its tools beyond Hermes's core ones, as in Hermes). Unlike
Hermes, an include cycle is an error naming the cycle, and views are derived on demand,
never cached stale.

Every Hermes 0.19.0 stock toolset is known (core.tools.stock): the ones hermes-tui has tools
for work; the others (`browser`, `vision`, ...) offer nothing here and are never "unknown".
The agent's own tools are in Hermes's toolsets too (`todo`, `memory`, `clarify`,
`delegation`, `session_search`): the session provides them, not the registry, and they
switch like any other. `memory` stands for every tool of the active memory provider.

The user's choices live under Hermes's keys in config.yaml:
`platform_toolsets.cli` (enabled; unset: every toolset), `agent.disabled_toolsets`
(subtracted last) and `known_plugin_toolsets.cli` (plugin and MCP toolsets already seen; a
new one starts enabled, one the user turned off stays off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.config import Config, preview_config, set_path, update_config
from workbench.core.tools import stock
from workbench.core.tools.events import ToolsetsChanged, ToolSource
from workbench.core.tools.registry import ToolRegistry

PLATFORM = "cli"
ENABLED_KEY = f"platform_toolsets.{PLATFORM}"
DISABLED_KEY = "agent.disabled_toolsets"
KNOWN_KEY = f"known_plugin_toolsets.{PLATFORM}"
AGENT = "agent"  # the source of the agent's own toolsets, as the front ends say it

# The agent's own toolsets (Hermes's names) and their tools: the session's, not the
# registry's (core.agent.own_tools); `memory` is the active memory provider's tools.
AGENT_TOOLSETS: dict[str, tuple[str, ...]] = {
    "clarify": ("clarify",),
    "delegation": ("delegate_task",),
    "memory": ("memory",),
    "session_search": ("session_search",),
    "todo": ("todo",),
}
AGENT_TOOLS: dict[str, str] = {t: ts for ts, tools in AGENT_TOOLSETS.items() for t in tools}

_OURS: dict[str, dict[str, Any]] = {
    "web": {
        "description": "Web research and content extraction tools",
        "tools": ["web_search", "web_extract"],
        "includes": [],
    },
    "search": {
        "description": "Web search only (no content extraction/scraping)",
        "tools": ["web_search"],
        "includes": [],
    },
    "terminal": {
        "description": "Terminal/command execution",
        "tools": ["terminal"],
        "includes": [],
    },
    "file": {
        "description": "File manipulation tools: read, write, patch and search",
        "tools": ["read_file", "write_file", "patch", "search_files"],
        "includes": [],
    },
    "skills": {
        "description": "Skills: list, view and manage Hermes's SKILL.md folders",
        "tools": ["skills_list", "skill_view", "skill_manage"],
        "includes": [],
    },
    "todo": {"description": "The session's task list", "tools": ["todo"], "includes": []},
    "memory": {
        "description": "Notes kept across sessions (the active memory provider's tools)",
        "tools": ["memory"],
        "includes": [],
    },
    "clarify": {
        "description": "Ask the user a question and wait for the answer",
        "tools": ["clarify"],
        "includes": [],
    },
    "session_search": {
        "description": "Search past sessions",
        "tools": ["session_search"],
        "includes": [],
    },
    "delegation": {
        "description": "Hand a task to a sub-agent with its own conversation",
        "tools": ["delegate_task"],
        "includes": [],
    },
}


def _stock_entry(name: str, tools: tuple[str, ...], includes: tuple[str, ...]) -> dict[str, Any]:
    kind = "toolset" if name in stock.LEAVES else "composite toolset"
    return {
        "description": f"Hermes's {kind} {name}",
        "tools": list(tools),
        "includes": list(includes),
    }


# Hermes's stock toolsets, with ours (the ones hermes-tui has the tools of) in our words.
STATIC_TOOLSETS: dict[str, dict[str, Any]] = {
    **{name: _stock_entry(name, *definition) for name, definition in stock.STOCK.items()},
    **_OURS,
}
# The static toolsets with tools here: ours; the rest of Hermes's leaves offer nothing here.
IMPLEMENTED = frozenset(_OURS)
# Toolsets a small model's lean profile gets only when platform_toolsets.cli names them
# (not through a composite such as hermes-cli, nor with the list unset): its short set of
# tools is what it does well with. Switching one on names it.
LEAN_OPT_IN = frozenset({"skills"})


_Derived = dict[str, tuple[list[str], ToolSource]]  # toolset -> (its tools, their source)


class ToolsetError(ValueError):
    """An invalid toolset reference or definition (an include cycle, an unknown name)."""


@dataclass(frozen=True, slots=True)
class ToolsetInfo:
    name: str
    description: str
    tools: tuple[str, ...]
    includes: tuple[str, ...]
    kind: str  # "static", or the source of its tools: "builtin", "mcp", "plugin"


class Toolsets:
    """Toolset views over a registry and a set of static definitions."""

    def __init__(
        self, registry: ToolRegistry, static: dict[str, dict[str, Any]] | None = None
    ) -> None:
        self.registry = registry
        self.static = STATIC_TOOLSETS if static is None else static

    def _registry_toolsets(self) -> _Derived:
        out: _Derived = {}
        for name, entry in self.registry.snapshot().items():
            out.setdefault(entry.toolset, ([], entry.source))[0].append(name)
        return out

    def registry_toolsets(self) -> dict[str, ToolSource]:
        """Toolsets that hold registered tools → the source of their tools."""
        return {ts: src for ts, (_, src) in sorted(self._registry_toolsets().items())}

    def switchable(self) -> dict[str, str]:
        """Every toolset a switch shows → its source ("builtin", "mcp", "plugin", AGENT):
        the registry's and the agent's own (those win a name both hold: theirs are real)."""
        found = {ts: src.value for ts, src in self.registry_toolsets().items()}
        found.update((ts, AGENT) for ts in AGENT_TOOLSETS if ts in self.static)
        return dict(sorted(found.items()))

    def members(self) -> dict[str, str]:
        """Every tool a toolset can switch → its own toolset: the registry's and the
        agent's (the memory provider's beyond `memory` are the runtime's to add)."""
        found = {name: entry.toolset for name, entry in self.registry.snapshot().items()}
        return {**found, **self._agent_tools()}

    def _agent_tools(self) -> dict[str, str]:
        return {t: ts for t, ts in AGENT_TOOLS.items() if ts in self.static}

    def here(self, name: str) -> bool:
        """Whether hermes-tui has tools for the toolset: one of ours or the registry's, or a
        composite of Hermes's (it expands to ours); not one of Hermes's leaves we lack."""
        name = self._canonical(name)
        if name in self._registry_toolsets():
            return True
        if name in stock.LEAVES and name not in IMPLEMENTED:
            return False
        return self.is_known(name)

    def names(self) -> list[str]:
        aliases = self.registry.get_registered_toolset_aliases()
        return sorted({*self.static, *self._registry_toolsets(), *aliases})

    def get(self, name: str, derived: _Derived | None = None) -> ToolsetInfo | None:
        """`derived`: the registry's toolsets read once by a caller that asks for many."""
        name = self._canonical(name)
        derived = self._registry_toolsets() if derived is None else derived
        static = self.static.get(name)
        tools, source = derived.get(name, ([], None))
        if static is not None:
            merged = sorted({*static.get("tools", []), *tools})
            return ToolsetInfo(
                name,
                static.get("description", ""),
                tuple(merged),
                tuple(static.get("includes", [])),
                "static",
            )
        if source is None:
            return None
        description = {
            ToolSource.MCP: f"MCP server '{name.removeprefix('mcp-')}' tools",
            ToolSource.PLUGIN: f"Plugin toolset: {name}",
        }.get(source, f"Built-in toolset: {name}")
        return ToolsetInfo(name, description, tuple(sorted(tools)), (), source.value)

    def _canonical(self, name: str) -> str:
        if name in self.static:
            return name
        return self.registry.get_toolset_alias_target(name) or name

    def is_known(self, name: str) -> bool:
        return name in ("all", "*") or self.get(name) is not None

    def resolve(self, name: str, derived: _Derived | None = None) -> list[str]:
        """Sorted tool names of a toolset and everything it includes.

        Unknown names resolve to nothing (as Hermes); an include cycle raises
        `ToolsetError` naming it. Diamonds (one toolset included twice) are fine.
        """
        if name in ("all", "*"):
            return sorted({*self.registry.snapshot(), *self._agent_tools()})
        found: set[str] = set()
        derived = self._registry_toolsets() if derived is None else derived
        self._resolve_into(name, [], set(), found, derived)
        return sorted(found)

    def _resolve_into(
        self, name: str, path: list[str], done: set[str], found: set[str], derived: _Derived
    ) -> None:
        name = self._canonical(name)
        if name in path:
            cycle = " -> ".join([*path[path.index(name) :], name])
            raise ToolsetError(f"toolset include cycle: {cycle}")
        if name in done:
            return
        info = self.get(name, derived)
        if info is None:
            return
        found.update(info.tools)
        for child in info.includes:
            self._resolve_into(child, [*path, name], done, found, derived)
        done.add(name)

    def effective_tools(self, enabled: list[str] | None, disabled: list[str] | None) -> list[str]:
        """The tools a model may be offered: enabled minus disabled, disabled winning. The
        names a static toolset lists are in it whether registered or not (the runtime keeps
        those that are: core.runtime)."""
        derived = self._registry_toolsets()  # once: each toolset resolved reads it
        if enabled is None:
            names = {*self.registry.snapshot(), *self._agent_tools()}
        else:
            names = {tool for ts in enabled for tool in self.resolve(ts, derived)}
        for ts in disabled or []:
            taken = set(self.resolve(ts, derived))
            names -= taken - stock.CORE_TOOLS if stock.subtracts_core(ts) else taken
        return sorted(names)


@dataclass(frozen=True, slots=True)
class ToolsetSwitch:
    """The toolset whose switch leaves a tool off, and the key of config.yaml that says so."""

    toolset: str
    key: str  # DISABLED_KEY (in that list) or ENABLED_KEY (left out of that list)
    own: bool  # the tool's own toolset, rather than one that includes it


@dataclass(frozen=True)
class ToolsetChoices:
    """The user's toolset choices as read from config.yaml."""

    enabled: list[str] | None  # None: nothing saved, everything is on
    disabled: list[str]
    known: list[str]

    @classmethod
    def from_config(cls, config: Config) -> ToolsetChoices:
        return cls(
            enabled=_str_list(config.get(ENABLED_KEY)),
            disabled=_str_list(config.get(DISABLED_KEY)) or [],
            known=_str_list(config.get(KNOWN_KEY)) or [],
        )

    def enabled_toolsets(self, toolsets: Toolsets) -> list[str] | None:
        """Enabled toolset names, with plugin/MCP toolsets never seen before switched on."""
        if self.enabled is None:
            return None
        fresh = [
            ts
            for ts, src in toolsets.registry_toolsets().items()
            if src is not ToolSource.BUILTIN and ts not in self.known
        ]
        return sorted({*self.enabled, *fresh})

    def is_enabled(self, toolset: str, toolsets: Toolsets) -> bool:
        """Whether the toolset is on: every tool of it hermes-tui has is offered by these
        choices (so `[hermes-cli]` shows file, terminal, todo... on)."""
        return self.states(toolsets, [toolset])[toolset][0]

    def via(self, toolset: str, toolsets: Toolsets) -> list[str]:
        """The enabled toolsets that hold all of this one's tools when it is not listed
        itself: the composites (`hermes-cli`) that switch it on unless it is disabled."""
        return self.states(toolsets, [toolset], on_or_not=True)[toolset][1]

    def states(
        self,
        toolsets: Toolsets,
        names: Iterable[str],
        members: Iterable[str] | None = None,
        *,
        on_or_not: bool = False,
    ) -> dict[str, tuple[bool, list[str]]]:
        """Each of `names` → (on, the composites it is on through), read in one pass for
        the many a front end shows. `members`: every tool hermes-tui has (default: the
        registry's and the agent's); `on_or_not`: the composites even for a toolset off."""
        derived = toolsets._registry_toolsets()  # once: each resolve reads it
        here = set(toolsets.members() if members is None else members)
        enabled = self.enabled_toolsets(toolsets)
        offered = set(toolsets.effective_tools(enabled, self.disabled))
        composites = {ts: set(toolsets.resolve(ts, derived)) for ts in enabled or ()}
        out: dict[str, tuple[bool, list[str]]] = {}
        for name in names:
            have = set(toolsets.resolve(name, derived)) & here
            if name in self.disabled:
                on = False
            elif not have:  # nothing here to offer: on as the config lists it
                on = enabled is None or name in enabled
            else:
                on = have <= offered
            listed = enabled is not None and name in enabled
            via = [
                ts for ts, tools in composites.items() if ts != name and have <= tools
            ] if have and not listed and (on or on_or_not) else []  # fmt: skip
            out[name] = (on, via)
        return out

    def not_here(self, toolsets: Toolsets) -> list[str]:
        """Hermes's toolsets the choices name that hermes-tui has no tools for (`browser`,
        `vision`, ...): kept in config.yaml for Hermes, offering nothing here."""
        named = dict.fromkeys([*(self.enabled or []), *self.disabled])
        return sorted(ts for ts in named if toolsets.is_known(ts) and not toolsets.here(ts))

    def effective_tools(self, toolsets: Toolsets) -> list[str]:
        return toolsets.effective_tools(self.enabled_toolsets(toolsets), self.disabled)

    def off_by_toolset(
        self, toolsets: Toolsets, on: Iterable[str], members: Mapping[str, str] | None = None
    ) -> dict[str, ToolsetSwitch]:
        """Tools these choices leave off (`on`: what `effective_tools` gave) → the toolset
        that switches each off: its own when that one is off, else a disabled toolset that
        includes it (a disabled toolset wins over the tool's own). `members`: every tool →
        its own toolset (default: the registry's and the agent's, `Toolsets.members`)."""
        left = set(on)
        members = toolsets.members() if members is None else members
        off = [name for name in members if name not in left]
        if not off:
            return {}
        including: dict[str, str] = {}  # tool -> the first disabled toolset that holds it
        for ts in self.disabled:
            for tool in toolsets.resolve(ts):
                including.setdefault(tool, ts)
        found: dict[str, ToolsetSwitch] = {}
        for name in off:
            own = members[name]
            if own in self.disabled:
                found[name] = ToolsetSwitch(own, DISABLED_KEY, own=True)
            elif name in including:
                found[name] = ToolsetSwitch(including[name], DISABLED_KEY, own=False)
            else:  # enabled is a list that leaves its toolset out
                found[name] = ToolsetSwitch(own, ENABLED_KEY, own=True)
        return found

    def problems(self, toolsets: Toolsets) -> list[str]:
        """Unknown names and include cycles in the saved choices, for the doctor and the UI."""
        out = []
        for ts in [*(self.enabled or []), *self.disabled]:
            if not toolsets.is_known(ts):
                out.append(f"config names unknown toolset '{ts}'")
                continue
            try:
                toolsets.resolve(ts)
            except ToolsetError as exc:
                out.append(str(exc))
        return out


def _str_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return None


def toolset_change(
    name: str, enabled: bool, toolsets: Toolsets, config: Config
) -> Callable[[Any], None]:
    """The change to config.yaml that switches a toolset on or off, to save or to preview.

    Raises `ToolsetError` for an unknown toolset and `ConfigError` for a broken config.yaml.
    """
    if not toolsets.is_known(name):
        raise ToolsetError(f"unknown toolset '{name}' (see `hermes-tui toolsets list`)")
    if config.error:
        from workbench.core.config import ConfigError

        raise ConfigError(config.error)
    choices = ToolsetChoices.from_config(config)
    current = choices.enabled_toolsets(toolsets)
    on = set(current or ())
    off = set(choices.disabled)
    if enabled:
        # named, unless a listed composite (hermes-cli) holds it; a lean profile's opt-in
        # counts only when named
        if name in LEAN_OPT_IN or not choices.via(name, toolsets):
            on.add(name)
        off.discard(name)
    else:
        on.discard(name)
        off.add(name)
    known = sorted(
        {
            *choices.known,
            *(ts for ts, s in toolsets.registry_toolsets().items() if s is not ToolSource.BUILTIN),
        }
    )

    def mutate(doc: Any) -> None:
        if current is not None:  # unset stays unset: every toolset, less the disabled ones
            set_path(doc, ENABLED_KEY, sorted(on))
        set_path(doc, DISABLED_KEY, sorted(off))
        set_path(doc, KNOWN_KEY, known)

    return mutate


def set_toolset_enabled(
    name: str, enabled: bool, toolsets: Toolsets, config: Config
) -> ToolsetsChanged:
    """Switch a toolset on or off and persist the choice atomically.

    Raises `ToolsetError` for an unknown toolset and `ConfigError` when config.yaml is
    broken or cannot be written (nothing is lost either way).
    """
    mutate = toolset_change(name, enabled, toolsets, config)
    update_config(mutate, config.path)
    after = ToolsetChoices.from_config(preview_config(config, mutate))
    return ToolsetsChanged(tuple(after.enabled or ()), tuple(after.disabled))
