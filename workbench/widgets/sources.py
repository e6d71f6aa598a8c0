"""MCP servers and plugins: their state, what went wrong, and the actions on them."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

STATE_STYLE = {
    "ready": "green",
    "loaded": "green",
    "disabled": "dim",
    "starting": "yellow",
    "reconnecting": "yellow",
    "parked": "red",
    "failed": "red",
    "invalid": "red",
    "shadowed": "dim",
    "not loaded": "dim",
}
NO_SERVERS = (
    "No MCP servers configured. Add them under mcp_servers in config.yaml (see the README)."
)
NO_PLUGINS = (
    "No plugins found. Put directory plugins in $HERMES_HOME/plugins/ or install a pip plugin."
)


class SourcesPanel(VerticalScroll):
    DEFAULT_CSS = """
    SourcesPanel {
        padding: 0 1;
    }

    SourcesPanel .sources-heading {
        margin-top: 1;
    }

    SourcesPanel DataTable {
        height: auto;
        max-height: 12;
    }

    SourcesPanel .source-detail {
        margin-top: 1;
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("r", "restart_server", "Restart server", id="sources.restart"),
        Binding("e", "enable_plugin", "Enable plugin", id="sources.enable"),
        Binding("x", "disable_plugin", "Disable plugin", id="sources.disable"),
        Binding("l", "reload_plugin", "Reload plugin", id="sources.reload"),
    ]

    class Action(Message):
        """Asks the screen to act on a source: restart, enable, disable or reload."""

        def __init__(self, action: str, name: str) -> None:
            super().__init__()
            self.action = action
            self.name = name

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._servers: list[Any] = []
        self._plugins: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("MCP servers", style="bold"), classes="sources-heading")
        yield Static(Text(NO_SERVERS, style="dim italic"), id="servers-empty")
        yield DataTable(id="servers", cursor_type="row", zebra_stripes=True)
        yield Static(Text("Plugins", style="bold"), classes="sources-heading")
        yield Static(Text(NO_PLUGINS, style="dim italic"), id="plugins-empty")
        yield DataTable(id="plugins", cursor_type="row", zebra_stripes=True)
        yield Static("", id="source-detail", classes="source-detail")

    def on_mount(self) -> None:
        self.query_one("#servers", DataTable).add_columns(
            "server", "state", "tools", "transport", "problem"
        )
        self.query_one("#plugins", DataTable).add_columns(
            "plugin", "source", "state", "tools", "problem"
        )

    def show(self, servers: list[Any], plugins: list[Any]) -> None:
        self._servers, self._plugins = servers, plugins
        self._fill(
            "#servers",
            "#servers-empty",
            [
                (s.name, _state(s.state), str(s.tools), s.transport, _short(s.error))
                for s in servers
            ],
            [s.name for s in servers],
        )
        self._fill(
            "#plugins",
            "#plugins-empty",
            [
                (
                    p.key,
                    p.manifest.source,
                    _state(p.status),
                    str(len(p.tools)),
                    _short(p.error or "; ".join(p.manifest.problems)),
                )
                for p in plugins
            ],
            [p.key for p in plugins],
        )

    def _fill(self, table_id: str, empty_id: str, rows: list[tuple], keys: list[str]) -> None:
        table = self.query_one(table_id, DataTable)
        cursor = table.cursor_row
        table.clear()
        for row, key in zip(rows, keys, strict=True):
            table.add_row(*row, key=key)
        table.display = bool(rows)
        self.query_one(empty_id, Static).display = not rows
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key else None
        detail = self.query_one("#source-detail", Static)
        if event.data_table.id == "servers":
            server = next((s for s in self._servers if s.name == key), None)
            if server is not None:
                lines = [f"{server.name}: {server.state}", server.error, *server.warnings]
                lines += [f"stderr: {line}" for line in server.stderr_tail[-8:]]
                lines += [f"refused {n}: {why}" for n, why in server.refused]
                detail.update(Text("\n".join(line for line in lines if line)))
        else:
            plugin = next((p for p in self._plugins if p.key == key), None)
            if plugin is not None:
                detail.update(Text(_plugin_detail(plugin)))

    def _selected(self, table_id: str) -> str | None:
        table = self.query_one(table_id, DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def action_restart_server(self) -> None:
        if (name := self._selected("#servers")) is not None:
            self.post_message(self.Action("restart", name))

    def action_enable_plugin(self) -> None:
        if (name := self._selected("#plugins")) is not None:
            self.post_message(self.Action("enable", name))

    def action_disable_plugin(self) -> None:
        if (name := self._selected("#plugins")) is not None:
            self.post_message(self.Action("disable", name))

    def action_reload_plugin(self) -> None:
        if (name := self._selected("#plugins")) is not None:
            self.post_message(self.Action("reload", name))


def _state(state: str) -> Text:
    return Text(state, style=STATE_STYLE.get(state, ""))


def _short(text: str, limit: int = 60) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plugin_detail(plugin: Any) -> str:
    m = plugin.manifest
    lines = [
        f"{plugin.key} {m.version} ({m.source}: {m.path or m.entry_point})",
        m.description,
        f"state: {plugin.status}" + (f" — {plugin.last_change}" if plugin.last_change else ""),
    ]
    for label, values in (
        ("tools", plugin.tools),
        ("hooks", plugin.hooks),
        ("middleware", plugin.middleware),
        ("commands", plugin.commands),
        ("CLI commands", plugin.cli_commands),
        ("skills", plugin.skills),
        ("other", plugin.other),
    ):
        if values:
            lines.append(f"{label}: {', '.join(values)}")
    lines += [f"refused {n}: {why}" for n, why in plugin.refused]
    lines += [*m.problems, *plugin.warnings]
    if plugin.traceback:
        lines.append(plugin.traceback)
    return "\n".join(line for line in lines if line)
