"""Plugin discovery, loading and the plugin context, on fixture plugins, where Hermes's
plugin loading is weak too."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.plugins import FIXTURES, make_home, make_manager
from tests.support.tools import noop, schema
from workbench.core.config import load_config
from workbench.core.events import ToolSource
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.executor import Executor
from workbench.core.plugins import HookRegistry


@pytest.fixture
def hooks() -> HookRegistry:
    return HookRegistry()


@pytest.fixture(autouse=True)
def _forget_plugin_modules():
    yield
    for name in [
        m for m in sys.modules if m.startswith("hermes_plugins.") or m.startswith("ep_fixture")
    ]:
        del sys.modules[name]


def test_positional_plugin_loads_with_source_owner_and_details(tmp_path, reg, hooks) -> None:
    manager = make_manager(make_home(tmp_path, ["positional"]), reg, hooks)
    state = manager.states["positional"]
    assert state.status == "loaded" and state.tools == ["pos_echo"]
    entry = reg.get_entry("pos_echo")
    assert (entry.source, entry.owner, entry.toolset) == (
        ToolSource.PLUGIN,
        "positional",
        "positional",
    )
    assert reg.dispatch("pos_echo", {"text": "hi"}) == "echo: hi"
    assert state.commands == ["/echo-now"] and state.cli_commands == ["echo"]
    assert state.skills == ["positional:echoing"] and state.hooks == ["on_session_start"]
    assert state.other == ["register_platform"]
    assert state.manifest.version == "1.2" and state.manifest.source == "user"


def test_only_enabled_plugins_run_code(tmp_path, reg, hooks) -> None:
    manager = make_manager(make_home(tmp_path, ["positional", "raiser"], enabled=[]), reg, hooks)
    assert {s.key: s.status for s in manager.list()} == {
        "positional": "disabled",
        "raiser": "disabled",
    }
    assert reg.get_all_tool_names() == []


def test_disabled_wins_over_enabled(tmp_path, reg, hooks) -> None:
    home = make_home(
        tmp_path, ["positional"], plugins={"enabled": ["positional"], "disabled": ["positional"]}
    )
    assert make_manager(home, reg, hooks).states["positional"].status == "disabled"


def test_a_raising_register_is_failed_and_rolled_back(tmp_path, reg, hooks) -> None:
    manager = make_manager(make_home(tmp_path, ["raiser", "positional"]), reg, hooks)
    state = manager.states["raiser"]
    assert state.status == "failed" and state.error == "RuntimeError: database not configured"
    assert "Traceback" in state.traceback and "database not configured" in state.traceback
    assert reg.get_entry("raiser_tool") is None and not hooks.active
    assert manager.states["positional"].status == "loaded"  # the rest is untouched


def test_system_exit_in_register_fails_only_that_plugin(tmp_path, reg, hooks) -> None:
    state = make_manager(make_home(tmp_path, ["exiter"]), reg, hooks).states["exiter"]
    assert state.status == "failed" and state.error == "SystemExit: 3"


def test_unsupported_context_method_fails_with_a_clear_message(tmp_path, reg, hooks) -> None:
    state = make_manager(make_home(tmp_path, ["unsupported"]), reg, hooks).states["unsupported"]
    assert state.status == "failed"
    assert "called ctx.register_time_machine, which hermes-tui does not offer" in state.error
    assert reg.get_entry("unsupported_tool") is None


def test_a_plugin_cannot_replace_a_builtin(tmp_path, reg, hooks) -> None:
    reg.register("read_file", "file", schema("the real one"), noop)
    state = make_manager(make_home(tmp_path, ["shadow"]), reg, hooks).states["shadow"]
    assert state.status == "loaded" and state.tools == ["shadow_ok"]
    assert (
        state.refused[0][0] == "read_file"
        and "already registered by builtin" in state.refused[0][1]
    )
    assert reg.get_entry("read_file").description == "the real one"


def test_hermes_style_registrations_reach_the_loading_registry_as_the_plugins(
    tmp_path, reg, hooks
) -> None:
    """Direct calls on the module-level registry, on import and in register(), are the
    plugin's tools in the registry loading it, committed and refused like ctx's."""
    from workbench.core.tools.registry import registry as module_registry

    untouched = module_registry.snapshot()
    reg.register("terminal", "terminal", schema("the real one"), noop)
    manager = make_manager(make_home(tmp_path, ["hermes_style"]), reg, hooks)
    state = manager.states["hermes_style"]
    assert state.status == "loaded"
    assert state.tools == ["hs_ctx", "hs_in_register", "hs_on_import"]
    for name in state.tools:
        entry = reg.get_entry(name)
        assert (entry.source, entry.owner) == (ToolSource.PLUGIN, "hermes_style")
    assert reg.dispatch("hs_on_import", {}) == "import"
    assert reg.dispatch("hs_in_register", {}) == "reg"
    # On import too it may not take a built-in (outside its load it would have been a
    # built-in itself, allowed to override).
    assert (
        state.refused[0][0] == "terminal" and "already registered by builtin" in state.refused[0][1]
    )
    assert reg.get_entry("terminal").description == "the real one"
    assert module_registry.snapshot() is untouched
    assert manager.reload("hermes_style").tools == state.tools  # imported afresh, same tools
    manager.unload("hermes_style")
    assert [n for n in reg.get_all_tool_names() if n.startswith("hs_")] == []


def test_opt_in_override_is_explicit(tmp_path, reg, hooks) -> None:
    reg.register("read_file", "file", schema("the real one"), noop)
    home = make_home(
        tmp_path,
        ["shadow"],
        plugins={"enabled": ["shadow"], "entries": {"shadow": {"allow_tool_override": True}}},
    )
    make_manager(home, reg, hooks)
    assert reg.get_entry("read_file").owner == "shadow"


def test_category_layout(tmp_path, reg, hooks) -> None:
    manager = make_manager(
        make_home(tmp_path, ["category"], enabled=["category/nested"]), reg, hooks
    )
    assert manager.states["category/nested"].status == "loaded"
    assert reg.get_entry("nested_tool").owner == "category/nested"


def test_project_plugins_need_the_opt_in(tmp_path, reg, hooks, monkeypatch) -> None:
    home = make_home(tmp_path, [], plugins={"enabled": ["positional"]})
    project = tmp_path / "repo" / ".hermes" / "plugins"
    shutil.copytree(FIXTURES / "positional", project / "positional")
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS", raising=False)
    assert make_manager(home, reg, hooks, project=project).states == {}
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    manager = make_manager(home, reg, hooks, project=project)
    assert manager.states["positional"].manifest.source == "project"


def fake_entry_points(tmp_path: Path, monkeypatch, **points: str):
    package = tmp_path / "site" / "ep_fixture"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "def register(ctx):\n"
        "    ctx.register_tool('ep_module_tool', 'ep', {'description': 'm'}, lambda a, **k: 'module')\n"
    )
    (package / "funcs.py").write_text(
        "def setup(ctx):\n"
        "    ctx.register_tool('ep_callable_tool', 'ep2', {'description': 'c'}, lambda a, **k: 'callable')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return lambda: [
        SimpleNamespace(name=name, value=value, dist=None) for name, value in points.items()
    ]


def test_entry_points_accept_a_module_or_a_callable(tmp_path, reg, hooks, monkeypatch) -> None:
    # Hermes rejects an entry point whose value is a function
    points = fake_entry_points(
        tmp_path, monkeypatch, modular="ep_fixture", functional="ep_fixture.funcs:setup"
    )
    home = make_home(tmp_path, [], plugins={"enabled": ["modular", "functional"]})
    manager = make_manager(home, reg, hooks, entry_points=points)
    assert [manager.states[k].status for k in ("modular", "functional")] == ["loaded", "loaded"]
    assert reg.dispatch("ep_callable_tool", {}) == "callable"
    assert reg.get_entry("ep_module_tool").source is ToolSource.PLUGIN


def test_key_collisions_are_reported_on_both_sides(tmp_path, reg, hooks, monkeypatch) -> None:
    points = fake_entry_points(tmp_path, monkeypatch, positional="ep_fixture")
    home = make_home(tmp_path, ["positional"])
    manager = make_manager(home, reg, hooks, entry_points=points)
    winner = manager.states["positional"]
    (loser,) = manager.shadowed
    assert winner.manifest.source == "entrypoint" and loser.manifest.source == "user"
    assert loser.status == "shadowed"
    assert "collides with the user plugin" in winner.manifest.problems[0]
    assert "also provided by the entrypoint plugin" in loser.manifest.problems[0]


def test_enable_and_disable_persist_atomically(tmp_path, reg, hooks) -> None:
    home = make_home(tmp_path, ["positional"], enabled=[])
    (home / "config.yaml").write_text("# mine\n" + (home / "config.yaml").read_text())
    manager = make_manager(home, reg, hooks)
    assert manager.set_enabled("positional", True).status == "loaded"
    config = load_config(home / "config.yaml")
    assert config.get("plugins.enabled") == ["positional"]
    assert (home / "config.yaml").read_text().startswith("# mine")
    manager.set_enabled("positional", False)
    assert reg.get_entry("pos_echo") is None
    assert load_config(home / "config.yaml").get("plugins.disabled") == ["positional"]
    with pytest.raises(KeyError):
        manager.set_enabled("ghost", True)


async def test_hooks_block_approve_observe_and_transform(tmp_path, reg, hooks) -> None:
    manager = make_manager(make_home(tmp_path, ["hooky"]), reg, hooks)
    module = sys.modules["hermes_plugins.hooky"]
    broker = ApprovalBroker()
    asked = []
    broker.attach(lambda r: (asked.append(r.reason), broker.answer(r.id, "o")))
    executor = Executor(reg, broker=broker, hooks=hooks)
    secret, risky, loud = await executor.run(
        [
            {"id": "1", "name": "hooky_secret"},
            {"id": "2", "name": "hooky_risky"},
            {"id": "3", "name": "hooky_loud"},
        ]
    )
    assert (secret.status, json.loads(secret.content)) == (
        "blocked",
        {"error": "secrets stay secret"},
    )
    assert risky.status == "ok" and asked == ["hooky wants a human to confirm"]
    assert loud.content == "HOOKY_LOUD RAN"
    posts = [c for c in module.CALLS if c[0] == "post"]
    assert posts == [
        ("post", "hooky_secret", "blocked"),
        ("post", "hooky_risky", "ok"),
        ("post", "hooky_loud", "ok"),
    ]
    pre_kwargs = next(c[2] for c in module.CALLS if c[0] == "pre")
    assert {"task_id", "session_id", "tool_call_id", "turn_id", "middleware_trace"} <= set(
        pre_kwargs
    )
    assert manager.states["hooky"].hooks == [
        "post_tool_call",
        "pre_tool_call",
        "transform_tool_result",
    ]


async def test_plugin_approval_fails_closed_headless(tmp_path, reg, hooks) -> None:
    make_manager(make_home(tmp_path, ["hooky"]), reg, hooks)
    (risky,) = await Executor(reg, hooks=hooks).run([{"id": "2", "name": "hooky_risky"}])
    assert risky.status == "denied"


async def test_middleware_that_fails_before_next_call_blocks(tmp_path, reg, hooks) -> None:
    # Hermes skips a failing tool_execution middleware (fail-open)
    make_manager(make_home(tmp_path, ["strict_mw"]), reg, hooks)
    guarded, free = await Executor(reg, hooks=hooks).run(
        [{"id": "1", "name": "strict_guarded"}, {"id": "2", "name": "strict_free"}]
    )
    assert guarded.status == "blocked" and "policy service unreachable" in guarded.content
    assert (free.status, free.content) == ("ok", "free ran")


async def test_plugin_dispatch_goes_through_the_pipeline(tmp_path, monkeypatch) -> None:
    # Hermes's ctx.dispatch_tool skips approvals; ours asks (and headless, denies)
    from workbench.core.runtime import load_runtime

    home = make_home(tmp_path, ["dispatcher"])
    monkeypatch.setenv("HERMES_HOME", str(home))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    runtime = load_runtime(home)
    try:
        assert runtime.plugins.states["dispatcher"].status == "loaded"
        executor = runtime.executor(broker=None, cwd=str(tmp_path))
        (outcome,) = await executor.run(
            [{"id": "1", "name": "dispatcher_wipe", "arguments": {"path": str(victim)}}]
        )
        assert victim.exists()
        assert "no approval channel" in json.loads(outcome.content)["error"]
    finally:
        runtime.plugins.unload("dispatcher")
