"""The MCP manager against real server processes: the fixture server, a stubborn one, and bad ones."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.support.mcp import FIXTURE, HERE, wait_until
from tests.support.procs import alive  # a /proc entry may vanish while it is read
from tests.support.waiting import seen, until
from workbench.core.events import ToolSource
from workbench.core.execution.executor import Executor
from workbench.core.mcp import CallProgress, MCPManager, ToolsChanged
from workbench.core.mcp.filters import switched_off
from workbench.core.tools.registry import ToolRegistry

STUBBORN = [sys.executable, str(HERE / "stubborn_server.py")]


def stdio(argv: list[str], **extra) -> dict:
    return {"command": argv[0], "args": argv[1:], **extra}


def status(manager: MCPManager, name: str):
    return next(s for s in manager.statuses() if s.name == name)


def test_tools_register_under_the_server_and_calls_work(start, reg: ToolRegistry) -> None:
    manager, _ = start({"fx": stdio(FIXTURE)})
    assert status(manager, "fx").state == "ready"
    entry = reg.get_entry("mcp__fx__add")
    assert (entry.source, entry.owner, entry.toolset) == (ToolSource.MCP, "fx", "mcp-fx")
    assert reg.get_toolset_alias_target("fx") == "mcp-fx"
    assert json.loads(reg.dispatch("mcp__fx__add", {"a": 2, "b": 3})) == {
        "result": "5",
        "structuredContent": {"result": 5},
    }
    assert len(reg.dispatch("mcp__fx__big", {"n": 300_000})) > 300_000
    image = reg.dispatch("mcp__fx__pixel", {})
    assert image["_multimodal"] is True and image["content"][-1]["image_url"]["url"].startswith(
        "data:image/png"
    )
    assert manager.original_names["mcp__fx__add"] == ("fx", "add")


def test_is_error_is_a_result_not_a_transport_failure(start, reg: ToolRegistry) -> None:
    # Hermes counted isError results toward its breaker and locked out a healthy server
    manager, _ = start({"fx": stdio(FIXTURE)})
    for _ in range(5):
        assert json.loads(reg.dispatch("mcp__fx__boom", {})) == {
            "error": "Error executing tool boom"
        }
    assert status(manager, "fx").state == "ready"
    assert json.loads(reg.dispatch("mcp__fx__add", {"a": 1, "b": 1}))["result"] == "2"


def test_list_changed_adds_and_removes_only_the_difference(start, reg: ToolRegistry) -> None:
    _, events = start({"fx": stdio(FIXTURE)})
    before = reg.get_entry("mcp__fx__add")
    reg.dispatch("mcp__fx__grow", {"name": "extra"})
    wait_until(lambda: reg.get_entry("mcp__fx__extra") is not None)
    assert json.loads(reg.dispatch("mcp__fx__extra", {}))["result"] == "extra here"
    assert ToolsChanged("fx", ("mcp__fx__extra",), ()) in events
    reg.dispatch("mcp__fx__shrink", {"name": "extra"})
    wait_until(lambda: reg.get_entry("mcp__fx__extra") is None)
    assert ToolsChanged("fx", (), ("mcp__fx__extra",)) in events
    assert reg.get_entry("mcp__fx__add").handler is not None and before.owner == "fx"


def test_a_crashed_server_is_noticed_restarted_and_reregistered(start, reg: ToolRegistry) -> None:
    manager, _ = start({"fx": stdio(FIXTURE)})
    result = json.loads(reg.dispatch("mcp__fx__die", {}))
    assert "fx" in result["error"]
    wait_until(
        lambda: (
            status(manager, "fx").state in ("reconnecting", "starting")
            or status(manager, "fx").restarts
        )
    )
    wait_until(lambda: status(manager, "fx").state == "ready")
    assert status(manager, "fx").restarts >= 1
    assert json.loads(reg.dispatch("mcp__fx__add", {"a": 4, "b": 4}))["result"] == "8"


def test_a_dead_servers_tools_are_unavailable_with_the_reason(
    start, reg: ToolRegistry, tmp_path
) -> None:
    script = tmp_path / "dies_at_once.sh"
    script.write_text("#!/bin/sh\necho 'missing API key FOO_TOKEN' >&2\nexit 1\n")
    script.chmod(0o755)
    manager, _ = start({"fx": stdio(FIXTURE), "dying": {"command": str(script)}})
    state = status(manager, "dying")
    assert state.state in ("reconnecting", "parked")
    assert "missing API key FOO_TOKEN" in state.error and state.stderr_tail
    reg.dispatch("mcp__fx__die", {})
    wait_until(lambda: not reg.availability("mcp__fx__add").available)
    assert "MCP server 'fx' is" in reg.availability("mcp__fx__add").reason


def test_timeouts_and_progress(start, reg: ToolRegistry) -> None:
    manager, events = start({"fx": stdio(FIXTURE, timeout=1.5)})
    timed_out = json.loads(reg.dispatch("mcp__fx__slow", {"seconds": 3}))
    assert timed_out["error"] == "MCP call failed: TimeoutError: MCP call timed out after 1.5s"
    assert status(manager, "fx").state == "ready"
    assert json.loads(reg.dispatch("mcp__fx__slow", {"seconds": 0.5}))["result"] == "done"
    progress = [e for e in events if isinstance(e, CallProgress)]
    assert progress and progress[-1].total == 5 and progress[-1].message == "step 5"


async def test_cancel_reaches_the_server(start, reg: ToolRegistry, markers: Path) -> None:
    _, events = start({"fx": stdio(FIXTURE)})
    executor = Executor(reg)
    task = asyncio.create_task(
        executor.run([{"id": "1", "name": "mcp__fx__slow", "arguments": {"seconds": 10}}])
    )
    await until(seen(events, CallProgress))  # the server runs the call
    executor.cancel()
    (outcome,) = await task
    assert outcome.status == "cancelled"
    await asyncio.to_thread(wait_until, lambda: (markers / "cancelled").exists())


def test_calls_to_a_parallel_server_run_concurrently(start, reg: ToolRegistry) -> None:
    # Hermes serialises calls to one server even when it allows parallel calls
    _, events = start({"fx": stdio(FIXTURE, supports_parallel_tool_calls=True)})
    calls = [{"id": str(i), "name": "mcp__fx__slow", "arguments": {"seconds": 1}} for i in range(5)]
    outcomes = asyncio.run(Executor(reg).run(calls))
    assert [o.status for o in outcomes] == ["ok"] * 5
    assert all(o.parallel for o in outcomes)
    # each call reports progress ten times: one after the other, the reports come in five
    # runs of one call each; together, they interleave
    order = [e.call_id for e in events if isinstance(e, CallProgress)]
    runs = 1 + sum(a != b for a, b in itertools.pairwise(order))
    assert len(set(order)) == 5 and runs > 5, order


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http(start, reg: ToolRegistry, markers: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [*FIXTURE, "http", str(port)],
        env={**os.environ, "FIXTURE_MARKERS": str(markers)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0)
        manager, _ = start(
            {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "1"}}}
        )
        assert (
            status(manager, "web").state == "ready" and status(manager, "web").transport == "http"
        )
        assert json.loads(reg.dispatch("mcp__web__add", {"a": 20, "b": 22}))["result"] == "42"
    finally:
        server.terminate()
        server.wait(10)


def test_bad_entries_are_reported_and_the_others_start(start, reg: ToolRegistry) -> None:
    manager, _ = start(
        {
            "fx": stdio(FIXTURE),
            "nocommand": {"args": ["x"]},
            "badurl": {"url": "ws://127.0.0.1:1/x"},
            "badtransport": {"url": "http://127.0.0.1:1/x", "transport": "carrier-pigeon"},
            "missing": {"command": "no-such-mcp-server-xyz"},
            "typo": {**stdio(FIXTURE), "comand": "oops"},
            "off": {**stdio(FIXTURE), "enabled": "no"},
        }
    )
    states = {s.name: s for s in manager.statuses()}
    assert states["fx"].state == "ready" and states["typo"].state == "ready"
    assert states["typo"].warnings == ["unknown key 'comand' (ignored)"]
    assert states["nocommand"].state == "invalid" and "needs a command" in states["nocommand"].error
    assert (
        "http(s) URL" in states["badurl"].error and "carrier-pigeon" in states["badtransport"].error
    )
    assert "command not found: no-such-mcp-server-xyz" in states["missing"].error
    assert states["off"].state == "disabled" and reg.get_entry("mcp__off__add") is None


def test_garbage_on_stdout_is_survived(start, reg: ToolRegistry) -> None:
    manager, _ = start({"noisy": stdio([*FIXTURE, "garbage"])})
    assert status(manager, "noisy").state == "ready"
    assert json.loads(reg.dispatch("mcp__noisy__add", {"a": 1, "b": 2}))["result"] == "3"


def test_a_server_that_never_answers_is_bounded(start, reg: ToolRegistry) -> None:
    manager, _ = start(
        {
            "silent": {"command": "sh", "args": ["-c", "exec sleep 1000"], "connect_timeout": 1},
            "fx": stdio(FIXTURE),
        }
    )
    assert status(manager, "fx").state == "ready"
    # given up after its connect_timeout, not left starting
    assert "no answer to initialize within 1 s (connect_timeout)" in status(manager, "silent").error


def test_two_servers_colliding_on_a_name_are_reported(start, reg: ToolRegistry) -> None:
    # Hermes lets `my-server` and `my_server` overwrite each other's tools
    manager, _ = start({"my-server": stdio(FIXTURE), "my_server": stdio(FIXTURE)})
    owners = {reg.get_entry("mcp__my_server__add").owner}
    assert len(owners) == 1
    loser = next(s for s in manager.statuses() if s.refused)
    assert loser.name in ("my-server", "my_server")
    assert any(
        name == "mcp__my_server__add" and "already registered" in why for name, why in loser.refused
    )


def test_include_and_exclude_switch_tools_off(start, reg: ToolRegistry) -> None:
    servers = {
        "inc": stdio(FIXTURE, tools={"include": ["add"], "exclude": ["add", "big"]}),
        "exc": stdio(FIXTURE, tools={"exclude": ["die", "boom"]}),
    }
    manager, _ = start(servers)
    # the server's own tools: its resources and prompts tools (Hermes's) are not filtered
    names = [n for n in reg.get_all_tool_names() if n not in manager.utilities]
    registered = [(name, *manager.original_names[name]) for name in names]
    off = switched_off(servers, registered)
    inc = [n for n in reg.get_tool_names_for_toolset("mcp-inc") if n in names]
    assert "mcp__inc__big" in inc  # listed and registered, so it can be switched on again
    assert [n for n in inc if n not in off] == ["mcp__inc__add"]  # include wins
    assert "include" in off["mcp__inc__big"]
    assert {"mcp__exc__die", "mcp__exc__boom"} <= set(off)
    assert "mcp__exc__add" not in off and "exclude" in off["mcp__exc__die"]


def test_secrets_do_not_reach_servers(start, reg: ToolRegistry, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("MY_TOKEN", "from-env")
    probe = tmp_path / "env_probe.py"
    probe.write_text(
        "import os, sys\n"
        f"open({str(tmp_path / 'env.txt')!r}, 'w').write(repr(sorted(os.environ)) + os.environ.get('TOKEN', ''))\n"
        f"sys.argv = ['x']\nexec(open({str(HERE / 'fixture_server.py')!r}).read())\n"
    )
    start(
        {"envy": {"command": sys.executable, "args": [str(probe)], "env": {"TOKEN": "${MY_TOKEN}"}}}
    )
    seen = (tmp_path / "env.txt").read_text()
    assert "OPENAI_API_KEY" not in seen and seen.endswith("from-env")


def test_shutdown_leaves_no_process_even_a_stubborn_one(
    tmp_path, reg: ToolRegistry, markers: Path
) -> None:
    manager = MCPManager.from_config(
        reg,
        {
            "fx": stdio(FIXTURE, env={"FIXTURE_MARKERS": str(markers)}),
            "stubborn": stdio(STUBBORN, env={"FIXTURE_MARKERS": str(markers)}),
        },
        log_dir=tmp_path / "logs",
    )
    manager.start()
    manager.wait_settled(20)
    assert status(manager, "stubborn").state == "ready"
    assert reg.dispatch("mcp__stubborn__ping", {}) == '{"result": "pong"}'
    pids = [int(p.name.split("-")[1]) for p in markers.glob("pid-*")]
    assert len(pids) == 2 and all(alive(p) for p in pids)
    began = time.monotonic()
    manager.stop()
    assert time.monotonic() - began < 8
    wait_until(lambda: not any(alive(p) for p in pids))
    assert reg.get_tool_names_for_toolset("mcp-fx") == []


def test_list_changed_on_a_2026_session_arrives_through_listen(start, reg: ToolRegistry) -> None:
    manager, _ = start({"modern": stdio(FIXTURE, mode="auto")})
    assert status(manager, "modern").protocol.startswith("2026")
    reg.dispatch("mcp__modern__grow", {"name": "fresh"})
    wait_until(lambda: reg.get_entry("mcp__modern__fresh") is not None)


def test_repeated_failures_park_the_server_until_restarted(
    start, reg, tmp_path, monkeypatch
) -> None:
    from workbench.core.mcp import server

    monkeypatch.setattr(server, "BACKOFF", (0.05,) * 7)
    flag = tmp_path / "healthy"
    script = tmp_path / "flaky.sh"
    script.write_text(
        f"#!/bin/sh\n[ -f {flag} ] && exec {' '.join(FIXTURE)}\necho 'not yet' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    manager, _ = start({"flaky": {"command": str(script)}})
    wait_until(lambda: status(manager, "flaky").state == "parked")
    assert "parked after 4 failed attempts" in status(manager, "flaky").error
    flag.write_text("ok")
    manager.restart("flaky")
    wait_until(lambda: status(manager, "flaky").state == "ready")
    assert reg.availability("mcp__flaky__add").available


SILENT = [sys.executable, str(HERE / "silent_server.py")]
NOISY = [sys.executable, str(HERE / "noisy_server.py")]


def test_a_server_that_never_answers_says_what_it_waits_for_and_stops_at_once(
    tmp_path, reg: ToolRegistry, markers: Path
) -> None:
    manager = MCPManager.from_config(
        reg,
        {"silent": stdio(SILENT, env={"FIXTURE_MARKERS": str(markers)})},
        log_dir=tmp_path / "logs",
    )
    manager.start()
    wait_until(lambda: list(markers.glob("pid-*")))
    assert manager.wait_settled(0.5) is False
    silent = status(manager, "silent")
    assert silent.state == "starting"
    assert silent.error.startswith("no answer to initialize after ")
    assert "connect_timeout, 60 s" in silent.error
    (pid,) = [int(p.name.split("-")[1]) for p in markers.glob("pid-*")]
    began = time.monotonic()
    manager.stop()
    assert time.monotonic() - began < 3  # the SDK's own escalation alone takes over 4 s
    wait_until(lambda: not alive(pid))


def test_garbage_lines_are_counted_and_said_once(start, reg: ToolRegistry) -> None:
    manager, _ = start({"noisy": stdio(NOISY)})
    assert status(manager, "noisy").state == "ready"
    assert reg.dispatch("mcp__noisy__ping", {}) == '{"result": "pong"}'
    wait_until(lambda: manager.handles["noisy"].noise == 1001)
    (warning,) = status(manager, "noisy").warnings
    assert warning.startswith("1001 line(s) of its output were not JSON-RPC messages")
    assert "'DEBUG 0: starting up, this is not JSON'" in warning


def test_a_replaced_sdk_fails_every_server_with_its_fix(tmp_path: Path, reg: ToolRegistry) -> None:
    from workbench.core.requirements import own_requirements, sdk_problem

    said = sdk_problem("1.9.0", own_requirements()["mcp"])  # as `pip install mcp<2` leaves it
    manager = MCPManager.from_config(
        reg,
        {"fx": stdio(FIXTURE), "off": {**stdio(FIXTURE), "enabled": False}},
        log_dir=tmp_path / "logs",
        sdk_problem=lambda: said,
    )
    try:
        manager.start()
        assert manager.wait_settled(5)
        fx, off = status(manager, "fx"), status(manager, "off")
        assert (fx.state, fx.error) == ("failed", said) and "mcp 1.9.0" in said
        assert off.state == "disabled"  # switched off stays what it is
        assert not [e for e in reg.snapshot().values() if e.owner == "fx"]  # nothing started
    finally:
        manager.stop()
