"""The tools tree: source → toolset → tool, with counts, a checkbox per toolset, a mark per tool,
and each one's size in tokens (what its definitions cost on every request).

The tree keeps the cursor on the same item and its scroll position when it is rebuilt (a
plugin reloaded, a server's tools changed, the filter narrowed), and is rebuilt only when what
it shows changes: with thousands of tools, a keystroke in the filter is on screen in a frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text, TextType
from textual import on
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

SOURCE_LABELS = {
    "builtin": "Built-in",
    "mcp": "MCP servers",
    "plugin": "Plugins",
    "agent": "Agent",
    "skills": "Skills",
}
SKILLS = "skills"  # Hermes's skills: what skill_view loads, each with its size
AGENT = "agent"  # the agent's own toolsets (todo, memory, ...): the session runs their tools
MEMORY = "memory"  # the toolset of the active memory provider's tools
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
        Binding(
            "d", "toggle_deferred", "Defer/send in full", id="tools.toggle_deferred", show=False
        ),  # said in the lower border, with what it would change
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

    class DeferToggled(Message):
        """One tool moved between sent in full and deferred behind tool_search (the key on
        a tool); which way is the screen's to say, from the tool's state."""

        def __init__(self, tool: str) -> None:
            super().__init__()
            self.tool = tool

    class Hovered(Message):
        """The mouse is on another line (`node` None: on none)."""

        def __init__(self, node: TreeNode | None) -> None:
            super().__init__()
            self.node = node

    def __init__(self, **kwargs: Any) -> None:
        # Before Tree's own set-up, which may already invalidate and draw.
        self._rebuilding = False  # nodes are being added: the tree is invalidated at the end
        self._pass_style: Style | None = None  # the widget's style, while its lines are drawn
        self._token_sizes: dict[tuple[str, str], str] = {}
        self._view: _View | None = None  # what the tree shows now
        self._labels: dict[tuple[Any, ...], Text] = {}  # for the rows and sizes shown
        super().__init__("Tools", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False

    def show_rows(
        self,
        rows: list[dict[str, Any]],
        toolsets: list[dict[str, Any]],
        query: str = "",
        memory: tuple[str, list[Any]] | None = None,
        sizes: dict[tuple[str, str], str] | None = None,
        skills: list[dict[str, Any]] | None = None,
    ) -> int:
        """Show the tools of `rows` matching `query`; returns how many match.
        `sizes`: each tool's, toolset's and source's size in tokens, said short, by
        (kind, name). The tree is rebuilt only when what it shows changes: most keystrokes
        in the filter narrow a word the same tools match."""
        needle = query.strip().lower()
        matching = [r for r in rows if not needle or needle in _haystack(r)]
        tools = memory[1] if memory is not None else []
        view = _View(
            rows,
            toolsets,
            memory,
            sizes,
            bool(needle),
            matching,
            [t for t in tools if not needle or needle in f"{t.name} {t.description}".lower()],
            _agent_leaves(toolsets, needle),
            skills,
            [k for k in skills or [] if not needle or needle in str(k["name"]).lower()],
        )
        if not view.same_as(self._view):
            if not view.same_sources(self._view):
                self._labels.clear()  # made from the rows and sizes that were shown
            self._view = view
            self._rebuild(view)
        return len(matching)

    def _rebuild(self, view: _View) -> None:
        """Every node again from `view`, keeping the cursor's item and the scroll position."""
        keep, scroll = self._cursor_key(), self.scroll_y
        self._token_sizes = view.sizes or {}
        grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for row in view.matching:
            grouped.setdefault(row["source"], {}).setdefault(row["toolset"], []).append(row)
        enabled = {t["name"]: t["enabled"] for t in view.toolsets}
        self.clear()
        self._rebuilding = True
        try:
            budget = MAX_LEAVES
            for source in ("builtin", "mcp", "plugin"):
                sets = grouped.get(source, {})
                node = self._add_source(source, sum(len(v) for v in sets.values()))
                if not sets:
                    empty = "no match" if view.filtered else EMPTY[source]
                    label = Text(empty, style="dim italic")
                    node.add_leaf(label, {"kind": "empty", "name": source})
                for toolset, items in sorted(sets.items()):
                    opened = len(items) <= budget
                    budget -= len(items) if opened else 0
                    self._add_toolset(node, toolset, items, enabled.get(toolset, True), opened)
                node.expand()
            self._add_agent(view, enabled)
            self._add_skills(view)
        finally:
            self._rebuilding = False
        self._invalidate()
        self._restore_cursor(keep)
        self.scroll_to(y=scroll, animate=False, immediate=True)

    def _add_source(self, source: str, count: int) -> TreeNode:
        label = self._label(("source", source, count), self._source_label, source, count)
        return self.root.add(label, {"kind": "source", "name": source})

    def _source_label(self, source: str, count: int) -> Text:
        return Text.assemble(f"{SOURCE_LABELS[source]} ({count})", self._tokens("source", source))

    def _add_agent(self, view: _View, enabled: dict[str, bool]) -> None:
        """The agent's own toolsets, each with its checkbox: their tools are the session's
        (todo, clarify, ...) and the active memory provider's, not the registry's."""
        shown = dict(view.agent_shown)
        if view.memory_tools is not None:
            shown[MEMORY] = [_memory_leaf(t) for t in view.memory_shown]
        if not shown:
            return
        count = sum(map(len, shown.values()))
        node = self._add_source(AGENT, count)
        provider = view.memory_tools[0] if view.memory_tools is not None else ""
        for toolset, items in sorted(shown.items()):
            title = f"{toolset}: {provider}" if toolset == MEMORY and provider else toolset
            on = enabled.get(toolset, True)
            self._add_toolset(node, toolset, items, on, True, title=title, leaf=AGENT)
        node.expand()

    def _add_skills(self, view: _View) -> None:
        """Hermes's skills ($HERMES_HOME/skills, skills.external_dirs), each with the size
        of its SKILL.md in tokens, or why it is not loaded (a link out, a file too large)."""
        if not view.skills:
            return
        node = self.root.add(
            Text(f"{SOURCE_LABELS[SKILLS]} ({len(view.skills_shown)})"),
            {"kind": "source", "name": SKILLS},
        )
        for skill in view.skills_shown:
            node.add_leaf(self._skill_label(skill), {"kind": "skill", **skill})
        if not view.skills_shown:
            node.add_leaf(Text("no match", style="dim italic"), {"kind": "empty", "name": SKILLS})
        node.expand()

    def _skill_label(self, skill: dict[str, Any]) -> Text:
        name = f"{skill['category']}/{skill['name']}" if skill.get("category") else skill["name"]
        if skill.get("problem"):
            return Text.assemble(("✖ ", "red"), (name, "dim"), ("  not loaded", "yellow"))
        if not skill.get("platform_ok", True):
            return Text.assemble(("✖ ", "red"), (name, "dim"), ("  not for this platform", "dim"))
        size = self._token_sizes.get(("skill", skill["key"]))
        tokens = Text(f" · {size} tok", style="dim") if size else Text()
        return Text.assemble(("✔ ", "green"), name, tokens)

    def _add_toolset(
        self,
        parent: TreeNode,
        toolset: str,
        items: list,
        on: bool,
        opened: bool,
        *,
        title: str = "",
        leaf: str = "tool",
    ) -> None:
        """`leaf`: the kind of its tools' nodes ("tool": the registry's, which run from the
        form and switch one by one; AGENT: the agent's own, which switch with the toolset)."""
        count = len(items)
        key = ("toolset", toolset, count)
        label = self._label(key, self._toolset_label, toolset, count, on, title or toolset)
        data = {
            "kind": "toolset",
            "name": toolset,
            "enabled": on,
            "items": items,
            "filled": False,
            "leaf": leaf,
        }
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
        for row in data["items"]:
            label = self._label(("tool", row["name"]), self._tool_label, row, data["enabled"])
            node.add_leaf(label, {"kind": data.get("leaf", "tool"), **row})

    def _toolset_label(self, toolset: str, count: int, on: bool, title: str) -> Text:
        box = "☑" if on else "☐"
        return Text.assemble(
            f"{box} {title} ", (f"({count})", "dim"), self._tokens("toolset", toolset)
        )

    def _tool_label(self, row: dict[str, Any], toolset_on: bool) -> Text:
        mark = ("✔ ", "green") if row["available"] else ("✖ ", "red")
        off = row.get("switched_off")
        name = (row["name"], "dim strike" if off else "" if toolset_on else "dim")
        label = Text.assemble(mark, name, (" off" if off else "", "yellow"))
        label.append_text(self._tokens("tool", row["name"]))
        if row.get("why"):  # a memory provider's tool says here why it cannot run
            label.append(f"  {row['why']}", style="dim")
        return label

    def _label(self, key: tuple[Any, ...], make: Callable[..., Text], *args: Any) -> Text:
        """The label for `key` (kind, name and count), made once for the rows and sizes
        shown: a keystroke that changes the matches takes it again (Tree copies a label to
        draw it and never changes it)."""
        label = self._labels.get(key)
        if label is None:
            label = self._labels[key] = make(*args)
        return label

    def _tokens(self, kind: str, name: str) -> Text:
        size = self._token_sizes.get((kind, name))
        return Text(f" · {size}", style="dim") if size else Text()

    # -- drawing: the filter rebuilds the tree on a keystroke, and each line is drawn again --

    def process_label(self, label: TextType) -> Text:
        """Labels made here are one line of Text already: kept as they are (Tree cuts every
        label to its first line, a copy per node)."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[dict[str, Any]]) -> int:
        """The fold icon and the label, counted (Tree draws each line's label to measure it,
        every line on every rebuild)."""
        icon = ""
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
        return cell_len(icon) + self.process_label(node.label).cell_len

    def _invalidate(self) -> None:
        # Tree invalidates itself (its lines, its layout, a refresh) on every node added or
        # expanded; a rebuild adds a hundred and invalidates once, when they are all in.
        if not self._rebuilding:
            super()._invalidate()

    def render_lines(self, crop: Region) -> list[Strip]:
        # Tree works out the widget's style (every ancestor's styles, merged) once per line
        # drawn; it is the same for the whole pass.
        self._pass_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    @property
    def rich_style(self) -> Style:
        return self._pass_style if self._pass_style is not None else super().rich_style

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
        if node is not None and node.data and node.data.get("kind") in ("tool", AGENT):
            node = node.parent
        return (
            node if node is not None and node.data and node.data.get("kind") == "toolset" else None
        )

    def action_toggle_toolset(self) -> None:
        node = self._toolset_node()
        if node is not None and node.data is not None:
            self.post_message(self.ToolsetToggled(node.data["name"], not node.data["enabled"]))

    def watch_hover_line(self, previous: int, line: int) -> None:
        super().watch_hover_line(previous, line)
        self.post_message(self.Hovered(self.get_node_at_line(line) if line >= 0 else None))

    def action_toggle_tool(self) -> None:
        node = self.cursor_node
        data = node.data if node is not None else None
        if data and data.get("kind") in ("tool", AGENT):  # the agent's own: told how instead
            self.post_message(self.ToolToggled(data["name"], bool(data.get("switched_off"))))

    def action_toggle_deferred(self) -> None:
        node = self.cursor_node
        data = node.data if node is not None else None
        if data and data.get("kind") in ("tool", AGENT):
            self.post_message(self.DeferToggled(data["name"]))

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


@dataclass(frozen=True, eq=False)
class _View:
    """What the tree was built from. The same rows, toolsets, memory and sizes (the controller
    makes new ones whenever one of them changes) with the same matches give the same tree,
    node for node."""

    rows: list[dict[str, Any]]
    toolsets: list[dict[str, Any]]
    memory_tools: tuple[str, list[Any]] | None  # the memory provider and its tools
    sizes: dict[tuple[str, str], str] | None
    filtered: bool  # an empty source says "no match", not what it lacks
    matching: list[dict[str, Any]]  # the matching rows, in order
    memory_shown: list[Any]  # the memory provider's matching tools
    agent_shown: dict[str, list[dict[str, Any]]]  # the agent's toolsets: their matching tools
    skills: list[dict[str, Any]] | None = None  # Hermes's skills (controller.skill_rows)
    skills_shown: list[dict[str, Any]] = field(default_factory=list)  # those matching

    def same_sources(self, other: _View | None) -> bool:
        """The same objects (not equal ones: comparing every row would cost what a rebuild
        saves)."""
        return (
            other is not None
            and self.rows is other.rows
            and self.toolsets is other.toolsets
            and self.memory_tools is other.memory_tools
            and self.sizes is other.sizes
            and self.skills is other.skills
        )

    def same_as(self, other: _View | None) -> bool:
        return (
            other is not None
            and self.same_sources(other)
            and self.filtered == other.filtered
            and self.matching == other.matching  # the same dicts: compared by identity first
            and self.memory_shown == other.memory_shown
            and self.agent_shown == other.agent_shown
            and self.skills_shown == other.skills_shown
        )


def _haystack(row: dict[str, Any]) -> str:
    """What the filter matches against, lowercased once per row (rows are rebuilt on change)."""
    text = row.get("_search")
    if text is None:
        text = row["_search"] = f"{row['name']}\0{row['toolset']}\0{row['owner']}".lower()
    return text


def _agent_leaves(toolsets: list[dict[str, Any]], needle: str) -> dict[str, list[dict[str, Any]]]:
    """The agent's own toolsets but memory (its tools are the provider's, shown apart) →
    their tools matching the filter, as leaves."""
    return {
        row["name"]: [
            {"name": tool, "toolset": row["name"], "available": True, "switched_off": None}
            for tool in row.get("tools", [])
            if not needle or needle in f"{tool}\0{row['name']}"
        ]
        for row in toolsets
        if row.get("source") == AGENT and row["name"] != MEMORY
    }


def _memory_leaf(tool: Any) -> dict[str, Any]:
    """A memory provider's tool as a leaf: available or not, and why."""
    return {
        "name": tool.name,
        "toolset": MEMORY,
        "available": tool.available,
        "why": tool.reason,
        "switched_off": None,
    }
