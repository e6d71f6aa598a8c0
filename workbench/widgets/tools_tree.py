"""The tools tree: source → toolset → tool, with counts, a checkbox per toolset, a mark per tool,
and each one's size in tokens (what its definitions cost on every request).

The tree keeps the cursor on the same item and its scroll position when it is rebuilt (a
plugin reloaded, a server's tools changed, the filter narrowed).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

SOURCE_LABELS = {"builtin": "Built-in", "mcp": "MCP servers", "plugin": "Plugins"}
# Tool leaves built up front; toolsets beyond this fill in when expanded, so a registry of
# thousands of tools filters as fast as a small one.
MAX_LEAVES = 80
EMPTY = {
    "builtin": "none",
    "mcp": "none configured (mcp_servers in config.yaml)",
    "plugin": "none enabled (hermes-tui plugins)",
}


class ToolsTree(Tree[dict[str, Any]]):
    DEFAULT_CSS = """
    ToolsTree {
        height: 1fr;
        border: round $primary 50%;
    }

    ToolsTree:focus {
        border: round $primary;
    }
    """

    BINDINGS = [
        Binding("space", "toggle_toolset", "Toggle toolset", id="tools.toggle_toolset"),
        Binding("x", "toggle_tool", "Switch tool off/on", id="tools.toggle_tool"),
        Binding("right", "expand", "Expand", id="tools.expand", show=False),
        Binding("left", "collapse", "Collapse", id="tools.collapse", show=False),
    ]

    class ToolsetToggled(Message):
        def __init__(self, toolset: str, enabled: bool) -> None:
            super().__init__()
            self.toolset = toolset
            self.enabled = enabled

    class ToolToggled(Message):
        """One tool switched off or on (the key on a tool)."""

        def __init__(self, tool: str, enabled: bool) -> None:
            super().__init__()
            self.tool = tool
            self.enabled = enabled

    class Hovered(Message):
        """The mouse is on another line (`node` None: on none)."""

        def __init__(self, node: TreeNode | None) -> None:
            super().__init__()
            self.node = node

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Tools", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False
        self._token_sizes: dict[tuple[str, str], str] = {}

    def show_rows(
        self,
        rows: list[dict[str, Any]],
        toolsets: list[dict[str, Any]],
        query: str = "",
        memory: tuple[str, list[Any]] | None = None,
        sizes: dict[tuple[str, str], str] | None = None,
    ) -> int:
        """Rebuild from `rows`, keeping only tools matching `query`; returns how many match.
        `sizes`: each tool's, toolset's and source's size in tokens, said short, by
        (kind, name)."""
        keep, scroll = self._cursor_key(), self.scroll_y
        self._token_sizes = sizes or {}
        needle = query.strip().lower()
        matching = [r for r in rows if not needle or needle in _haystack(r)]
        enabled = {t["name"]: t["enabled"] for t in toolsets}
        grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for row in matching:
            grouped.setdefault(row["source"], {}).setdefault(row["toolset"], []).append(row)
        self.clear()
        budget = MAX_LEAVES
        for source in ("builtin", "mcp", "plugin"):
            sets = grouped.get(source, {})
            count = sum(len(v) for v in sets.values())
            node = self.root.add(
                Text.assemble(f"{SOURCE_LABELS[source]} ({count})", self._tokens("source", source)),
                {"kind": "source", "name": source},
            )
            if not sets:
                empty = "no match" if needle else EMPTY[source]
                node.add_leaf(Text(empty, style="dim italic"), {"kind": "empty", "name": source})
            for toolset, items in sorted(sets.items()):
                opened = len(items) <= budget
                budget -= len(items) if opened else 0
                self._add_toolset(node, toolset, items, enabled.get(toolset, True), opened)
            node.expand()
        if memory is not None:
            self._add_memory(memory, needle)
        self._restore_cursor(keep)
        self.scroll_to(y=scroll, animate=False, immediate=True)
        return len(matching)

    def _add_memory(self, memory: tuple[str, list[Any]], needle: str) -> None:
        """The active memory provider's tools: routed to it by the agent, not in the registry."""
        provider, tools = memory
        shown = [t for t in tools if not needle or needle in f"{t.name} {t.description}".lower()]
        node = self.root.add(
            Text.assemble(f"Memory: {provider} ({len(shown)})", self._tokens("source", "memory")),
            {"kind": "source", "name": "memory"},
        )
        for tool in shown:
            mark = ("✔ ", "green") if tool.available else ("✖ ", "red")
            why = f"  {tool.reason}" if tool.reason else ""
            label = Text.assemble(mark, tool.name, self._tokens("tool", tool.name), (why, "dim"))
            node.add_leaf(label, {"kind": "memory", "name": tool.name})
        node.expand()

    def _add_toolset(
        self, parent: TreeNode, toolset: str, items: list, on: bool, opened: bool
    ) -> None:
        box = "☑" if on else "☐"
        label = Text.assemble(
            f"{box} {toolset} ", (f"({len(items)})", "dim"), self._tokens("toolset", toolset)
        )
        data = {"kind": "toolset", "name": toolset, "enabled": on, "items": items, "filled": False}
        node = parent.add(label, data, allow_expand=True)
        if opened:
            self._fill(node)
            node.expand()

    def _fill(self, node: TreeNode) -> None:
        """Add a toolset's tool leaves (now, or when it is first expanded)."""
        data = node.data
        if data is None or data.get("filled"):
            return
        data["filled"] = True
        dim = "" if data["enabled"] else "dim"
        for row in data["items"]:
            mark = ("✔ ", "green") if row["available"] else ("✖ ", "red")
            off = row.get("switched_off")
            name = (row["name"], "dim strike" if off else dim)
            label = Text.assemble(mark, name, (" off" if off else "", "yellow"))
            label.append_text(self._tokens("tool", row["name"]))
            node.add_leaf(label, {"kind": "tool", **row})

    def _tokens(self, kind: str, name: str) -> Text:
        size = self._token_sizes.get((kind, name))
        return Text(f" · {size}", style="dim") if size else Text()

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        if event.node.data and event.node.data.get("kind") == "toolset":
            self._fill(event.node)

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

    def _toolset_node(self) -> TreeNode | None:
        node = self.cursor_node
        if node is not None and node.data and node.data.get("kind") == "tool":
            node = node.parent
        return (
            node if node is not None and node.data and node.data.get("kind") == "toolset" else None
        )

    def action_toggle_toolset(self) -> None:
        node = self._toolset_node()
        if node is not None:
            self.post_message(self.ToolsetToggled(node.data["name"], not node.data["enabled"]))

    def watch_hover_line(self, previous: int, line: int) -> None:
        super().watch_hover_line(previous, line)
        self.post_message(self.Hovered(self.get_node_at_line(line) if line >= 0 else None))

    def action_toggle_tool(self) -> None:
        node = self.cursor_node
        data = node.data if node is not None else None
        if data and data.get("kind") == "tool":
            self.post_message(self.ToolToggled(data["name"], bool(data.get("switched_off"))))

    def action_expand(self) -> None:
        if self.cursor_node is not None:
            self.cursor_node.expand()

    def action_collapse(self) -> None:
        node = self.cursor_node
        if node is not None and (node.is_expanded and node.children):
            node.collapse()
        elif node is not None and node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected) -> None:
        """Enter or a click: a toolset toggles, a source folds."""
        data = event.node.data or {}
        if data.get("kind") == "toolset":
            event.stop()
            self.post_message(self.ToolsetToggled(data["name"], not data["enabled"]))
        elif data.get("kind") == "source":
            event.node.toggle()


def _haystack(row: dict[str, Any]) -> str:
    """What the filter matches against, lowercased once per row (rows are rebuilt on change)."""
    text = row.get("_search")
    if text is None:
        text = row["_search"] = f"{row['name']}\0{row['toolset']}\0{row['owner']}".lower()
    return text
