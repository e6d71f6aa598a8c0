"""The definitions cache: kept while true, rebuilt by every change that could alter it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.tools import noop, schema
from tests.support.waiting import PATIENCE
from workbench.core.events import ToolSource
from workbench.core.runtime import load_runtime
from workbench.core.tools.registry import ToolRegistry
from workbench.core.tools.toolsets import set_toolset_enabled


def names_of(definitions: list[dict]) -> list[str]:
    return [d["function"]["name"] for d in definitions]


def counted(state: dict) -> Callable[[], bool]:
    def check() -> bool:
        state["runs"] += 1
        return state["ok"]

    return check


def wait_for(condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_a_repeated_request_runs_no_check_and_gives_equal_definitions(reg: ToolRegistry) -> None:
    state = {"runs": 0, "ok": True}
    reg.register("a", "s", schema("A"), noop, check_fn=counted(state))
    reg.register("b", "s", schema("B"), noop)
    first = reg.get_definitions({"a", "b"})
    again = reg.get_definitions(["b", "a"])  # any iterable of the same names
    assert state["runs"] == 1
    assert again == first and names_of(again) == ["a", "b"]
    assert again is not first  # the caller's own list
    again.pop()
    assert names_of(reg.get_definitions({"a", "b"})) == ["a", "b"]


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.register("c", "s", schema("C"), noop),
        lambda r: r.register("a", "s", schema("A changed"), noop),
        lambda r: r.deregister("b"),
        lambda r: r.deregister_owner("builtin", "tests.support.tools"),
        lambda r: r.replace_owner(
            "plugin", "p", [{"name": "c", "toolset": "s", "schema": schema(), "handler": noop}]
        ),
        lambda r: r.register("a", "s", schema("A"), noop, check_fn=lambda: False),
    ],
    ids=["register", "replace", "deregister", "deregister-owner", "replace-owner", "new-check"],
)
def test_every_change_to_the_table_shows_at_once(reg: ToolRegistry, change) -> None:
    reg.register("a", "s", schema("A"), noop)
    reg.register("b", "s", schema("B"), noop)
    wanted = {"a", "b", "c"}
    before = reg.get_definitions(wanted)
    change(reg)
    fresh = ToolRegistry()  # the same table, never cached: what the output must be
    for name, entry in reg.snapshot().items():
        fresh.register(name, entry.toolset, entry.schema, entry.handler, entry.check_fn)
    assert reg.get_definitions(wanted) == fresh.get_definitions(wanted) != before


def test_an_alias_change_rebuilds(reg: ToolRegistry) -> None:
    reg.register("a", "s", schema(), noop)
    reg.get_definitions({"a"})
    reg.register_toolset_alias("short", "s")
    reg.get_definitions({"a"})
    assert reg._definitions._built[0].generation == reg.generation


def test_an_availability_change_shows_when_the_checks_are_dropped(reg: ToolRegistry) -> None:
    state = {"runs": 0, "ok": True}
    reg.register("a", "s", schema(), noop, check_fn=counted(state))
    assert names_of(reg.get_definitions({"a"})) == ["a"]
    state["ok"] = False
    assert names_of(reg.get_definitions({"a"})) == ["a"]  # the result is kept for the TTL
    reg.invalidate_check_fn_cache()  # what the MCP manager does when a server changes state
    assert reg.get_definitions({"a"}) == []
    state["ok"] = True
    reg.invalidate_check_fn_cache()
    assert names_of(reg.get_definitions({"a"})) == ["a"]
    assert state["runs"] == 3


def test_an_availability_change_shows_when_the_check_expires(reg: ToolRegistry) -> None:
    state = {"runs": 0, "ok": True}
    reg.check_ttl = 0.05
    reg.register("a", "s", schema(), noop, check_fn=counted(state))
    reg.register("b", "s", schema(), noop)
    assert names_of(reg.get_definitions({"a", "b"})) == ["a", "b"]
    state["ok"] = False
    wait_for(lambda: names_of(reg.get_definitions({"a", "b"})) == ["b"])
    state["ok"] = True
    wait_for(lambda: names_of(reg.get_definitions({"a", "b"})) == ["a", "b"])


def test_an_unavailable_tool_comes_back_when_its_check_expires(reg: ToolRegistry) -> None:
    # A failing check is part of what the cached output was built from, too.
    state = {"runs": 0, "ok": False}
    reg.check_ttl = 0.05
    reg.register("a", "s", schema(), noop, check_fn=counted(state))
    assert reg.get_definitions({"a"}) == []
    state["ok"] = True
    wait_for(lambda: names_of(reg.get_definitions({"a"})) == ["a"])


def test_dynamic_overrides_are_asked_on_every_call(reg: ToolRegistry) -> None:
    said = iter(["first", "second"])
    reg.register(
        "a",
        "s",
        schema("static"),
        noop,
        dynamic_schema_overrides=lambda: {"description": next(said, "last")},
    )
    reg.register("b", "s", schema("plain"), noop)
    descriptions = [reg.get_definitions({"a", "b"})[0]["function"]["description"] for _ in range(3)]
    assert descriptions == ["first", "second", "last"]
    mine = reg.get_definitions({"a", "b"})[0]
    mine["function"]["description"] = "a fresh dict each time: the caller's own"


def test_other_requests_are_cached_apart(reg: ToolRegistry) -> None:
    for name in "abcdefghijkl":
        reg.register(name, "s", schema(), noop)
    for _ in range(2):
        for i in range(1, 12):  # more distinct requests than are kept
            assert names_of(reg.get_definitions(set("abcdefghijkl"[:i]))) == list(
                "abcdefghijkl"[:i]
            )


def test_a_toolset_switched_off_leaves_the_offered_definitions(home: Path) -> None:
    runtime = load_runtime(home, load_plugins=False)
    offered = lambda: names_of(runtime.registry.get_definitions(runtime.effective_tools()))  # noqa: E731
    assert "terminal" in offered()
    set_toolset_enabled("terminal", False, runtime.toolsets, runtime.config)
    runtime.reload_config()
    assert "terminal" not in offered() and "read_file" in offered()
    set_toolset_enabled("terminal", True, runtime.toolsets, runtime.config)
    runtime.reload_config()
    assert "terminal" in offered()


def test_a_reader_racing_writers_ends_on_the_final_table(reg: ToolRegistry) -> None:
    """The cache never keeps an older table's output under a newer generation."""
    wanted = {f"t{i}" for i in range(200)}
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            reg.get_definitions(wanted)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for i in range(200):
            with reg.scope(ToolSource.PLUGIN, "p"):
                reg.register(f"t{i}", "s", schema(), noop)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert len(reg.get_definitions(wanted)) == 200


DANGLING = {"type": "object", "properties": {"at": {"$ref": "#/$defs/Nowhere"}}}


def test_a_tool_whose_schema_cannot_be_used_is_listed_and_never_offered(
    reg: ToolRegistry,
) -> None:
    ran = {"runs": 0, "ok": True}
    reg.register("good", "s", schema("fine"), noop)
    reg.register("bad", "s", {"description": "x", "parameters": DANGLING}, noop, counted(ran))
    assert names_of(reg.get_definitions({"good", "bad"})) == ["good"]
    why = "its schema cannot be used: $ref '#/$defs/Nowhere' at properties.at does not resolve"
    assert reg.availability("bad").reason == why and not reg.availability("bad").available
    assert reg.availability_report()["bad"].reason == why
    assert reg.get_available_toolsets()["s"]["available"]  # its toolset still has one
    assert ran["runs"] == 0  # its check is never asked: nothing would change
    assert reg.get_entry("bad").schema_problem == why.removeprefix("its schema cannot be used: ")


def test_the_definition_sent_has_an_object_at_the_top(reg: ToolRegistry) -> None:
    args = {"$ref": "#/$defs/Args", "$defs": {"Args": {"properties": {"n": {"type": "integer"}}}}}
    reg.register("refd", "s", {"description": "x", "parameters": args}, noop)
    (sent,) = reg.get_definitions({"refd"})
    parameters = sent["function"]["parameters"]
    assert parameters["type"] == "object" and parameters["properties"] == {"n": {"type": "integer"}}
    assert reg.get_schema("refd")["parameters"] == args  # the tool's own schema, as given


def test_dynamic_overrides_with_parameters_that_cannot_be_used_keep_the_static_ones(
    reg: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def overrides() -> dict:
        return {"description": "new", "parameters": DANGLING}

    reg.register("dyn", "s", schema("static"), noop, dynamic_schema_overrides=overrides)
    (sent,) = reg.get_definitions({"dyn"})
    assert sent["function"]["description"] == "static"
    assert sent["function"]["parameters"] == schema("static")["parameters"]
    assert "cannot be used" in caplog.text
