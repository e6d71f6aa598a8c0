"""The core's one vocabulary of events: every event type is in `CoreEvent`, and only there."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import workbench.core.events as vocabulary
from workbench.core import asking

PARTS = ("agent", "checkpoints", "execution", "mcp", "plugins", "tools")
CORE = Path(vocabulary.__file__).parent


def _event_types(part: str) -> set[type]:
    module = importlib.import_module(f"workbench.core.{part}.events")
    return {
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ == module.__name__
    }


def test_every_event_type_of_every_part_is_in_the_union() -> None:
    union = set(typing.get_args(vocabulary.CoreEvent))
    defined = set().union(*(_event_types(part) for part in PARTS))
    # the ask primitive's two events live beside it (core/asking.py holds its types too)
    defined |= {asking.Asked, asking.Settled}
    assert defined == union
    for event_type in union:  # and each is importable by its name from the vocabulary
        assert getattr(vocabulary, event_type.__name__) is event_type


def test_no_part_of_the_core_imports_the_vocabulary_module() -> None:
    """Each part imports the events of the parts below it; only front ends import the whole."""
    for path in CORE.rglob("*.py"):
        if path == CORE / "events.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "from workbench.core.events import" not in text, path
        assert "import workbench.core.events" not in text, path


def test_the_vocabulary_loads_no_ui_and_no_client() -> None:
    code = (
        "import sys, workbench.core.events\n"
        "print(sorted(m for m in ('textual', 'openai', 'mcp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_vocabulary_loads_the_events_modules_not_the_parts() -> None:
    """Importing the event types loads each part's events module and what those need, never
    the part itself (the MCP client, the checkpoint store) nor the YAML library."""
    code = (
        "import sys, workbench.core.events\n"
        "print(sorted(m for m in sys.modules if m.startswith('workbench.') or m == 'yaml'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.strip().strip("[]").replace("'", "").split(", "))
    assert {f"workbench.core.{part}.events" for part in PARTS} <= loaded
    assert not loaded & {
        "yaml",
        "workbench.core.mcp.manager",
        "workbench.core.mcp.server",
        "workbench.core.checkpoints.store",
        "workbench.core.runtime",
    }


def test_a_part_lazily_named_is_the_same_object_as_in_its_module() -> None:
    from workbench.core import checkpoints, mcp
    from workbench.core.checkpoints.store import CheckpointStore
    from workbench.core.mcp.manager import MCPManager

    assert mcp.MCPManager is MCPManager and checkpoints.CheckpointStore is CheckpointStore
    assert "ToolsChanged" in mcp.__all__
