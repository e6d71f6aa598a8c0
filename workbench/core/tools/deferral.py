"""Deferred tools (Hermes's tool search): which tools are sent in full, which only named.

Since Hermes 0.21 most MCP and plugin tools, and a short curated list of built-ins, are not
sent in full with every request. The model gets three bridge tools instead (`tool_search`,
`tool_describe`, `tool_call`) and, inside `tool_search`'s description, a listing of the
deferred tools within a token budget. Each offered tool is in one of three states:

* EAGER: its whole definition is sent with every request;
* LISTED: deferred, and named in the listing (with the first sentence of its description
  when the listing fits in full, by name only when it does not);
* SEARCHABLE: deferred, and not named (the listing is off, or its group was collapsed to a
  count to fit the budget): the model finds it only through `tool_search`.

Read from `tools.tool_search` in config.yaml with Hermes's defaults and its way of falling
back on a value it cannot use; unlike Hermes, each fallback is said (`warnings`), since a
user who typed a value wants to know it was not taken. This module is the model only: the
agent loop (bridge calls) and the costs (core.costs) build on it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from workbench.core.config import Config, set_path
from workbench.core.tools.ownership import RESERVED_NAMES

CONFIG_KEY = "tools.tool_search"
DEFER_KEY = "tools.tool_search.defer"

TOOL_SEARCH = "tool_search"
TOOL_DESCRIBE = "tool_describe"
TOOL_CALL = "tool_call"
BRIDGE_NAMES = RESERVED_NAMES  # never registered by anyone (core.tools.ownership)

MAX_QUERIES_PER_CALL = 7  # Hermes's cap on queries in one tool_search call
MAX_DESCRIBE_NAMES = 10  # and on names in one tool_describe call

# Hermes's curated defaults: tools used on occasion, so a listing line suffices. `clarify`
# is left out on purpose in Hermes (deferring it cut its use from 18 of 18 to 7 of 18).
DEFAULT_DEFER = (
    "computer_use",
    "cronjob_manage",
    "image_generate",
    "process_manage",
    "session_search",
    "todo_list",
)

# Tools every Hermes platform offers; they stay eager unless `defer` names them.
CORE_TOOLS = frozenset(
    {
        "web_search", "web_extract", "terminal", "process", "read_file", "write_file",
        "patch", "search_files", "vision_analyze", "image_generate", "skills_list",
        "skill_view", "skill_manage", "browser_navigate", "browser_snapshot",
        "browser_click", "browser_type", "browser_scroll", "browser_back", "browser_press",
        "browser_close", "browser_get_images", "browser_vision", "browser_console",
        "text_to_speech", "todo", "memory", "session_search", "clarify", "execute_code",
        "delegate_task", "cronjob", "send_message", "ha_list_entities", "ha_get_state",
        "ha_list_services", "ha_call_service",
    }
)  # fmt: skip

# Toolsets a session switches on for a client that shows them: direct unless named.
DIRECT_TOOLSETS = frozenset({"desktop_ui", "project", "setup"})

# Hermes sizes the listing by characters (four a token) to choose how much of it to send;
# the same rule here degrades the listing exactly where Hermes's does. What it costs is then
# counted with the model's tokenizer (core.costs).
LISTING_CHARS_PER_TOKEN = 4.0
UNKNOWN_WINDOW_BUDGET = 10_000  # the percentage leg when the context window is not known
SHORT_DESCRIPTION = 60  # characters of a description's first sentence in the listing


class ToolState(Enum):
    EAGER = "eager"
    LISTED = "listed"
    SEARCHABLE = "searchable"


_TRI = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}


def _tri_state(key: str, value: Any, warnings: list[str]) -> str:
    text = str(value).strip().lower()
    if text in ("auto", "on", "off"):
        return text
    if text in _TRI:
        return _TRI[text]
    warnings.append(f"{CONFIG_KEY}.{key} is {value!r}, not auto, on or off: auto is used")
    return "auto"


def _number(
    key: str, value: Any, default: float, low: float, high: float, warnings: list[str]
) -> float:
    """`value` as a number within [low, high]; a value that is no number is `default`
    (then clamped, as Hermes does), each change said."""
    if value is None:
        return max(low, min(high, default))
    try:  # a bool is a number here, as in Hermes (true is 1)
        number = float(value) if isinstance(default, float) else int(value)
    except (TypeError, ValueError):
        warnings.append(f"{CONFIG_KEY}.{key} is {value!r}, not a number: {default:g} is used")
        number = default
    kept = max(low, min(high, number))
    if kept != number:
        warnings.append(f"{CONFIG_KEY}.{key} {number:g} is outside {low:g}..{high:g}: {kept:g}")
    return kept


@dataclass(frozen=True)
class ToolSearchSettings:
    """`tools.tool_search` as Hermes reads it. `defer` None: the curated default."""

    # auto | on | off. Hermes 0.21 treats auto as on and keeps auto for a mode gated by
    # size; ours is that mode: auto defers only when the request gets smaller (assemble)
    enabled: str = "auto"
    threshold_pct: float = 5.0  # the listing's budget as a share of the context window
    search_default_limit: int = 5
    max_search_limit: int = 25
    listing: str = "auto"  # auto | on: the listing when it fits; off: the bare bridge
    listing_max_tokens: int = 4000
    defer: frozenset[str] | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_raw(cls, raw: Any) -> ToolSearchSettings:
        """From the value under `tools.tool_search`: a mapping, a legacy bool, or nothing."""
        warnings: list[str] = []
        if not isinstance(raw, dict):
            if raw is not None and not isinstance(raw, bool):
                warnings.append(f"{CONFIG_KEY} is {raw!r}, not a mapping: its defaults are used")
            raw = {"enabled": "off" if raw is False else "auto"}
        top = int(_number("max_search_limit", raw.get("max_search_limit"), 25, 1, 50, warnings))
        defer_raw = raw.get("defer")
        defer: frozenset[str] | None = None
        if isinstance(defer_raw, list):
            defer = frozenset(str(n).strip() for n in defer_raw if str(n or "").strip())
        elif defer_raw is not None:
            warnings.append(
                f"{DEFER_KEY} is {defer_raw!r}, not a list of tool names "
                "(e.g. [todo_list, computer_use]; [] keeps every tool eager): "
                "the curated default is used"
            )
        return cls(
            enabled=_tri_state("enabled", raw.get("enabled", "auto"), warnings),
            threshold_pct=_number(
                "threshold_pct", raw.get("threshold_pct"), 5.0, 0.0, 100.0, warnings
            ),
            search_default_limit=int(
                _number(
                    "search_default_limit", raw.get("search_default_limit"), 5, 1, top, warnings
                )
            ),
            max_search_limit=top,
            listing=_tri_state("listing", raw.get("listing", "auto"), warnings),
            listing_max_tokens=int(
                _number(
                    "listing_max_tokens", raw.get("listing_max_tokens"), 4000, 200, 60000, warnings
                )
            ),
            defer=defer,
            warnings=tuple(warnings),
        )

    @classmethod
    def from_config(cls, config: Config) -> ToolSearchSettings:
        tools = config.data.get("tools")
        return cls.from_raw(tools.get("tool_search") if isinstance(tools, dict) else None)

    @property
    def effective_defer(self) -> frozenset[str]:
        """The names deferred by name: the user's list, or the curated default."""
        return frozenset(DEFAULT_DEFER) if self.defer is None else self.defer

    @property
    def on(self) -> bool:
        """Whether deferral may happen at all (it does once a tool is deferrable)."""
        return self.enabled != "off"

    def for_profile(self, lean: bool) -> ToolSearchSettings:
        """The settings a model's profile applies: a small model's lean profile defers
        nothing under auto. Measured by bench_local_tasks: with its tools deferred the
        bundled 1.5B did 3 of 13 everyday tasks (12 of 13 with them in full): it searched
        words of the question, or called tool_call with arguments of its own invention.
        `enabled: on` still defers for it; the user asked."""
        return replace(self, enabled="off") if lean and self.enabled == "auto" else self

    def listing_budget(self, context_window: int | None) -> int:
        """Tokens the listing may take: the smaller of listing_max_tokens and threshold_pct
        of the window (of 10,000 tokens' worth when the window is not known)."""
        if context_window and context_window > 0:
            share = int(context_window * self.threshold_pct / 100)
        else:
            share = UNKNOWN_WINDOW_BUDGET
        return max(0, min(self.listing_max_tokens, share))

    def search_limit(self, requested: Any) -> int:
        """Hits per query for a tool_search call's `limit` (none: the default)."""
        if requested is None:
            return self.search_default_limit
        try:
            wanted = int(requested)
        except (TypeError, ValueError):
            wanted = self.search_default_limit
        return max(1, min(self.max_search_limit, wanted))


def is_deferrable(name: str, toolset: str | None, settings: ToolSearchSettings) -> bool:
    """Whether `name` goes behind the bridge when deferral is on: named in `defer`, or
    neither a core tool nor in a direct toolset (so every MCP and plugin tool). A bridge
    name, or a tool of no known toolset, never."""
    if name in BRIDGE_NAMES:
        return False
    if name in settings.effective_defer:
        return True
    if name in CORE_TOOLS or toolset is None:
        return False
    return toolset.startswith("mcp-") or toolset not in DIRECT_TOOLSETS


def _function(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    function = definition.get("function")
    return function if isinstance(function, Mapping) else {}


def _name(definition: Mapping[str, Any]) -> str:
    return str(_function(definition).get("name") or "")


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)")


def short_description(text: str, limit: int = SHORT_DESCRIPTION) -> str:
    """The first sentence of a description, cut at a word within `limit` characters."""
    text = " ".join((text or "").split())
    end = _SENTENCE_END.search(text)
    text = text[: end.end()] if end else text
    if len(text) <= limit:
        return text
    cut = text[:limit]
    cut = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return cut.rstrip(",;: ") + "…"


def group_label(toolset: str | None) -> str:
    """A deferred tool's heading in the listing: its toolset, an MCP server's without `mcp-`."""
    label = toolset or "other"
    return label[4:] if label.startswith("mcp-") else label


LISTING_HEADER = f"Deferred tools (load a schema with `{TOOL_DESCRIBE}`, run with `{TOOL_CALL}`):"


@dataclass(frozen=True)
class Listing:
    text: str | None  # None: nothing fits (or the listing is off): the bare bridge
    form: str  # full | names | mixed | groups | none
    named: frozenset[str]  # the deferred tools the text names
    lines: Mapping[str, str] = field(default_factory=dict)  # each named tool's part of it


def build_listing(
    deferred: Iterable[dict[str, Any]], toolsets: Mapping[str, str], budget: int
) -> Listing:
    """The listing of deferred tools within `budget` tokens (four characters each).

    Grouped by toolset, sorted, so the same tools give the same bytes. It degrades as
    Hermes's does: every group in full (`- name: first sentence`), else every group as a
    line of names, else the largest groups one by one collapsed to `label (N tools ...)`
    (`mixed`; all collapsed: `groups`), else nothing."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for definition in deferred:
        name = _name(definition)
        if name:
            label = group_label(toolsets.get(name))
            about = short_description(str(_function(definition).get("description") or ""))
            groups.setdefault(label, []).append((name, about))
    if not groups:
        return Listing(None, "none", frozenset())

    def block(label: str, mode: str) -> str:
        tools = sorted(groups[label])
        if mode == "summary":
            return f"{label} ({len(tools)} tools, not listed: find them with `{TOOL_SEARCH}`)"
        head = f"{label} tools ({len(tools)}):"
        if mode == "names":
            return head + "\n" + ", ".join(n for n, _ in tools)
        return "\n".join([head] + [f"- {n}: {d}" if d else f"- {n}" for n, d in tools])

    def fits(modes: dict[str, str]) -> str | None:
        text = "\n".join([LISTING_HEADER] + [block(g, modes[g]) for g in sorted(groups)])
        return text if math.ceil(len(text) / LISTING_CHARS_PER_TOKEN) <= budget else None

    def listing(text: str, form: str, modes: dict[str, str]) -> Listing:
        lines = {
            n: f"- {n}: {d}" if modes[g] == "full" and d else f"- {n}" if modes[g] == "full" else n
            for g, tools in groups.items()
            if modes[g] != "summary"
            for n, d in tools
        }
        return Listing(text, form, frozenset(lines), lines)

    modes: dict[str, str] = {}
    for mode in ("full", "names"):
        modes = dict.fromkeys(groups, mode)
        if (text := fits(modes)) is not None:
            return listing(text, mode, modes)
    for label in sorted(groups, key=lambda g: (-len(block(g, "names")), g)):
        modes[label] = "summary"
        if (text := fits(modes)) is not None:
            form = "groups" if all(m == "summary" for m in modes.values()) else "mixed"
            return listing(text, form, modes)
    return Listing(None, "none", frozenset())


def _schema(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def bridge_schemas(deferred_count: int, listing: Listing | None = None) -> list[dict[str, Any]]:
    """The three bridge tools' definitions, `listing` inside tool_search's description.
    Short: every character is sent with every request."""
    search = (
        f"Search {deferred_count} more tools that are loaded on demand. Give several "
        "keyword queries at once, one per capability (service + action + object, e.g. "
        "'github create issue'), not questions. Returns matching tool names per query with "
        f"their descriptions; load their parameters with `{TOOL_DESCRIBE}`, then run them "
        f"with `{TOOL_CALL}`. Tools already in your tool list need no search."
    )
    if listing is not None and listing.text:
        if listing.form == "groups":
            search += (
                "\n\nThese sources are connected; their tools are reached only through this "
                "search: search before saying a capability is missing.\n\n" + listing.text
            )
        else:
            search += (
                "\n\nEvery deferred tool named below is available: when you see the exact "
                f"name, skip `{TOOL_SEARCH}` and load it with `{TOOL_DESCRIBE}`."
                + (
                    f" Sources marked 'not listed' have tools too: find them with `{TOOL_SEARCH}`."
                    if listing.form == "mixed"
                    else ""
                )
                + "\n\n"
                + listing.text
            )
    strings = {"type": "array", "items": {"type": "string"}}
    return [
        _schema(
            TOOL_SEARCH,
            search,
            {
                "queries": {
                    **strings,
                    "description": "Keyword queries, searched separately (at most "
                    f"{MAX_QUERIES_PER_CALL}). A single string is one query.",
                },
                "limit": {
                    "type": "integer",
                    "description": "Most matches per query (default 5).",
                },
            },
            ["queries"],
        ),
        _schema(
            TOOL_DESCRIBE,
            f"Load the full parameter schemas of tools `{TOOL_SEARCH}` found, before "
            f"`{TOOL_CALL}`. Ask for all you need in one call.",
            {
                "names": {
                    **strings,
                    "description": f"Exact tool names (at most {MAX_DESCRIBE_NAMES}).",
                }
            },
            ["names"],
        ),
        _schema(
            TOOL_CALL,
            "Run a deferred tool: `calls` holds one {name, arguments} entry. Arguments follow "
            f"the tool's schema (see `{TOOL_DESCRIBE}`). Approvals apply as to any other tool.",
            {
                "calls": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "Exact tool name."},
                            "arguments": {
                                "type": "object",
                                "description": "Arguments matching the tool's schema.",
                            },
                        },
                        "required": ["name", "arguments"],
                    },
                    "description": "The call to make, as a list of one.",
                }
            },
            ["calls"],
        ),
    ]


@dataclass(frozen=True)
class Assembly:
    """What the model is sent once deferral is applied, and each offered tool's state."""

    definitions: list[dict[str, Any]]  # eager ones as given, then the bridge (if active)
    states: dict[str, ToolState]  # every offered tool (bridge names not included)
    active: bool  # the bridge is sent
    listing: Listing
    budget: int  # tokens the listing might take
    # `auto` only: the deferrable tools sent in full because deferring them would make the
    # request larger, and the bridge (with its listing) that would have been sent for them,
    # so the sizes can say by how much (core.agent.offered)
    held: tuple[str, ...] = ()
    declined: list[dict[str, Any]] = field(default_factory=list)

    @property
    def deferred(self) -> tuple[str, ...]:
        return tuple(sorted(n for n, s in self.states.items() if s is not ToolState.EAGER))

    @property
    def bridge(self) -> list[dict[str, Any]]:
        return [d for d in self.definitions if _name(d) in BRIDGE_NAMES]

    @property
    def eager(self) -> list[dict[str, Any]]:
        return [d for d in self.definitions if _name(d) not in BRIDGE_NAMES]


def assemble(
    definitions: Iterable[dict[str, Any]],
    toolsets: Mapping[str, str],
    settings: ToolSearchSettings,
    context_window: int | None,
) -> Assembly:
    """The tools to send for `definitions` (those offered, in the order they are sent;
    `toolsets` maps each name to its toolset): eager ones as they are, the deferrable ones
    replaced by the bridge when deferral is on and any tool is deferrable (`auto`: and the
    request gets smaller for it)."""
    offered = [d for d in definitions if _name(d) and _name(d) not in BRIDGE_NAMES]
    budget = settings.listing_budget(context_window)
    deferred = [d for d in offered if is_deferrable(_name(d), toolsets.get(_name(d)), settings)]
    if not settings.on or not deferred:
        states = dict.fromkeys((_name(d) for d in offered), ToolState.EAGER)
        return Assembly(list(offered), states, False, Listing(None, "none", frozenset()), budget)
    listing = (
        Listing(None, "none", frozenset())
        if settings.listing == "off"
        else build_listing(deferred, toolsets, budget)
    )
    gone = {_name(d) for d in deferred}
    states = {
        _name(d): ToolState.EAGER
        if _name(d) not in gone
        else ToolState.LISTED
        if _name(d) in listing.named
        else ToolState.SEARCHABLE
        for d in offered
    }
    bridge = bridge_schemas(len(deferred), listing)
    sent = [d for d in offered if _name(d) not in gone] + bridge
    if settings.enabled == "auto" and _size(sent) >= _size(offered):
        # deferring a few small tools costs more than it saves: the bridge alone is about
        # 2,000 characters; Hermes's auto defers them all the same, ours sends them in full
        states = dict.fromkeys((_name(d) for d in offered), ToolState.EAGER)
        none = Listing(None, "none", frozenset())
        held = tuple(sorted(gone))
        return Assembly(list(offered), states, False, none, budget, held, bridge)
    return Assembly(sent, states, True, listing, budget)


def _size(definitions: list[dict[str, Any]]) -> int:
    """Characters of definitions as sent (compact JSON): a measure that needs no tokenizer,
    so the same tools give the same choice, and the same bytes, on every request."""
    return sum(len(json.dumps(d, ensure_ascii=False, separators=(",", ":"))) for d in definitions)


class DeferError(Exception):
    """A tool that cannot be switched between eager and deferred, and why."""


def defer_change(
    name: str, deferred: bool, toolset: str | None, settings: ToolSearchSettings
) -> Callable[[Any], None]:
    """The change to config.yaml that defers `name` (or keeps it eager), in Hermes's key
    `tools.tool_search.defer`: the list in force (the curated default written out, since a
    list replaces it) with the name added or taken out. Raises DeferError when the list
    cannot do it: an MCP or plugin tool is deferred whatever the list says."""
    if name in BRIDGE_NAMES:
        raise DeferError(f"'{name}' is a bridge tool, always sent")
    current = set(settings.effective_defer)
    if not deferred and name not in current and is_deferrable(name, toolset, settings):
        raise DeferError(
            f"'{name}' is deferred as an MCP or plugin tool, whatever {DEFER_KEY} says; "
            f"only {CONFIG_KEY}.enabled: off sends it in full"
        )
    wanted = sorted((current | {name}) if deferred else (current - {name}))

    def mutate(doc: Any) -> None:
        set_path(doc, DEFER_KEY, wanted)

    return mutate
