"""Deferred tools as Hermes 0.21 reads tools.tool_search: defaults, fallbacks, states, listing."""

from __future__ import annotations

import json

import pytest

from workbench.core.tools.deferral import (
    BRIDGE_NAMES,
    DEFAULT_DEFER,
    TOOL_CALL,
    TOOL_DESCRIBE,
    TOOL_SEARCH,
    DeferError,
    ToolSearchSettings,
    ToolState,
    assemble,
    bridge_schemas,
    build_listing,
    defer_change,
    short_description,
)
from workbench.core.tools.events import ToolSource
from workbench.core.tools.ownership import RESERVED_NAMES
from workbench.core.tools.registry import ToolRegistrationError, ToolRegistry


def tool(name: str, description: str = "Does a thing. And more.") -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": {"type": "object"}},
    }


def test_defaults_are_hermes_021s() -> None:
    s = ToolSearchSettings.from_raw(None)
    assert (s.enabled, s.threshold_pct, s.listing, s.listing_max_tokens) == (
        "auto",
        5.0,
        "auto",
        4000,
    )
    assert (s.search_default_limit, s.max_search_limit) == (5, 25)
    assert s.defer is None and s.effective_defer == frozenset(DEFAULT_DEFER)
    assert "clarify" not in s.effective_defer and s.warnings == ()


@pytest.mark.parametrize(
    ("raw", "enabled"),
    [(True, "auto"), (False, "off"), ({"enabled": "yes"}, "on"), ({"enabled": False}, "off")],
)
def test_a_legacy_bool_still_works(raw, enabled: str) -> None:
    s = ToolSearchSettings.from_raw(raw)
    assert s.enabled == enabled and s.warnings == ()


def test_a_defer_list_replaces_the_curated_one_and_an_empty_one_keeps_all_eager() -> None:
    assert ToolSearchSettings.from_raw({"defer": ["terminal"]}).effective_defer == {"terminal"}
    assert ToolSearchSettings.from_raw({"defer": []}).effective_defer == frozenset()


@pytest.mark.parametrize(
    ("raw", "field", "value", "said"),
    [
        ({"defer": "todo_list"}, "defer", None, "tools.tool_search.defer is 'todo_list'"),
        ({"enabled": "maybe"}, "enabled", "auto", "tools.tool_search.enabled is 'maybe'"),
        ({"listing": 7}, "listing", "auto", "tools.tool_search.listing is 7"),
        ({"threshold_pct": "lots"}, "threshold_pct", 5.0, "not a number: 5 is used"),
        ({"threshold_pct": 250}, "threshold_pct", 100.0, "outside 0..100: 100"),
        ({"max_search_limit": 99}, "max_search_limit", 50, "outside 1..50: 50"),
        ({"search_default_limit": 30}, "search_default_limit", 25, "outside 1..25: 25"),
        ({"listing_max_tokens": 10}, "listing_max_tokens", 200, "outside 200..60000: 200"),
        ("on", "enabled", "auto", "tools.tool_search is 'on', not a mapping"),
    ],
)
def test_a_value_hermes_cannot_use_falls_back_as_in_hermes_and_is_said(
    raw, field: str, value, said: str
) -> None:
    s = ToolSearchSettings.from_raw(raw)
    assert getattr(s, field) == value
    assert any(said in w for w in s.warnings), s.warnings


def test_the_listing_budget_is_the_smaller_of_the_cap_and_the_windows_share() -> None:
    s = ToolSearchSettings.from_raw({"threshold_pct": 5, "listing_max_tokens": 4000})
    assert s.listing_budget(200_000) == 4000
    assert s.listing_budget(40_000) == 2000
    assert s.listing_budget(None) == 4000  # unknown: a 10,000-token share, capped


def test_states_core_tools_stay_eager_mcp_and_plugin_tools_and_named_ones_defer() -> None:
    offered = [tool(n) for n in ("clarify", "read_file", "session_search", "mcp_gh_issue", "x")]
    toolsets = {"clarify": "clarify", "read_file": "file", "session_search": "session_search",
                "mcp_gh_issue": "mcp-gh", "x": "myplugin"}  # fmt: skip
    on = ToolSearchSettings(enabled="on")  # Hermes's: deferred even when it costs more
    a = assemble(offered, toolsets, on, 200_000)
    assert a.active and a.listing.form == "full"
    assert {n: s.value for n, s in a.states.items()} == {
        "clarify": "eager", "read_file": "eager", "session_search": "listed",
        "mcp_gh_issue": "listed", "x": "listed",
    }  # fmt: skip
    names = [d["function"]["name"] for d in a.definitions]
    assert names == ["clarify", "read_file", TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL]
    # the same input gives the same bytes (a server's prompt cache keeps working)
    again = assemble(offered, toolsets, on, 200_000)
    assert json.dumps(again.definitions) == json.dumps(a.definitions)
    # off, or nothing deferrable: every tool sent as it is, no bridge
    off = assemble(offered, toolsets, ToolSearchSettings(enabled="off"), 200_000)
    assert not off.active and set(off.states.values()) == {ToolState.EAGER}
    eager = assemble(offered, toolsets, ToolSearchSettings("on", defer=frozenset()), 200_000)
    assert eager.states["session_search"] is ToolState.EAGER
    assert eager.states["mcp_gh_issue"] is ToolState.LISTED  # an MCP tool defers whatever


def sent_size(definitions: list[dict]) -> int:
    return sum(len(json.dumps(d, separators=(",", ":"))) for d in definitions)


SMALL = [tool(n) for n in ("clarify", "read_file", "session_search")]
SMALL_SETS = {"clarify": "clarify", "read_file": "file", "session_search": "session_search"}


def test_auto_sends_a_few_small_deferrable_tools_in_full_and_says_so() -> None:
    auto = assemble(SMALL, SMALL_SETS, ToolSearchSettings(), 200_000)
    off = assemble(SMALL, SMALL_SETS, ToolSearchSettings(enabled="off"), 200_000)
    assert auto.definitions == off.definitions == SMALL  # the undeferred tools array
    assert not auto.active and auto.bridge == [] and auto.listing.text is None
    assert set(auto.states.values()) == {ToolState.EAGER}
    # what was held, and what deferring it would have sent: larger than what it replaces
    assert auto.held == ("session_search",) and off.held == ()
    assert [d["function"]["name"] for d in auto.declined] == list(BRIDGE_NAMES_SENT)
    assert sent_size(auto.declined) > sent_size([SMALL[2]])
    again = assemble(SMALL, SMALL_SETS, ToolSearchSettings(), 200_000)
    assert json.dumps(again.definitions) == json.dumps(auto.definitions)


BRIDGE_NAMES_SENT = (TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL)


def test_on_defers_even_when_the_request_gets_larger_as_hermes_does() -> None:
    on = assemble(SMALL, SMALL_SETS, ToolSearchSettings(enabled="on"), 200_000)
    assert on.active and on.states["session_search"] is ToolState.LISTED and on.held == ()
    assert sent_size(on.definitions) > sent_size(SMALL)


def test_auto_defers_many_plugin_tools_when_the_request_gets_smaller() -> None:
    params = {"type": "object", "properties": {"q": {"type": "string", "description": "A query."}}}
    plugin = [
        {"type": "function", "function": {"name": f"crm_t{i}", "parameters": params,
         "description": f"Reads record kind {i} from the CRM. Returns JSON rows."}}
        for i in range(30)
    ]  # fmt: skip
    offered = SMALL + plugin
    toolsets = SMALL_SETS | {d["function"]["name"]: "crm" for d in plugin}
    a = assemble(offered, toolsets, ToolSearchSettings(), 200_000)
    assert a.active and a.held == () and a.declined == []
    assert a.deferred == tuple(sorted(["session_search", *(f"crm_t{i}" for i in range(30))]))
    names = [d["function"]["name"] for d in a.definitions]
    assert names == ["clarify", "read_file", *BRIDGE_NAMES_SENT]
    assert sent_size(a.definitions) < sent_size(offered)
    on = assemble(offered, toolsets, ToolSearchSettings(enabled="on"), 200_000)
    assert json.dumps(on.definitions) == json.dumps(a.definitions)  # the same as `on`


def test_a_small_models_lean_profile_defers_nothing_unless_told_to() -> None:
    params = {"type": "object", "properties": {"q": {"type": "string"}}}
    plugin = [
        {"type": "function", "function": {"name": f"crm_t{i}", "parameters": params,
         "description": f"Reads record kind {i} from the CRM."}}
        for i in range(30)
    ]  # fmt: skip
    offered = SMALL + plugin
    toolsets = SMALL_SETS | {d["function"]["name"]: "crm" for d in plugin}
    auto = ToolSearchSettings()
    assert assemble(offered, toolsets, auto, 8192).active  # it would pay for a large model
    lean = assemble(offered, toolsets, auto.for_profile(lean=True), 8192)
    assert not lean.active and lean.definitions == offered  # the 1.5B loses searched tools
    assert auto.for_profile(lean=False) is auto
    told = ToolSearchSettings(enabled="on").for_profile(lean=True)
    assert assemble(offered, toolsets, told, 8192).active  # `on` is the user's choice


def test_the_listing_degrades_full_then_names_then_groups_then_nothing() -> None:
    deferred = [tool(f"mcp_big_t{i}", "Reads the thing number i. " * 3) for i in range(40)]
    small = [f"mcp_small_tool_with_a_long_name_{i}" for i in range(3)]
    deferred += [tool(n, "Small.") for n in small]
    toolsets = {d["function"]["name"]: "mcp-big" for d in deferred} | dict.fromkeys(small, "mcp-s")
    budgets = (1000, 300, 100, 50, 30)
    forms = {b: build_listing(deferred, toolsets, b) for b in budgets}
    assert [forms[b].form for b in budgets] == ["full", "names", "mixed", "groups", "none"]
    assert f"- {small[0]}: Small." in (forms[1000].text or "")
    mixed = forms[100]
    assert mixed.named == set(small)  # the largest group is collapsed first
    assert "big (40 tools, not listed" in (mixed.text or "")
    assert forms[50].named == frozenset()
    assert forms[30].text is None and forms[30].named == frozenset()
    # the searchable-only state: a collapsed group's tools
    a = assemble(deferred, toolsets, ToolSearchSettings(), 2000)  # 5% of 2000 = 100 tokens
    assert a.states[small[0]] is ToolState.LISTED
    assert a.states["mcp_big_t0"] is ToolState.SEARCHABLE
    bare = assemble(deferred, toolsets, ToolSearchSettings(listing="off"), 200_000)
    assert set(bare.states.values()) == {ToolState.SEARCHABLE} and bare.active


def test_a_listing_line_is_the_first_sentence_cut_at_a_word() -> None:
    assert short_description("Reads a file, e.g. a log. Then more.") == "Reads a file, e.g. a log."
    cut = short_description("word " * 30)
    assert cut.endswith("…") and len(cut) <= 61


def test_the_bridge_schemas() -> None:
    search, describe, call = bridge_schemas(3)
    assert search["function"]["parameters"]["required"] == ["queries"]
    assert search["function"]["parameters"]["properties"]["queries"]["type"] == "array"
    assert describe["function"]["parameters"]["required"] == ["names"]
    item = call["function"]["parameters"]["properties"]["calls"]["items"]
    assert item["required"] == ["name", "arguments"]
    assert {s["function"]["name"] for s in (search, describe, call)} == BRIDGE_NAMES


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
@pytest.mark.parametrize("source", [ToolSource.PLUGIN, ToolSource.MCP, ToolSource.BUILTIN])
def test_bridge_names_are_reserved_from_every_source(name: str, source: ToolSource) -> None:
    assert BRIDGE_NAMES == RESERVED_NAMES == {TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL}
    reg = ToolRegistry()
    toolset = "mcp-x" if source is ToolSource.MCP else "x"
    for override in (False, True):  # not even an opted-in override
        with reg.scope(source, "someone"), pytest.raises(ToolRegistrationError, match="reserved"):
            reg.register(name, toolset, {"name": name}, lambda a, **k: "", override=override)
    assert reg.get_entry(name) is None


def test_the_defer_switch_writes_the_list_in_force() -> None:
    doc: dict = {}
    defer_change("read_file", True, "file", ToolSearchSettings())(doc)
    assert doc["tools"]["tool_search"]["defer"] == sorted({*DEFAULT_DEFER, "read_file"})
    doc = {}
    defer_change("session_search", False, "session_search", ToolSearchSettings())(doc)
    assert "session_search" not in doc["tools"]["tool_search"]["defer"]
    with pytest.raises(DeferError, match="MCP or plugin tool"):
        defer_change("mcp_gh_issue", False, "mcp-gh", ToolSearchSettings())
    with pytest.raises(DeferError, match="bridge"):
        defer_change(TOOL_CALL, True, None, ToolSearchSettings())
