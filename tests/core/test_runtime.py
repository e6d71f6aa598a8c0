"""The runtime owns the registry and hooks it runs on; the module-level ones stay untouched."""

from __future__ import annotations

from pathlib import Path

from tests.support.tools import noop, schema
from workbench.core.events import ToolSource
from workbench.core.plugins import hooks as module_hooks
from workbench.core.runtime import load_runtime
from workbench.core.tools import registry as registry_module

BUILTINS = {"read_file", "write_file", "patch", "search_files", "terminal", "web_search"}


def test_each_runtime_runs_on_a_registry_of_its_own(home: Path) -> None:
    untouched = registry_module.registry.snapshot()
    one, two = load_runtime(home, load_plugins=False), load_runtime(home, load_plugins=False)
    assert one.registry is not two.registry
    assert registry_module.registry not in (one.registry, two.registry)
    assert set(one.registry.snapshot()) >= BUILTINS and set(two.registry.snapshot()) >= BUILTINS
    with one.registry.scope(ToolSource.PLUGIN, "notes"):
        one.registry.register("note_add", "notes", schema(), noop)
    one.registry.deregister("terminal")
    assert two.registry.get_entry("note_add") is None
    assert two.registry.get_entry("terminal") is not None
    assert one.toolsets.registry is one.registry
    assert registry_module.registry.snapshot() is untouched


def test_each_runtime_runs_on_hooks_of_its_own(home: Path) -> None:
    one, two = load_runtime(home, load_plugins=False), load_runtime(home, load_plugins=False)
    assert one.hooks is not two.hooks and module_hooks not in (one.hooks, two.hooks)
    one.hooks.replace_owner("p", [("pre_tool_call", lambda **kw: None)], [])
    executor = one.executor(broker=None)
    try:
        assert executor.hooks is one.hooks and executor.registry is one.registry
        assert one.hooks.active and not two.hooks.active and not module_hooks.active
    finally:
        executor.shutdown()
        one.hooks.remove_owner("p")
