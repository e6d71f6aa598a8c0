"""What the model is offered on each request, and what those definitions cost in tokens.

The agent builds every request's tools with `offered`; the tools panel and `hermes-tui
tools` measure the same set with `measure`, so the total they show is the one the agent
counts (before the endpoint's own count corrects it): the framing of the tools' part of the
request plus each offered tool's definition, counted one by one as the meter counts them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from workbench.core.agent.guards import lean_definition
from workbench.core.model.tokens import PER_MESSAGE, Meter
from workbench.core.tools.deferral import Assembly, ToolSearchSettings, ToolState, assemble
from workbench.core.tools.definitions import definition

if TYPE_CHECKING:
    from workbench.core.agent.own_tools import ToolRouter
    from workbench.core.tools.registry import ToolRegistry

AGENT = "agent"  # the source of the agent's own tools (todo, clarify, ...)
MEMORY = "memory"  # the source of the memory provider's tools


def offered(
    tools: ToolRouter, chosen: Iterable[str], lean: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    """The definitions the model gets this round, sorted by name, and their names.

    `chosen` are the tools the user's choices offer now (core.runtime.effective_tools): the
    registry's and the agent's own, each taken from the layer the router sends it to. A
    lean profile (a small model) gets only the registry's, since it misuses the agent's
    own tools, and without their numeric and boolean options
    (core.agent.guards.lean_definition)."""
    wanted = set(chosen)
    definitions: list[dict[str, Any]] = []
    names: set[str] = set()
    layers: list[ToolRegistry] = [tools.shared] if lean else [tools.own, tools.memory, tools.shared]
    for layer in layers:
        fresh = (set(layer.get_all_tool_names()) & wanted) - names
        definitions += layer.get_definitions(fresh)
        names |= fresh
    if lean:
        names_offered = {d["function"]["name"] for d in definitions}
        definitions = [lean_definition(d, names_offered) for d in definitions]
    return sorted(definitions, key=lambda d: d["function"]["name"]), sorted(names)


@dataclass(frozen=True, slots=True)
class ToolCost:
    name: str
    toolset: str
    source: str  # builtin, mcp, plugin, or AGENT / MEMORY
    tokens: int  # of its definition, as the model's tokenizer counts it
    offered: bool
    state: ToolState = ToolState.EAGER  # an offered tool's: sent in full, listed, searchable
    # what it adds to every request as it is sent: its definition when sent in full, about
    # its line in the listing when listed, nothing when found only by a search
    per_request: int = 0


@dataclass(frozen=True)
class Costs:
    """Every tool's definition size, and which of them the model is offered now."""

    tools: dict[str, ToolCost]
    tokenizer: str  # the tokenizer's name ("o200k_base", "qwen3", "estimate")
    exact: bool  # a real tokenizer; False: one token per three characters
    lean: bool = False  # the small-model profile: no agent's own tools, no numeric options
    bridge: int = 0  # tokens of the tool-search bridge sent instead of the deferred tools
    listing_form: str = "none"  # the deferred tools' listing: full, names, mixed, groups, none
    warnings: tuple[str, ...] = ()  # tools.tool_search values not taken, each said
    # deferrable tools `enabled: auto` sends in full, since deferring them would make the
    # request larger; and the tokens a request deferring them would add (the bridge and
    # its listing, less their definitions)
    held: tuple[str, ...] = ()
    held_extra: int = 0

    # Counted once: a Costs is never changed, and the tools panel reads these on each
    # keystroke in its filter (thousands of tools: a sort and a sum each time) and for each
    # toolset and source when the sizes come.
    @cached_property
    def offered(self) -> tuple[ToolCost, ...]:
        """The offered tools, largest first."""
        chosen = [c for c in self.tools.values() if c.offered]
        return tuple(sorted(chosen, key=lambda c: (-c.tokens, c.name)))

    @cached_property
    def total(self) -> int:
        """Tokens of the tools' part of every request: the framing, each definition sent in
        full and the bridge (with its listing) that stands for the deferred ones."""
        sent = [c.tokens for c in self.offered if c.state is ToolState.EAGER]
        return PER_MESSAGE + sum(sent) + self.bridge if sent or self.bridge else 0

    @cached_property
    def undeferred(self) -> int:
        """What every request would cost with every offered tool sent in full."""
        return self.total_of(c.name for c in self.offered)

    @cached_property
    def deferred(self) -> tuple[ToolCost, ...]:
        """The offered tools behind the bridge, largest first."""
        return tuple(c for c in self.offered if c.state is not ToolState.EAGER)

    def total_of(self, names: Iterable[str]) -> int:
        parts = [self.tools[n].tokens for n in set(names) if n in self.tools]
        return PER_MESSAGE + sum(parts) if parts else 0

    def toolset(self, name: str) -> int:
        return self._sums[0].get(name, 0)

    def source(self, name: str) -> int:
        return self._sums[1].get(name, 0)

    @cached_property
    def _sums(self) -> tuple[dict[str, int], dict[str, int]]:
        """Every toolset's and every source's tokens, in one pass (the tools panel asks for
        each of them when the sizes come)."""
        toolsets: dict[str, int] = {}
        sources: dict[str, int] = {}
        for c in self.tools.values():
            toolsets[c.toolset] = toolsets.get(c.toolset, 0) + c.tokens
            sources[c.source] = sources.get(c.source, 0) + c.tokens
        return toolsets, sources

    def describe(self) -> str:
        """How the sizes were counted, said beside them."""
        how = f"{self.tokenizer} tokenizer" if self.exact else "estimated, 3 characters a token"
        lean = "; lean profile: the agent's own tools and numeric options are not offered"
        return how + (lean if self.lean else "") + self.describe_deferral()

    @property
    def held_reason(self) -> str:
        """Why `auto` sends the deferrable tools in full ("" when it does not), so a user who
        expected them deferred is told."""
        if not self.held:
            return ""
        more = len(self.held) - 3
        names = ", ".join(self.held[:3]) + (f" and {more} more" if more > 0 else "")
        effect = (
            f"would add {self.held_extra:,} tokens a request"
            if self.held_extra > 0
            else "would not make the request smaller"
        )
        return f"auto: deferring {names} {effect}; sent in full"

    def describe_deferral(self) -> str:
        """What deferral changes, said after the sizes ("" when every tool is sent)."""
        if self.held:
            return f"; {self.held_reason} (tools.tool_search.enabled: on defers anyway)"
        if not self.deferred:
            return ""
        listed = sum(1 for c in self.deferred if c.state is ToolState.LISTED)
        change = self.undeferred - self.total
        effect = f"saves {change:,}" if change >= 0 else f"costs {-change:,} more"
        return (
            f"; {len(self.deferred)} deferred behind tool_search ({listed} listed): "
            f"{effect} tokens a request than sending every tool in full"
        )


def measure(
    meter: Meter,
    tools: ToolRouter,
    on: Iterable[str],
    lean: bool,
    search: ToolSearchSettings | None = None,
    context_window: int | None = None,
) -> Costs:
    """The cost of every tool the agent could be offered, and of what `offered` gives now
    from `on` (the tools the switches leave on): with `search` (tools.tool_search), the
    deferred ones replaced by the bridge."""
    definitions, _ = offered(tools, on, lean)
    chosen = {d["function"]["name"] for d in definitions}  # a failing check leaves one out
    found: dict[str, tuple[Any, str, dict[str, Any]]] = {}  # name -> entry, source, as sent
    layers = ((tools.own, AGENT), (tools.memory, MEMORY), (tools.shared, None))
    for layer, source in layers:
        for name, entry in layer.snapshot().items():
            if name in found:
                continue  # an earlier layer routes this name (as the router does)
            sent = entry.definition if entry.dynamic_schema_overrides is None else definition(entry)
            sent = lean_definition(sent, chosen) if lean else sent
            found[name] = (entry, source or entry.source.value, sent)
    toolsets = {name: entry.toolset for name, (entry, _, _) in found.items()}
    assembly = deferred_tools(definitions, toolsets, search, context_window)
    counts = meter.definitions(
        [sent for _, _, sent in found.values()] + assembly.bridge + assembly.declined
    )
    listed = assembly.listing.lines
    lines = dict(zip(listed, meter.texts(list(listed.values())), strict=True))  # one batch
    costs = {}
    for (name, (entry, source, _)), count in zip(found.items(), counts, strict=False):
        state = assembly.states.get(name, EAGER)
        each = count if state is EAGER else lines.get(name, 0)
        costs[name] = ToolCost(
            name, entry.toolset, source, count, name in chosen, state, each if name in chosen else 0
        )
    bridge = sum(counts[len(found) : len(found) + len(assembly.bridge)])
    declined = sum(counts[len(found) + len(assembly.bridge) :])
    held = sum(costs[n].tokens for n in assembly.held if n in costs)
    return Costs(
        costs,
        meter.tokenizer.name,
        meter.exact,
        lean,
        bridge,
        assembly.listing.form,
        search.warnings if search is not None else (),
        assembly.held,
        declined - held if assembly.held else 0,
    )


EAGER = ToolState.EAGER


def deferred_tools(
    definitions: list[dict[str, Any]],
    toolsets: dict[str, str],
    search: ToolSearchSettings | None,
    context_window: int | None,
) -> Assembly:
    """`definitions` (as `offered` gives them) as they are sent under tools.tool_search:
    the one place the agent and the sizes apply deferral (None: every tool sent in full)."""
    return assemble(
        definitions, toolsets, search or ToolSearchSettings(enabled="off"), context_window
    )
