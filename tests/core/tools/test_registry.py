"""The registry contract Hermes plugins rely on, and where we do better than Hermes."""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from types import SimpleNamespace

import pytest

from tests.support.tools import noop, schema
from workbench.core.events import ChangeKind, ToolSource
from workbench.core.tools import registry as registry_module
from workbench.core.tools.registry import (
    RESERVED_NAMES,
    ToolEntry,
    ToolRegistrationError,
    ToolRegistry,
    ToolUnavailable,
)


def test_positional_and_keyword_registration(reg: ToolRegistry) -> None:
    reg.register("a", "set1", schema("A"), noop)
    reg.register(name="b", toolset="set1", schema=schema("B"), handler=noop, emoji="🅱")
    assert reg.get_all_tool_names() == ["a", "b"]
    entry = reg.get_entry("b")
    assert isinstance(entry, ToolEntry)
    assert (entry.toolset, entry.description, entry.emoji) == ("set1", "B", "🅱")
    assert entry.source is ToolSource.BUILTIN
    assert entry.owner == "tests.support.tools"  # the handler's module
    assert entry.requires_env == []
    assert not hasattr(entry, "__dict__")  # __slots__


def test_an_entry_is_immutable_and_named_field_by_field() -> None:
    entry = ToolEntry(name="a", toolset="s", schema=schema("A"), handler=noop, emoji="🅰")
    assert (entry.description, entry.source, entry.requires_env) == ("A", ToolSource.BUILTIN, [])
    with pytest.raises(TypeError):
        ToolEntry("a", "s", schema(), noop)  # type: ignore[misc]  # keyword-only
    with pytest.raises(AttributeError):
        entry.toolset = "other"  # type: ignore[misc]  # shared between registries: frozen
    recorded = {"name": "b", "toolset": "s", "schema": schema(), "handler": noop, "is_async": 1}
    made = ToolEntry.from_registration(recorded, ToolSource.PLUGIN, "p")
    assert (made.is_async, made.owner, made.emoji, made.path_args) == (True, "p", "", {})


@pytest.mark.parametrize(
    ("registration", "why"),
    [
        ({"name": None, "toolset": "s", "schema": {}}, "non-empty string name"),
        ({"name": "x", "toolset": 7, "schema": {}}, "toolset must be a name"),
        ({"name": "x", "toolset": "s", "schema": "garbage"}, "schema must be a JSON object"),
        ({"name": "x", "toolset": "s", "schema": [1, 2]}, "schema must be a JSON object"),
    ],
)
def test_garbage_registrations_are_refused_with_the_reason(
    reg: ToolRegistry, registration: dict, why: str
) -> None:
    swap = reg.replace_owner("plugin", "p", [{**registration, "handler": noop}])
    assert swap.refused and why in swap.refused[0][1]
    with pytest.raises(ToolRegistrationError, match=why):
        reg.register(*registration.values(), noop)
    assert reg.snapshot() == {}


def test_same_owner_replaces_its_tool_even_in_another_toolset(reg: ToolRegistry) -> None:
    reg.register("a", "one", schema("first"), noop, source="plugin", owner="p")
    reg.register("a", "two", schema("second"), noop, source="plugin", owner="p")
    assert reg.get_entry("a").toolset == "two"
    assert reg.get_entry("a").description == "second"


def test_other_owner_is_refused_with_an_error_and_an_event(reg: ToolRegistry) -> None:
    events = []
    reg.add_listener(events.append)
    reg.register("read_file", "file", schema(), noop)
    with pytest.raises(ToolRegistrationError, match="already registered by builtin"):
        reg.register("read_file", "evil", schema(), noop, source="plugin", owner="evil")
    assert reg.get_entry("read_file").toolset == "file"
    assert [e.kind for e in events] == [ChangeKind.REGISTERED, ChangeKind.REJECTED]
    assert "refused registration from plugin 'evil'" in events[-1].reason


def test_plugin_cannot_override_builtin_even_with_override_flag(reg: ToolRegistry) -> None:
    # Hermes lets a pip plugin do this with override=True.
    reg.register("terminal", "terminal", schema(), noop)
    with reg.scope(ToolSource.PLUGIN, "pip-plugin"), pytest.raises(ToolRegistrationError):
        reg.register("terminal", "terminal", schema(), noop, override=True)
    assert reg.get_entry("terminal").source is ToolSource.BUILTIN


def test_scope_wins_over_what_the_caller_claims(reg: ToolRegistry) -> None:
    with reg.scope(ToolSource.PLUGIN, "sneaky"):
        entry = reg.register("x", "xs", schema(), noop, source="builtin", owner="core")
    assert (entry.source, entry.owner) == (ToolSource.PLUGIN, "sneaky")


def test_opted_in_plugin_may_override_a_builtin_but_never_an_mcp_tool(reg: ToolRegistry) -> None:
    reg.register("terminal", "terminal", schema(), noop)
    with reg.scope(ToolSource.MCP, "srv"):
        reg.register("mcp__srv__t", "mcp-srv", schema(), noop)
    with reg.scope(ToolSource.PLUGIN, "trusted", may_override=True):
        reg.register("terminal", "trusted", schema(), noop, override=True)
        with pytest.raises(ToolRegistrationError):
            reg.register("mcp__srv__t", "trusted", schema(), noop, override=True)
    assert reg.get_entry("terminal").owner == "trusted"


def test_only_mcp_may_use_mcp_toolsets(reg: ToolRegistry) -> None:
    # Hermes let any plugin registering into an `mcp-*` toolset overwrite MCP tools.
    with reg.scope(ToolSource.PLUGIN, "p"), pytest.raises(ToolRegistrationError, match="reserved"):
        reg.register("mcp__x__y", "mcp-x", schema(), noop)
    assert reg.get_entry("mcp__x__y") is None


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_bridge_names_are_reserved(reg: ToolRegistry, name: str) -> None:
    # Hermes left these names free, so a plugin tool named so was unreachable.
    with pytest.raises(ToolRegistrationError, match="reserved"):
        reg.register(name, "x", schema(), noop)


def test_two_mcp_servers_cannot_overwrite_each_other(reg: ToolRegistry) -> None:
    with reg.scope(ToolSource.MCP, "my-server"):
        reg.register("mcp__my_server__t", "mcp-my-server", schema(), noop)
    with reg.scope(ToolSource.MCP, "my_server"), pytest.raises(ToolRegistrationError):
        reg.register("mcp__my_server__t", "mcp-my_server", schema(), noop)


def test_deregister_gate_and_alias_cleanup(reg: ToolRegistry) -> None:
    reg.register("read_file", "file", schema(), noop)
    with reg.scope(ToolSource.MCP, "srv"):
        reg.register("mcp__srv__a", "mcp-srv", schema(), noop)
    reg.register_toolset_alias("srv", "mcp-srv")
    with reg.scope(ToolSource.PLUGIN, "p"):
        with pytest.raises(ToolRegistrationError):
            reg.deregister("read_file")
        with pytest.raises(ToolRegistrationError):
            reg.deregister("mcp__srv__a")
        assert reg.deregister("missing") is False
    assert reg.get_tool_names_for_toolset("srv") == ["mcp__srv__a"]
    with reg.scope(ToolSource.MCP, "srv"):
        assert reg.deregister("mcp__srv__a") is True
    assert reg.get_toolset_alias_target("srv") is None


def test_deregister_owner_removes_all_its_tools(reg: ToolRegistry) -> None:
    with reg.scope(ToolSource.PLUGIN, "p"):
        reg.register("a", "ps", schema(), noop)
        reg.register("b", "ps", schema(), noop)
    reg.register("c", "core", schema(), noop)
    assert reg.deregister_owner("plugin", "p") == ["a", "b"]
    assert reg.get_all_tool_names() == ["c"]


def test_generation_and_listeners_see_every_change(reg: ToolRegistry) -> None:
    seen = []
    remove = reg.add_listener(lambda e: seen.append((e.kind, e.name, e.generation)))
    start = reg.generation
    reg.register("a", "s", schema(), noop)
    reg.register("a", "s", schema(), noop)
    reg.deregister("a")
    assert [s[:2] for s in seen] == [
        (ChangeKind.REGISTERED, "a"),
        (ChangeKind.REPLACED, "a"),
        (ChangeKind.DEREGISTERED, "a"),
    ]
    assert [s[2] for s in seen] == [start + 1, start + 2, start + 3]
    remove()
    reg.register("b", "s", schema(), noop)
    assert len(seen) == 3


def test_a_failing_listener_does_not_break_registration(reg: ToolRegistry) -> None:
    reg.add_listener(lambda e: 1 / 0)
    reg.register("a", "s", schema(), noop)
    assert reg.get_entry("a") is not None


# -- definitions and availability ------------------------------------------------------


def test_definitions_are_sorted_in_openai_shape(reg: ToolRegistry) -> None:
    for name in ("zeta", "alpha", "mid"):
        reg.register(name, "s", {**schema(name), "name": "ignored"}, noop)
    defs = reg.get_definitions({"zeta", "alpha", "mid", "unknown"})
    assert [d["function"]["name"] for d in defs] == ["alpha", "mid", "zeta"]
    assert defs[0] == {
        "type": "function",
        "function": {
            "description": "alpha",
            "parameters": {"type": "object", "properties": {}, "required": []},
            "name": "alpha",
        },
    }
    # Shared between calls, so read-only: a change raises instead of reaching the next
    # request; a copy is the caller's to change.
    with pytest.raises(TypeError, match="read-only"):
        defs[0]["function"]["description"] = "mutated"
    with pytest.raises(TypeError, match="read-only"):
        defs[0]["function"]["parameters"]["required"].append("x")
    mine = copy.deepcopy(defs[0])
    mine["function"]["parameters"]["required"].append("x")
    again = reg.get_definitions({"zeta", "alpha", "mid", "unknown"})
    assert again[0]["function"]["parameters"]["required"] == []
    assert json.loads(json.dumps(again)) == again


def test_check_fn_is_lazy_cached_and_prompt(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the registry's clock, moved by the test: the cache is kept, then expires, whatever the
    # machine's speed
    clock = [1000.0]
    monkeypatch.setattr(registry_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    calls, state = [], {"ok": True}

    def check() -> bool:
        calls.append(1)
        return state["ok"]

    reg.check_ttl = 0.2
    reg.register("a", "s", schema(), noop, check_fn=check)
    reg.register("b", "s", schema(), noop, check_fn=check)
    assert calls == []  # lazy: not evaluated at registration
    assert len(reg.get_definitions({"a", "b"})) == 2
    assert len(calls) == 1  # one evaluation for both tools sharing the check
    reg.get_definitions({"a", "b"})
    assert len(calls) == 1  # cached
    state["ok"] = False
    clock[0] += 0.25
    # no 60 s grace period advertising a tool whose check now fails.
    assert reg.get_definitions({"a", "b"}) == []
    assert reg.availability("a").reason == "check() returned False"  # names the check


def test_a_raising_check_means_unavailable_with_the_reason(reg: ToolRegistry) -> None:
    def broken() -> bool:
        raise RuntimeError("socket closed")

    def explained() -> bool:
        raise ToolUnavailable("server 'git' is down")

    reg.register("a", "s", schema(), noop, check_fn=broken)
    reg.register("b", "s", schema(), noop, check_fn=explained)
    reg.register("c", "s", schema(), noop, check_fn=lambda: False, requires_env=["NOPE_KEY_X"])
    report = reg.availability_report()
    assert report["a"].reason == "RuntimeError: socket closed"
    assert report["b"].reason == "server 'git' is down"
    assert report["c"].reason == "missing environment variable: NOPE_KEY_X"
    assert not any(a.available for a in report.values())
    assert reg.get_definitions({"a", "b", "c"}) == []


def test_check_cache_stays_bounded_to_live_tools(reg: ToolRegistry) -> None:
    # Hermes keys its cache by callable and MCP makes new closures each refresh.
    for i in range(50):
        reg.register("t", "s", schema(), noop, check_fn=lambda: True)
        reg.get_definitions({"t"})
        assert len(reg._checks.results) <= 1, i


def test_dynamic_schema_overrides_merge_and_survive_errors(reg: ToolRegistry) -> None:
    reg.register(
        "a", "s", schema("static"), noop, dynamic_schema_overrides=lambda: {"description": "live"}
    )
    reg.register("b", "s", schema("static"), noop, dynamic_schema_overrides=lambda: 1 / 0)
    a, b = reg.get_definitions({"a", "b"})
    assert a["function"]["description"] == "live"
    assert b["function"]["description"] == "static"


def test_helpers(reg: ToolRegistry) -> None:
    reg.register("a", "s1", schema(), noop, emoji="🙂", max_result_size_chars=10)
    reg.register("b", "s2", schema(), noop, check_fn=lambda: False, requires_env=["K"])
    assert reg.get_max_result_size("a") == 10
    assert reg.get_max_result_size("b") == 100_000
    assert reg.get_max_result_size("b", default=7) == 7
    assert reg.get_emoji("a") == "🙂" and reg.get_emoji("b") == "⚡"
    assert reg.get_tool_to_toolset_map() == {"a": "s1", "b": "s2"}
    assert reg.get_registered_toolset_names() == ["s1", "s2"]
    assert reg.check_toolset_requirements() == {"s1": True, "s2": False}
    available, unavailable = reg.check_tool_availability()
    assert available == ["s1"]
    assert unavailable == [{"name": "s2", "env_vars": ["K"], "tools": ["b"]}]


# -- dispatch ----------------------------------------------------------------------------


def test_dispatch_unknown_tool_shape(reg: ToolRegistry) -> None:
    assert reg.dispatch("nope", {}) == '{"error": "Unknown tool: nope"}'


def test_dispatch_passes_args_and_kwargs(reg: ToolRegistry) -> None:
    reg.register("echo", "s", schema(), lambda args, **kw: json.dumps([args, kw]))
    assert json.loads(reg.dispatch("echo", {"x": 1}, task_id="t")) == [{"x": 1}, {"task_id": "t"}]


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (ValueError("bad  thing ü"), "ValueError: bad  thing ü"),
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt: "),
    ],
)
def test_dispatch_turns_every_exception_into_an_error(reg: ToolRegistry, exc, text) -> None:
    # Hermes lets SystemExit and KeyboardInterrupt out of dispatch.
    def boom(args, **kw):
        raise exc

    reg.register("boom", "s", schema(), boom)
    result = reg.dispatch("boom", {})
    assert json.loads(result) == {"error": f"[TOOL_ERROR] Tool execution failed: {text}"}


def test_dispatch_error_text_is_sanitised_like_hermes(reg: ToolRegistry) -> None:
    def boom(args, **kw):
        raise ValueError("bad <result> thing ü")

    reg.register("boom", "s", schema(), boom)
    # The measured Hermes output: the tag goes, its surrounding spaces stay, ASCII escapes.
    assert reg.dispatch("boom", {}) == (
        '{"error": "[TOOL_ERROR] Tool execution failed: ValueError: bad  thing \\u00fc"}'
    )


def test_dispatch_result_contract(reg: ToolRegistry) -> None:
    envelope = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}
    reg.register("mm", "s", schema(), lambda a, **k: envelope)
    reg.register("bad", "s", schema(), lambda a, **k: 42)
    assert reg.dispatch("mm", {}) is envelope
    assert json.loads(reg.dispatch("bad", {})) == {
        "error": "Tool handler returned unsupported result type: int",
        "error_type": "tool_result_contract",
        "tool": "bad",
        "result_type": "int",
    }


async def _async_handler(args, **kw):
    await asyncio.sleep(0)
    return f"async {args['n']}"


def test_async_handler_outside_a_loop(reg: ToolRegistry) -> None:
    reg.register("a", "s", schema(), _async_handler, is_async=True)
    assert reg.dispatch("a", {"n": 1}) == "async 1"
    assert reg.dispatch("a", {"n": 2}) == "async 2"  # the per-thread loop is reused


async def test_async_handler_inside_a_running_loop(reg: ToolRegistry) -> None:
    reg.register("a", "s", schema(), _async_handler, is_async=True)
    assert reg.dispatch("a", {"n": 3}) == "async 3"


async def test_dispatch_async_runs_sync_handlers_in_a_thread(reg: ToolRegistry) -> None:
    loop_thread = threading.get_ident()
    reg.register("where", "s", schema(), lambda a, **k: str(threading.get_ident() != loop_thread))
    reg.register("a", "s", schema(), _async_handler, is_async=True)
    assert await reg.dispatch_async("where", {}) == "True"
    assert await reg.dispatch_async("a", {"n": 4}) == "async 4"
    assert await reg.dispatch_async("missing", {}) == '{"error": "Unknown tool: missing"}'


async def test_dispatch_async_contains_system_exit_and_propagates_cancel(reg: ToolRegistry) -> None:
    def exits(args, **kw):
        raise SystemExit(1)

    async def hangs(args, **kw):
        await asyncio.sleep(30)

    reg.register("exits", "s", schema(), exits)
    reg.register("hangs", "s", schema(), hangs, is_async=True)
    assert "SystemExit" in await reg.dispatch_async("exits", {})
    task = asyncio.create_task(reg.dispatch_async("hangs", {}))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_readers_never_see_a_torn_table(reg: ToolRegistry) -> None:
    """MCP and plugin threads mutate while the agent reads; readers must never fail."""
    stop, failures = threading.Event(), []

    def writer(prefix: str) -> None:
        i = 0
        while not stop.is_set():
            reg.register(f"{prefix}{i % 50}", prefix, schema(), noop, check_fn=lambda: True)
            reg.deregister(f"{prefix}{(i + 25) % 50}")
            i += 1

    def reader() -> None:
        try:
            while not stop.is_set():
                names = reg.get_all_tool_names()
                reg.get_definitions(names)
                reg.availability_report()
                reg.get_available_toolsets()
        except Exception as exc:  # pragma: no cover - the failure this test exists to catch
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in "ab"]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    assert failures == []
