"""MCP beyond tools in the workbench, with a pilot and real server processes: a server's
resources, templates and prompts in Sources, its logs, and its questions as modals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import fake_openai
from tests.support.mcp import FIXTURE, SERVER
from tests.support.pilot import loaded, wait_until
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.mcp_asks import ArgumentsScreen, ElicitationScreen, SamplingScreen
from workbench.tui.screens.viewer import ViewerScreen
from workbench.tui.widgets.sources import SourcesPanel
from workbench.tui.widgets.timeline import Timeline


@pytest.fixture
def configured(home: Path):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  cat:\n    command: {SERVER[0]}\n    args: [{SERVER[1]}]\n"
    )
    return home


async def sources(pilot, app):
    """The main screen on its Sources tab, once the server's catalog is listed."""
    screen = await loaded(pilot, app)
    await wait_until(
        pilot,
        lambda: (
            screen.controller.runtime.mcp is not None
            and screen.controller.runtime.mcp.statuses()[0].catalog.listed
        ),
        timeout=40,
    )
    screen.refresh_sources()
    await pilot.press("f3")
    await pilot.pause()
    return screen, screen.query_one(SourcesPanel)


def catalog_keys(panel: SourcesPanel) -> list[str]:
    return [str(row.key.value) for row in panel.query_one("#catalog").ordered_rows]


async def open_row(pilot, panel: SourcesPanel, key: str) -> None:
    table = panel.query_one("#catalog")
    table.focus()
    table.move_cursor(row=catalog_keys(panel).index(key))
    await pilot.pause()
    await pilot.press("enter")


def last_result(app) -> str:
    """What the last call returned (its timeline bar keeps it), "" while it runs."""
    bars = app.timeline_model.bars
    if not bars or bars[-1].end is None:
        return ""
    content = bars[-1].content
    return content if isinstance(content, str) else json.dumps(content)


def viewer_text(app) -> str:
    assert isinstance(app.screen, ViewerScreen)
    return app.screen.path.read_text()


async def test_a_servers_info_resources_templates_and_prompts(configured: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(140, 50)) as pilot:
        _, panel = await sources(pilot, app)
        info = str(panel.query_one("#server-info").render())
        assert "catalog-server 1.2.3  protocol 2025-11-25" in info
        assert "capabilities  prompts, resources, tools" in info
        assert "9 tools · 4 resources · 1 templates · 2 prompts" in info
        assert catalog_keys(panel) == [
            "resource:note://hello",
            "resource:data://config.json",
            "resource:bin://pixel.png",
            "resource:note://counter",
            "template:note://by-name/{name}",
            "prompt:greet",
            "prompt:simple",
        ]
        # a JSON resource opens pretty-printed in the viewer
        await open_row(pilot, panel, "resource:data://config.json")
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        assert viewer_text(app).endswith(
            '{\n  "b": [\n    1,\n    2\n  ],\n  "a": {\n    "nested": true\n  }\n}\n'
        )
        path = app.screen.path
        assert path.is_relative_to(configured / "state" / "mcp")
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ViewerScreen))
        # binary: its size and type
        await open_row(pilot, panel, "resource:bin://pixel.png")
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        assert viewer_text(app).endswith("[binary: 70 bytes, image/png]\n")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ViewerScreen))
        # a template asks for its variable, then reads the URI it makes
        await open_row(pilot, panel, "template:note://by-name/{name}")
        await wait_until(pilot, lambda: isinstance(app.screen, ArgumentsScreen))
        await pilot.pause()
        await pilot.press("ctrl+r")  # nothing typed: it says what is needed
        await wait_until(
            pilot, lambda: "name" in str(app.screen.query_one("#form-status").render())
        )
        assert isinstance(app.screen, ArgumentsScreen)
        await pilot.press(*"a b")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        assert viewer_text(app) == ("# note://by-name/a%20b  (MCP server cat)\na note called a b\n")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ViewerScreen))
        # a prompt with arguments: its form, then its messages
        await open_row(pilot, panel, "prompt:greet")
        await wait_until(pilot, lambda: isinstance(app.screen, ArgumentsScreen))
        await pilot.pause()
        await pilot.press(*"Ada")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))
        assert viewer_text(app).endswith("[user]\nSay hello to Ada in a plain way.\n")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ViewerScreen))
        # subscribing needs the capability: said, not crashed
        table = panel.query_one("#catalog")
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("s")
        await wait_until(
            pilot,
            lambda: any("does not offer subscriptions" in n.message for n in app._notifications),
        )
        # a server gone since the row was shown (config reloaded): said, the app runs on
        app.mcp_ui.toggle_subscription("gone", "note://hello")
        await wait_until(
            pilot,
            lambda: any("no MCP server named 'gone'" in n.message for n in app._notifications),
        )
        assert app.is_running
        # a log message shows live under the server
        panel.screen.controller.runtime.registry.dispatch("mcp__cat__bump", {})
        await wait_until(
            pilot,
            lambda: "info counter: counter now 1" in str(panel.query_one("#server-log").render()),
            timeout=20,
        )


async def test_elicitation_becomes_a_form(configured: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(140, 50)) as pilot:
        screen, _ = await sources(pilot, app)

        async def ask() -> None:
            screen.run_tool("mcp__cat__ask", {"question": "What is your name?"})
            await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen))
            await pilot.pause()

        await ask()
        modal = app.screen
        assert "What is your name?" in str(modal.query_one("#elicit-message").render())
        await pilot.press("ctrl+r")  # `answer` is required: said in the form, nothing sent
        await pilot.pause()
        assert isinstance(app.screen, ElicitationScreen)
        assert "needed: answer" in str(modal.query_one("#form-status").render())
        modal.query_one("#arg-answer").value = "Ada"
        modal.query_one("#arg-count").value = "3"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "accept" in last_result(app))
        answer = json.loads(json.loads(last_result(app))["result"])
        assert answer == {
            "action": "accept",
            "content": {"answer": "Ada", "sure": False, "count": 3},
        }
        await ask()
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: "decline" in last_result(app))
        await ask()
        await pilot.press("escape")
        await wait_until(pilot, lambda: "cancel" in last_result(app))


async def test_sampling_is_shown_denied_by_default_then_approved(configured: Path) -> None:
    fake = fake_openai.FakeOpenAI().start()
    fake.add(fake_openai.Reply("text", text="hello back"))
    app = WorkbenchApp(
        model_flags={"model": "test-model", "base_url": fake.url, "api_key": fake.api_key}
    )
    try:
        async with app.run_test(size=(140, 50)) as pilot:
            screen, _ = await sources(pilot, app)

            async def sample() -> SamplingScreen:
                screen.run_tool("mcp__cat__sample", {"prompt": "Say hi"})
                await wait_until(pilot, lambda: isinstance(app.screen, SamplingScreen))
                await pilot.pause()
                return app.screen

            modal = await sample()
            shown = str(modal.query_one("#sampling-request Static").render())
            assert "system prompt  You are terse." in shown
            assert "max tokens     64" in shown and "[user]\nSay hi" in shown
            await pilot.press("enter")  # Deny has the focus
            await wait_until(pilot, lambda: "the user denied it" in last_result(app))
            await sample()
            await pilot.press("x")  # any other key refuses too
            await wait_until(pilot, lambda: not isinstance(app.screen, SamplingScreen))
            assert fake.requests == []
            await sample()
            await pilot.press("a")
            await wait_until(pilot, lambda: bool(last_result(app)))
            assert "test-model: hello back" in last_result(app)
            assert fake.requests[0]["max_tokens"] == 64
    finally:
        fake.stop()


async def test_progress_shows_on_the_timeline_bar(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"mcp_servers:\n  fx:\n    command: {sys.executable}\n    args: [{FIXTURE[1]}]\n"
    )
    app = WorkbenchApp()
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(pilot, app)
        # the runtime's own registry: the workbench never registers into the module's
        await wait_until(
            pilot,
            lambda: screen.controller.runtime.registry.get_entry("mcp__fx__slow") is not None,
            timeout=40,
        )
        screen.run_tool("mcp__fx__slow", {"seconds": 3})
        seen: list[str] = []

        def progressed() -> bool:
            bar = next((b for b in app.timeline_model.bars if b.name == "mcp__fx__slow"), None)
            if bar is not None and bar.progress:
                seen.append(bar.title)
            return bool(seen)

        await wait_until(pilot, progressed, timeout=20)
        assert "mcp__fx__slow" in seen[0] and "step" in seen[0] and "/" in seen[0]
        await pilot.press("f6")  # the session screen's timeline draws it
        await pilot.pause()
        assert isinstance(app.screen.query_one(Timeline), Timeline)
        await wait_until(
            pilot,
            lambda: app.timeline_model.bars[-1].end is not None,
            timeout=30,
        )
        assert "[" not in app.timeline_model.bars[-1].title  # finished: no progress shown
