"""Asking a person during a session, with a pilot: an approval, an MCP server's question and
the agent's `clarify` each reach the app as an `Asked` event on the core's one stream, open
their modal (one at a time), mark the waiting call's timeline bar, and the answer goes back
to the core through the asker."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.mcp import SERVER
from tests.support.pilot import loaded, open_session, send, wait_until
from workbench.core.asking import Asked, AskKind, Settled
from workbench.core.events import CoreEvent
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.screens.asks import ClarifyScreen
from workbench.tui.screens.mcp_asks import ElicitationScreen
from workbench.tui.screens.session import SessionScreen
from workbench.tui.widgets.timeline import Bar

QUIET = "terminal:\n  sandbox: false\ncheckpoints:\n  enabled: false\ntools:\n  tool_search:\n    enabled: false\n"  # the gate alone, every tool sent in full


@pytest.fixture
def server(fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch) -> FakeOpenAI:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config() + QUIET)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("alpha\n")
    return fake


class Recording(WorkbenchApp):
    """The app, keeping the ask events it was handed on the core's stream."""

    def __init__(self) -> None:
        super().__init__()
        self.asks_seen: list[Asked | Settled] = []

    def _deliver(self, event: CoreEvent) -> None:
        if isinstance(event, Asked | Settled):
            self.asks_seen.append(event)
        super()._deliver(event)


async def ask(pilot, app, prompt: str) -> SessionScreen:
    """The session opened and `prompt` sent."""
    screen = await open_session(pilot, app)
    await send(pilot, screen, prompt)
    return screen


def bar(app, name: str) -> Bar:
    (found,) = [b for b in app.timeline_model.bars if b.name == name]
    return found


async def test_an_approval_shows_its_modal_marks_the_bar_and_the_answer_runs_the_call(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.add(tools(("terminal", {"command": "rm a.txt"})), text("Deleted."))
    app = Recording()
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot, app, "delete a.txt")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20)
        assert app.screen.request.command == "rm a.txt"
        (asked,) = app.asks_seen  # the ask came on the one stream, with its call
        assert asked.ask.kind is AskKind.APPROVAL and asked.ask.call_id
        await wait_until(pilot, lambda: app.timeline_model.by_id.get(asked.ask.call_id))
        waiting = bar(app, "terminal")
        assert waiting.waiting == "waiting for approval" and "[waiting for approval]" in (
            waiting.title
        )
        assert (tmp_path / "a.txt").exists()
        await pilot.press("o")  # once
        await wait_until(pilot, lambda: waiting.status == "ok", timeout=20)
        assert not (tmp_path / "a.txt").exists()  # the answer reached the core: it ran
        assert waiting.waiting == "" and "waiting" not in waiting.title
        assert [type(e) for e in app.asks_seen] == [Asked, Settled]
        assert app.asks_seen[1].why == "answered"


async def deciding(pilot, app: Recording):
    """The loaded app's broker, the decisions it made by command, and `decide(command)`:
    a terminal command put to it, as the executor does."""
    await loaded(pilot, app)
    await wait_until(pilot, lambda: app.runtime is not None and app.asks is not None)
    broker = app.runtime.broker
    decisions: dict[str, object] = {}

    async def decide(command: str) -> None:
        decisions[command] = await broker.decide("terminal", command, None, reason="test")

    return broker, decisions, decide


async def test_two_approvals_wait_in_turn_one_modal_at_a_time(server: FakeOpenAI) -> None:
    app = Recording()
    async with app.run_test(size=(120, 40)) as pilot:
        broker, decisions, decide = await deciding(pilot, app)
        app.run_worker(decide("rm first"))
        app.run_worker(decide("rm second"))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await wait_until(pilot, lambda: len(broker.pending()) == 2)
        assert app.screen.request.command == "rm first"
        await pilot.press("d")
        await wait_until(pilot, lambda: "rm first" in decisions)
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen) and app.screen.request.command == "rm second"
            ),
        )
        await pilot.press("o")
        await wait_until(pilot, lambda: "rm second" in decisions)
        assert not decisions["rm first"].approved and decisions["rm second"].approved


async def test_clarify_asks_in_a_modal_and_the_answer_goes_to_the_model(
    server: FakeOpenAI,
) -> None:
    server.add(
        tools(("clarify", {"question": "Which colour?", "choices": ["red", "blue"]})),
        text("Blue it is."),
    )
    app = Recording()
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot, app, "paint it")
        await wait_until(pilot, lambda: isinstance(app.screen, ClarifyScreen), timeout=20)
        assert "Which colour?" in str(app.screen.query_one("#clarify-question").render())
        (asked,) = app.asks_seen
        assert asked.ask.kind is AskKind.CLARIFY
        await wait_until(pilot, lambda: app.timeline_model.by_id.get(asked.ask.call_id))
        assert bar(app, "clarify").waiting == "waiting for your answer"
        await pilot.press("down", "enter")  # the second choice
        await wait_until(pilot, lambda: len(server.requests) == 2, timeout=20)
        (answer,) = tool_messages(server.requests[1])
        assert json.loads(answer["content"]) == {"answer": "blue"}
        await wait_until(pilot, lambda: bar(app, "clarify").status == "ok")
        assert bar(app, "clarify").waiting == ""


async def test_an_mcp_servers_question_during_a_session_is_a_form_and_the_answer_goes_back(
    server: FakeOpenAI, home: Path
) -> None:
    (home / "config.yaml").write_text(
        server.model_config()
        + QUIET
        + f"mcp_servers:\n  cat:\n    command: {SERVER[0]}\n    args: [{SERVER[1]}]\n"
    )
    server.add(tools(("mcp__cat__ask", {"question": "What is your name?"})), text("Hello."))
    app = Recording()
    async with app.run_test(size=(140, 50)) as pilot:
        await loaded(pilot, app)
        await wait_until(
            pilot,
            lambda: app.runtime.mcp is not None and app.runtime.mcp.statuses()[0].state == "ready",
            timeout=40,
        )
        await ask(pilot, app, "ask my name")
        await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen), timeout=30)
        modal = app.screen
        assert "What is your name?" in str(modal.query_one("#elicit-message").render())
        (asked,) = app.asks_seen
        assert asked.ask.kind is AskKind.ELICITATION and asked.ask.call_id
        await wait_until(pilot, lambda: app.timeline_model.by_id.get(asked.ask.call_id))
        assert bar(app, "mcp__cat__ask").waiting == "waiting for your answer"
        modal.query_one("#arg-answer").value = "Ada"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: len(server.requests) == 2, timeout=30)
        (result,) = tool_messages(server.requests[1])
        assert "Ada" in result["content"] and "accept" in result["content"]
        assert bar(app, "mcp__cat__ask").waiting == ""


async def test_quitting_with_a_question_open_fails_it_closed(server: FakeOpenAI) -> None:
    """The app goes away while an approval waits (asked from another thread): it is denied
    at once, not at its deadline."""
    app = Recording()
    decided: list = []
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.asks is not None)
        broker = app.runtime.broker
        asking = threading.Thread(
            target=lambda: decided.append(
                asyncio.run(broker.decide("terminal", "rm x", None, reason="test"))
            )
        )
        asking.start()
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
    asking.join(10)
    (decision,) = decided
    assert not decision.approved
    assert decision.reason == "denied: the front end that could answer went away"


async def test_an_ask_settled_under_another_screen_closes_its_modal_and_the_next_is_asked(
    server: FakeOpenAI,
) -> None:
    """The user opened the command palette over an approval's modal (a modal's keys hide the
    app's F1, not ctrl+p; a palette command may open yet another screen); the ask settles
    elsewhere: its modal closes where it is, the palette stays, the next ask is shown."""
    from textual.command import CommandPalette

    app = Recording()
    async with app.run_test(size=(120, 40)) as pilot:
        broker, decisions, decide = await deciding(pilot, app)
        first = app.run_worker(decide("rm first"))
        app.run_worker(decide("rm second"))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await wait_until(pilot, lambda: len(broker.pending()) == 2)
        asked = app.screen
        await pilot.press("ctrl+p")  # the command palette, over the modal
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        palette = app.screen
        first.cancel()  # the call that asked is cancelled: the ask settles elsewhere
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen) and app.screen.request.command == "rm second"
            ),
        )
        assert asked not in app.screen_stack  # closed where it was, under the palette
        assert app.screen_stack[-2] is palette  # which stays open
        await pilot.press("o")
        await wait_until(pilot, lambda: "rm second" in decisions)
        assert decisions["rm second"].approved and "rm first" not in decisions
        await wait_until(pilot, lambda: app.screen is palette)
        assert [s for s in app.screen_stack if isinstance(s, ApprovalScreen)] == []


async def test_an_ask_whose_deadline_passes_under_another_screen_closes_only_its_modal(
    server: FakeOpenAI,
) -> None:
    """At its deadline a covered modal does not close the screen over it (Textual's
    dismiss closes the top one): the ask settles, and its modal is taken out."""
    from textual.command import CommandPalette

    app = Recording()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.runtime is not None and app.asks is not None)
        broker = app.runtime.broker
        broker.timeout = 2.0  # seconds to answer: passed while the palette is open
        decisions: list[object] = []

        async def decide() -> None:
            decisions.append(await broker.decide("terminal", "rm x", None, reason="test"))

        app.run_worker(decide())
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        palette = app.screen
        await wait_until(pilot, lambda: decisions)
        await wait_until(
            pilot, lambda: not [s for s in app.screen_stack if isinstance(s, ApprovalScreen)]
        )
        assert app.screen is palette and not decisions[0].approved
        assert app.asks_seen[-1].why == "no answer in time"
