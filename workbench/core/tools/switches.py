"""Single tools switched off, besides whole toolsets.

Hermes switches whole toolsets, and single MCP tools through their server's
`tools.include`/`tools.exclude` (core.mcp.filters reads and writes those). A built-in or a
plugin tool is switched off here under our own key, `tools.disabled` (a list of tool names,
beside our `tools.timeout`): Hermes has none for them.

One rule for every switch: a tool switched off by itself, with its toolset, or by its MCP
server's filter is not offered to the model, and the executor refuses to run it whoever asks
(`hermes-tui call`, `replay`, the run form, a plugin), with `refusal`'s sentence: the switch
and how to turn it on again.
"""

from __future__ import annotations

from typing import Any

from workbench.core.config import Config, set_path
from workbench.core.tools.toolsets import DISABLED_KEY as TOOLSETS_OFF
from workbench.core.tools.toolsets import ToolsetSwitch

DISABLED_KEY = "tools.disabled"
REASON = f"switched off ({DISABLED_KEY} in config.yaml)"


def disabled_tools(config: Config) -> list[str]:
    """The names under `tools.disabled` (a single name is read as a list of one)."""
    value = config.get(DISABLED_KEY)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []


def switch(doc: Any, name: str, enabled: bool) -> None:
    """Switch `name` in `tools.disabled` of the (round-trip) document, as it is now."""
    tools = doc.get("tools") if isinstance(doc, dict) else None
    current = tools.get("disabled") if isinstance(tools, dict) else None
    names = [current] if isinstance(current, str) else [str(n) for n in current or []]
    names = [n for n in names if n != name] + ([] if enabled else [name])
    set_path(doc, DISABLED_KEY, sorted(names))


def refusal(name: str, alone: str | None, toolset: ToolsetSwitch | None) -> str:
    """Why `name` is off and how to switch it on, after "Tool 'NAME' is ": `alone` is the
    reason it is switched off by itself (tools.disabled, an MCP filter), `toolset` the
    toolset that leaves it off. Both may hold; each is said with its own way back."""
    why, fixes = [], []
    if alone:
        why.append(alone)
        fixes.append(f"`hermes-tui tools enable {name}` (in the workbench: x on the tool)")
    if toolset is not None:
        whose = "its toolset" if toolset.own else "toolset"
        which = "which includes it, " if not toolset.own else ""
        where = (
            f"{toolset.key} in config.yaml"
            if toolset.key == TOOLSETS_OFF
            else f"not in {toolset.key} of config.yaml"
        )
        why.append(f"switched off with {whose} {toolset.toolset} ({which}{where})")
        fixes.append(
            f"`hermes-tui toolsets enable {toolset.toolset}` (in the workbench: the toolset's "
            "checkbox)"
        )
    return f"{' and '.join(why)}; to switch it on: {' and '.join(fixes)}"
