"""What a server says about itself is shown as plain text: no markup, no control characters."""

from __future__ import annotations

from workbench.core.mcp import catalog as cat
from workbench.core.mcp.server import ServerStatus
from workbench.tui.widgets.sources import catalog_rows, server_info_text, server_log_text

HOSTILE = "[bold red]x[/ \x1b[2J\u202eevil"


def hostile_status() -> ServerStatus:
    info = cat.ServerInfo(HOSTILE, "1[", "2025-11-25", "", {"tools": {"listChanged": True}})
    catalog = cat.Catalog(
        [cat.Resource("x://a", HOSTILE, "", "text/[i]")],
        [cat.Template("x://{a}", HOSTILE)],
        [cat.Prompt(HOSTILE, "", (cat.PromptArgument("[b]", "", True),))],
        {"prompts": HOSTILE},
        listed=True,
    )
    return ServerStatus(
        "s",
        "ready",
        "stdio",
        1,
        info=info,
        catalog=catalog,
        logs=[HOSTILE],
        subscriptions={"x://a": 2},
    )


def test_a_hostile_servers_words_stay_plain_and_visible() -> None:
    status = hostile_status()
    rows = catalog_rows(status)
    assert [key for key, _ in rows] == ["resource:x://a", "template:x://{a}", f"prompt:{HOSTILE}"]
    name = rows[0][1][1]
    assert name.plain == "[bold red]x[/ \\x1b[2J\\u202eevil  ◉ 2 update(s)"
    assert not name.spans  # no style came from the server's text
    assert rows[2][1][2].plain == "[b]*"
    info = server_info_text(status).plain
    assert "[bold red]x[/ \\x1b[2J\\u202eevil 1[  protocol 2025-11-25" in info
    assert "tools (listChanged)" in info
    assert "its prompts could not be listed: [bold red]x[/ \\x1b" in info
    assert "\x1b" not in server_log_text(status).plain


def test_a_plugins_details_show_what_it_printed_and_started_escaped() -> None:
    from pathlib import Path

    from workbench.core import own_output
    from workbench.core.plugins.children import Child
    from workbench.core.plugins.manager import PluginState
    from workbench.core.plugins.sources import PluginManifest
    from workbench.tui.widgets.sources import _plugin_detail

    manifest = PluginManifest("loud-detail", "loud", "user", Path("/p/loud"))
    state = PluginState(manifest, status="loaded")
    state.processes = [Child(4242, 1, f"sleep 600 {HOSTILE}")]  # no such process: ended
    with own_output.speaking(state.key):
        own_output.outputs.add(state.key, f"{HOSTILE}\n")
    try:
        detail = _plugin_detail(state)
    finally:
        own_output.forget(state.key)
    assert "stdout: [bold red]x[/ \\x1b[2J\\u202eevil" in detail
    assert "process 4242: sleep 600 [bold red]x[/ \\x1b[2J\\u202eevil (ended)" in detail
    assert "\x1b" not in detail and "\u202e" not in detail
