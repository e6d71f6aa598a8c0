"""MCP servers and plugins: their state, what went wrong, and the actions on them.

A server's row opens what it offers beside its tools: its info and capabilities, its
resources, resource templates and prompts (Enter opens one; `s` subscribes to a resource),
and its log messages with the tail of its stderr.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from workbench.core.printable import escape

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

    SourcesPanel #server-info {
        margin-top: 1;
    }

    SourcesPanel #catalog {
        max-height: 14;
        margin-top: 1;
    }

    SourcesPanel #server-log {
        margin-top: 1;
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("r", "restart_server", "Restart server", id="sources.restart"),
        Binding("e", "enable_plugin", "Enable plugin", id="sources.enable"),
        Binding("x", "disable_plugin", "Disable plugin", id="sources.disable"),
        Binding("l", "reload_plugin", "Reload plugin", id="sources.reload"),
        Binding("s", "subscribe", "Subscribe to a resource", id="sources.subscribe"),
    ]

    class Action(Message):
        """Asks the screen to act on a source: restart, enable, disable or reload."""

        def __init__(self, action: str, name: str) -> None:
            super().__init__()
            self.action = action
            self.name = name

    class Open(Message):
        """Asks the screen to open a server's resource, template or prompt (or, with
        `subscribe`, to switch its subscription to a resource)."""

        def __init__(self, server: str, kind: str, key: str, subscribe: bool = False) -> None:
            super().__init__()
            self.server, self.kind, self.key, self.subscribe = server, kind, key, subscribe

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._servers: list[Any] = []
        self._plugins: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("MCP servers", style="bold"), classes="sources-heading")
        yield Static(Text(NO_SERVERS, style="dim italic"), id="servers-empty")
        yield DataTable(id="servers", cursor_type="row", zebra_stripes=True)
        yield Static("", id="server-info")
        yield DataTable(id="catalog", cursor_type="row", zebra_stripes=True)
        yield Static("", id="server-log")
        yield Static(Text("Plugins", style="bold"), classes="sources-heading")
        yield Static(Text(NO_PLUGINS, style="dim italic"), id="plugins-empty")
        yield DataTable(id="plugins", cursor_type="row", zebra_stripes=True)
        yield Static("", id="source-detail", classes="source-detail")

    def on_mount(self) -> None:
        self.query_one("#servers", DataTable).add_columns(
            "server", "state", "tools on", "transport", "problem"
        )
        self.query_one("#plugins", DataTable).add_columns(
            "plugin", "source", "state", "tools on", "problem"
        )
        self.query_one("#catalog", DataTable).add_columns("kind", "name", "uri / arguments", "type")
        self.query_one("#catalog", DataTable).display = False
        self._server_key: str | None = None

    def show(
        self,
        servers: list[Any],
        plugins: list[Any],
        sizes: dict[tuple[str, str], str] | None = None,
        switched_on: dict[tuple[str, str], int] | None = None,
    ) -> None:
        """`sizes`: the size in tokens of each server's and plugin's tools switched on, said
        short, and `switched_on` how many of them are, by ("server", name) and ("plugin", key)."""
        self._servers, self._plugins = servers, plugins
        sizes, switched_on = sizes or {}, switched_on or {}

        def tools(kind: str, name: str, count: int) -> str:
            on = switched_on.get((kind, name), count)
            said = str(count) if on == count else f"{on} of {count}"
            size = sizes.get((kind, name)) if on else None
            return f"{said} · {size} tokens" if size else said

        self._fill(
            "#servers",
            "#servers-empty",
            [
                (
                    s.name,
                    _state(s.state),
                    tools("server", s.name, s.tools),
                    s.transport,
                    _short(s.error),
                )
                for s in servers
            ],
            [s.name for s in servers],
        )
        self._show_server(self._selected("#servers"))
        self._fill(
            "#plugins",
            "#plugins-empty",
            [
                (
                    p.key,
                    p.manifest.source,
                    _state(p.status),
                    tools("plugin", p.key, len(p.tools)),
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
        if event.data_table.id == "catalog":
            return
        if event.data_table.id == "servers":
            self._show_server(key)
        else:
            plugin = next((p for p in self._plugins if p.key == key), None)
            if plugin is not None:
                detail.update(Text(_plugin_detail(plugin)))

    def _show_server(self, key: str | None) -> None:
        """The selected server's info, what it offers, its log messages and stderr tail."""
        server = next((s for s in self._servers if s.name == key), None)
        info = self.query_one("#server-info", Static)
        catalog = self.query_one("#catalog", DataTable)
        log = self.query_one("#server-log", Static)
        if server is None:
            info.update("")
            log.update("")
            catalog.display = False
            return
        info.update(server_info_text(server))
        rows = catalog_rows(server)
        if key != self._server_key or [r[0] for r in rows] != self._catalog_keys():
            cursor = catalog.cursor_row if key == self._server_key else 0
            self._server_key = key
            catalog.clear()
            for row_key, cells in rows:
                catalog.add_row(*cells, key=row_key)
            if rows:
                catalog.move_cursor(row=min(cursor, len(rows) - 1))
        else:  # the same rows: only their cells (a subscription's count) change
            for row_key, cells in rows:
                for column, value in zip(catalog.columns, cells, strict=True):
                    catalog.update_cell(row_key, column, value)
        catalog.display = bool(rows)
        log.update(server_log_text(server))

    def _catalog_keys(self) -> list[str]:
        table = self.query_one("#catalog", DataTable)
        return [str(row.key.value) for row in table.ordered_rows]

    def action_open_catalog(self) -> None:
        self._post_catalog(subscribe=False)

    def action_subscribe(self) -> None:
        self._post_catalog(subscribe=True)

    def _post_catalog(self, subscribe: bool) -> None:
        table = self.query_one("#catalog", DataTable)
        if not table.has_focus or not table.row_count or self._server_key is None:
            return
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        kind, _, name = key.partition(":")
        if subscribe and kind != "resource":
            self.app.notify("Only a resource can be subscribed to", severity="warning")
            return
        self.post_message(self.Open(self._server_key, kind, name, subscribe))

    @on(DataTable.RowSelected, "#catalog")
    def _catalog_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_catalog()

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


def _shown(value: Any, style: str = "") -> Text:
    """A server's own words, as plain text: never markup, every control character visible."""
    return Text(escape(str(value or "")), style=style)


def server_info_text(server: Any) -> Text:
    info = server.info
    text = Text()
    if not info.name and not info.protocol:
        text.append(f"{server.name}: {server.state}", "bold")
        return text
    text.append(_shown(f"{info.name} {info.version}".strip(), "bold"))
    text.append(_shown(f"  protocol {info.protocol}\n", "dim"))
    text.append("capabilities  ", "dim")
    shown = ", ".join(_capability(k, v) for k, v in sorted(info.capabilities.items()))
    text.append(_shown(shown or "none"))
    catalog = server.catalog
    if catalog.listed:
        text.append(
            f"\n{server.tools} tools · {len(catalog.resources)} resources · "
            f"{len(catalog.templates)} templates · {len(catalog.prompts)} prompts",
        )
        text.append("  (Enter opens · s subscribes)" if catalog.resources else "", "dim")
    for kind, why in catalog.errors.items():
        text.append(_shown(f"\nits {kind} could not be listed: {why}", "red"))
    return text


def _capability(name: str, value: Any) -> str:
    flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
    return f"{name} ({', '.join(flags)})" if flags else name


def catalog_rows(server: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """(row key, cells) for each resource, template and prompt of the server."""
    catalog, rows = server.catalog, []
    for r in catalog.resources:
        updates = server.subscriptions.get(r.uri)
        mark = "" if updates is None else f"  ◉ {updates} update(s)" if updates else "  ◉"
        cells = (Text("resource", "cyan"), _shown(r.name + mark), _shown(r.uri))
        rows.append((f"resource:{r.uri}", (*cells, _shown(r.mime_type))))
    for t in catalog.templates:
        cells = (Text("template", "magenta"), _shown(t.name), _shown(t.uri_template))
        rows.append((f"template:{t.uri_template}", (*cells, _shown(t.mime_type))))
    for p in catalog.prompts:
        args = ", ".join(a.name + ("*" if a.required else "") for a in p.arguments)
        rows.append(
            (f"prompt:{p.name}", (Text("prompt", "green"), _shown(p.name), _shown(args), Text("")))
        )
    return rows


def server_log_text(server: Any) -> Text:
    lines = [server.error, *server.warnings]
    lines += [f"log: {line}" for line in server.logs[-8:]]
    lines += [f"stderr: {line}" for line in server.stderr_tail[-8:]]
    lines += [f"refused {n}: {why}" for n, why in server.refused]
    return _shown("\n".join(line for line in lines if line))


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
    if plugin.tools:
        lines.append(f"tools: {', '.join(plugin.tools)}")
    if plugin.hooks:  # which of them run here, as `plugins` says it
        lines.append(plugin.hooks_said)
    for label, values in (
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
    lines += [
        f"process {c.pid}: {c.command}" + ("" if c.running else " (ended)")
        for c in plugin.processes
    ]
    lines += [f"stdout: {line}" for line in plugin.output[-8:]]  # never on hermes-tui's
    if plugin.traceback:
        lines.append(plugin.traceback)
    return escape("\n".join(line for line in lines if line))
