"""The ownership rules on their own: who may register or remove which tool."""

from __future__ import annotations

import pytest

from tests.support.tools import noop, schema
from workbench.core.events import ToolSource
from workbench.core.tools.entry import ToolEntry
from workbench.core.tools.ownership import registration_refusal, removal_refusal


def tool(source: ToolSource, owner: str, toolset: str = "s", name: str = "t") -> ToolEntry:
    return ToolEntry(
        name=name, toolset=toolset, schema=schema(), handler=noop, source=source, owner=owner
    )


BUILTIN = tool(ToolSource.BUILTIN, "workbench.builtins.x")
MCP = tool(ToolSource.MCP, "srv", "mcp-srv")
PLUGIN = tool(ToolSource.PLUGIN, "p")


@pytest.mark.parametrize(
    ("new", "old", "override", "allowed"),
    [
        (PLUGIN, None, False, True),
        (PLUGIN, PLUGIN, False, True),  # its own tool
        (PLUGIN, BUILTIN, False, False),
        (PLUGIN, BUILTIN, True, True),  # an opted-in override
        (PLUGIN, MCP, True, False),  # never an MCP server's tool
        (tool(ToolSource.MCP, "other", "mcp-other"), MCP, True, False),
        (tool(ToolSource.PLUGIN, "p", "mcp-x"), None, False, False),  # mcp-* is the servers'
        (tool(ToolSource.PLUGIN, "p", name="tool_call"), None, False, False),  # reserved
    ],
)
def test_registration(new, old, override, allowed) -> None:
    assert (registration_refusal(new, old, override) is None) is allowed


def test_removal_only_by_the_owner() -> None:
    assert removal_refusal(PLUGIN, ToolSource.PLUGIN, "p") is None
    assert removal_refusal(MCP, ToolSource.PLUGIN, "p") == (
        "plugin 'p' may not remove tool 't' owned by mcp 'srv'"
    )
