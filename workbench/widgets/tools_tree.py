"""The tools tree: source → toolset → tool, with counts and an availability mark per tool."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

SOURCE_LABELS = {"builtin": "Built-in", "mcp": "MCP servers", "plugin": "Plugins"}


class ToolsTree(Tree[dict[str, Any]]):
    """Shows the rows of `report.tool_rows`; keeps the cursor on the same item across updates."""

    BINDINGS = [
        Binding("space", "toggle_toolset", "Toggle toolset", id="tools.toggle_toolset"),
    ]

    class ToolsetToggled(Message):
        def __init__(self, toolset: str, enabled: bool) -> None:
            super().__init__()
            self.toolset = toolset
            self.enabled = enabled

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Tools", **kwargs)
        self.show_root = False
        self.guide_depth = 3

    def show_rows(self, rows: list[dict[str, Any]], toolsets: list[dict[str, Any]]) -> None:
        keep = self._cursor_key()
        self.clear()
        enabled = {t["name"]: t["enabled"] for t in toolsets}
        grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for row in rows:
            grouped.setdefault(row["source"], {}).setdefault(row["toolset"], []).append(row)
        for source in ("builtin", "mcp", "plugin"):
            sets = grouped.get(source, {})
            count = sum(len(v) for v in sets.values())
            node = self.root.add(
                f"{SOURCE_LABELS[source]} ({count})", {"kind": "source", "name": source}
            )
            if not sets:
                node.add_leaf(Text("none yet", style="dim italic"), {"kind": "empty"})
            for toolset, items in sorted(sets.items()):
                self._add_toolset(node, toolset, items, enabled.get(toolset, True))
            node.expand()
        self._restore_cursor(keep)

    def _add_toolset(self, parent: TreeNode, toolset: str, items: list, on: bool) -> None:
        box = "☑" if on else "☐"
        label = Text.assemble(f"{box} {toolset} ", (f"({len(items)})", "dim"))
        node = parent.add(label, {"kind": "toolset", "name": toolset, "enabled": on})
        for row in items:
            mark = ("✔ ", "green") if row["available"] else ("✖ ", "red")
            style = "" if on else "dim"
            node.add_leaf(Text.assemble(mark, (row["name"], style)), {"kind": "tool", **row})
        node.expand()

    def _cursor_key(self) -> tuple[str, str] | None:
        node = self.cursor_node
        if node is None or not node.data:
            return None
        return node.data.get("kind", ""), node.data.get("name", "")

    def _restore_cursor(self, key: tuple[str, str] | None) -> None:
        if key is None:
            return
        for line in range(self.last_line + 1):
            node = self.get_node_at_line(line)
            if (
                node is not None
                and node.data
                and (node.data.get("kind"), node.data.get("name")) == key
            ):
                self.move_cursor(node)
                return

    def action_toggle_toolset(self) -> None:
        node = self.cursor_node
        data = node.data if node else None
        if data and data.get("kind") == "tool":
            node = node.parent
            data = node.data if node else None
        if data and data.get("kind") == "toolset":
            self.post_message(self.ToolsetToggled(data["name"], not data["enabled"]))
