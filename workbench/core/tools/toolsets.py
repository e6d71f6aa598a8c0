"""Toolsets: static bundles, toolsets derived from the registry, and the user's choices.

Resolution follows Hermes's `toolsets.py`: a static toolset's tools are merged with
every registry tool in a toolset of that name, `all`/`*` means everything, and disabled
toolsets are subtracted last, by tool name ("disabled wins"). Unlike Hermes, an include
cycle is an error naming the cycle, and views are derived on demand, never cached stale.

The user's choices live under Hermes's keys in config.yaml:
`platform_toolsets.cli` (enabled), `agent.disabled_toolsets` (subtracted last) and
`known_plugin_toolsets.cli` (plugin and MCP toolsets already seen; a new one starts
enabled, one the user turned off stays off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from workbench.core.config import Config, preview_config, set_path, update_config
from workbench.core.tools.events import ToolsetsChanged, ToolSource
from workbench.core.tools.registry import ToolRegistry

PLATFORM = "cli"
ENABLED_KEY = f"platform_toolsets.{PLATFORM}"
DISABLED_KEY = "agent.disabled_toolsets"
KNOWN_KEY = f"known_plugin_toolsets.{PLATFORM}"

STATIC_TOOLSETS: dict[str, dict[str, Any]] = {
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
    "debugging": {
        "description": "Debugging and troubleshooting toolkit",
        "tools": ["terminal"],
        "includes": ["web", "file"],
    },
    "safe": {
        "description": "Safe toolkit without terminal access",
        "tools": [],
        "includes": ["web"],
    },
    "hermes-cli": {
        "description": "Full interactive CLI toolset",
        "tools": ["terminal"],
        "includes": ["web", "file"],
    },
}


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
        """Toolsets that hold registered tools → the source of their tools (the toggles)."""
        return {ts: src for ts, (_, src) in sorted(self._registry_toolsets().items())}

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
            return sorted(self.registry.snapshot())
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
        """The tools a model may be offered: enabled minus disabled, disabled winning."""
        derived = self._registry_toolsets()  # once: each toolset resolved reads it
        if enabled is None:
            names = set(self.registry.snapshot())
        else:
            names = {tool for ts in enabled for tool in self.resolve(ts, derived)}
        for ts in disabled or []:
            names.difference_update(self.resolve(ts, derived))
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
        if toolset in self.disabled:
            return False
        enabled = self.enabled_toolsets(toolsets)
        return enabled is None or toolset in enabled

    def effective_tools(self, toolsets: Toolsets) -> list[str]:
        return toolsets.effective_tools(self.enabled_toolsets(toolsets), self.disabled)

    def off_by_toolset(self, toolsets: Toolsets, on: Iterable[str]) -> dict[str, ToolsetSwitch]:
        """Registered tools these choices leave off (`on`: what `effective_tools` gave) →
        the toolset that switches each off: its own when that one is off, else a disabled
        toolset that includes it (a disabled toolset wins over the tool's own)."""
        left = set(on)
        snapshot = toolsets.registry.snapshot()
        off = [name for name in snapshot if name not in left]
        if not off:
            return {}
        including: dict[str, str] = {}  # tool -> the first disabled toolset that holds it
        for ts in self.disabled:
            for tool in toolsets.resolve(ts):
                including.setdefault(tool, ts)
        found: dict[str, ToolsetSwitch] = {}
        for name in off:
            own = snapshot[name].toolset
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
    selectable = list(toolsets.registry_toolsets())
    on = set(selectable if current is None else current)
    off = set(choices.disabled)
    if enabled:
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
