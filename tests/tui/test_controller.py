"""The controller owns the chat session, the agent's thread and the one executor; the app gets
every core event on one stream and is the one writer of the timeline. Pilots against the real
app and a scripted OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.pilot import open_session, send, wait_until
from workbench.core.events import RoundStarted, TextDelta, ToolCallFinished, ToolCallStarted
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.session import SessionScreen
from workbench.tui.widgets.chat import PromptArea, ToolCard
from workbench.tui.widgets.timeline import Timeline

BIG = 10_000  # lines of `seq`: a result far over any budget, so it is spilled to a file


@pytest.fixture
def server(fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch) -> FakeOpenAI:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        fake.model_config() + "checkpoints:\n  enabled: false\nterminal:\n  sandbox: false\n"
    )
    monkeypatch.chdir(tmp_path)
    return fake


def recording(app: WorkbenchApp) -> list[object]:
    """Every event the controller hands on (its one stream), in order; set before the core
    loads, so the registry, the executor and the session all get this callback."""
    seen: list[object] = []
    deliver = app.controller.deliver

    def record(event: object) -> None:
        seen.append(event)
        deliver(event)

    app.controller.deliver = record
    return seen


def turn_line(screen: SessionScreen) -> str:
    return str(screen.query_one("#turn-line").content)


async def test_a_message_goes_through_the_controller_and_its_events_through_the_app(
    server, tmp_path: Path
) -> None:
    server.add(tools(("write_file", {"path": "a.txt", "content": "alpha\n"})), text("Written."))
    app = WorkbenchApp()
    seen = recording(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "write a")
        await wait_until(pilot, lambda: "answered" in turn_line(screen), 10)
        # the session is the controller's; the screen holds none, nor a thread
        session = app.controller.session
        assert session is not None and not hasattr(screen, "session")
        assert [m["content"] for m in session.agent.messages if m["role"] == "user"] == ["write a"]
        assert server.requests[0]["messages"][-1]["content"] == "write a"
        # the agent's events came on the controller's one stream, in the agent's order
        kinds = [type(e) for e in seen if type(e) in (RoundStarted, ToolCallStarted, TextDelta)]
        assert kinds[:2] == [RoundStarted, ToolCallStarted] and TextDelta in kinds
        # and the app wrote them on its timeline, the one the screen draws
        (bar,) = app.timeline_model.bars
        assert screen.query_one(Timeline).model is app.timeline_model
        assert (bar.name, bar.status) == ("write_file", "ok")
        (card,) = screen.query(ToolCard)
        assert (card.call_id, card.status) == (bar.call_id, "ok")
        assert (tmp_path / "a.txt").read_text() == "alpha\n"


async def test_a_call_run_by_hand_and_the_agent_s_share_one_executor(
    server, tmp_path: Path, home: Path
) -> None:
    server.add(
        tools(
            ("terminal", {"command": f"seq {BIG}"}),
            ("write_file", {"path": "by-agent.txt", "content": "agent\n"}),
        ),
        text("Done."),
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "count, then write")
        await wait_until(pilot, lambda: "answered" in turn_line(screen), 10)
        controller = app.controller
        by_hand = await controller.run_tool("terminal", {"command": f"seq {BIG}"})
        assert by_hand is not None and by_hand.status == "ok"
        wrote = await controller.run_tool("write_file", {"path": "by-hand.txt", "content": "x\n"})
        assert wrote is not None and wrote.status == "ok"

        # one executor: the session's is the controller's
        session = controller.session
        assert session is not None and session.executor is controller.executor
        # one spill directory: both results spilled there
        agent_call = next(e for e in controller.calls("terminal") if e.origin == "agent")
        assert agent_call.spilled is not None and by_hand.spilled is not None
        assert Path(agent_call.spilled).parent == Path(by_hand.spilled).parent
        assert Path(by_hand.spilled).parent.name == session.id
        # one memory of written files, one history with both origins
        written = controller.executor.written
        assert {str(tmp_path / "by-agent.txt"), str(tmp_path / "by-hand.txt")} <= written
        await wait_until(pilot, lambda: len(controller.calls("write_file")) == 2)
        assert {e.origin for e in controller.calls("write_file")} == {"agent", "form"}
        # the hand-run calls are on the app's timeline too, without a card in the chat
        names = [b.name for b in app.timeline_model.bars]
        assert names.count("terminal") == 2 and names.count("write_file") == 2
        assert [c.tool for c in screen.query(ToolCard)] == ["terminal", "write_file"]


async def test_esc_cancels_a_running_call_through_the_controller_and_the_session_goes_on(
    server,
) -> None:
    server.add(tools(("terminal", {"command": "sleep 60"})), text("after the cancel"))
    app = WorkbenchApp()
    seen = recording(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "sleep a minute")
        await wait_until(pilot, lambda: any(isinstance(e, ToolCallStarted) for e in seen), 10)
        await pilot.press("escape")
        await wait_until(pilot, lambda: "cancelled" in turn_line(screen), 10)
        (finished,) = [e for e in seen if isinstance(e, ToolCallFinished)]
        assert finished.status == "cancelled"
        (bar,) = app.timeline_model.bars
        assert bar.status == "cancelled" and bar.end is not None
        assert screen.query_one(PromptArea).text == "sleep a minute"
        assert not screen.busy
        # the same session takes the next turn
        session = app.controller.session
        await send(pilot, screen, "and now?")
        await wait_until(pilot, lambda: "answered" in turn_line(screen), 10)
        assert app.controller.session is session


async def test_approvals_mode_smart_is_said_once_in_the_sessions_log(server, home: Path) -> None:
    config = home / "config.yaml"
    config.write_text(config.read_text() + "approvals:\n  mode: smart\n")
    server.add(text("Hello."))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "hi")
        await wait_until(pilot, lambda: "answered" in turn_line(screen), 10)
        notes = [str(w.content) for w in screen.query(".note")]
        said = [n for n in notes if "approvals.mode: smart" in n]
        assert len(said) == 1 and "(mode ask)" in said[0], notes
        assert app.controller.runtime.broker.mode == "ask"


async def test_the_workbench_session_runs_the_plugins_session_hooks(
    fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch
) -> None:
    import json
    import shutil

    from tests.support.plugins import FIXTURES

    home.mkdir(parents=True, exist_ok=True)
    (home / "plugins").mkdir()
    shutil.copytree(FIXTURES / "lifecycle", home / "plugins" / "lifecycle")
    (home / "config.yaml").write_text(
        fake.model_config() + "checkpoints:\n  enabled: false\nterminal:\n  sandbox: false\n"
        "plugins:\n  enabled: [lifecycle]\n"
    )
    log = tmp_path / "hooks.jsonl"
    monkeypatch.setenv("LIFECYCLE_LOG", str(log))
    monkeypatch.chdir(tmp_path)
    fake.add(text("Hello."))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "hi")
        await wait_until(pilot, lambda: "answered" in turn_line(screen), 10)
        session = app.controller.session
        assert session is not None
        session_id = session.id
    seen = [json.loads(line) for line in log.read_text().splitlines()]  # the app has quit
    assert seen[0] == {
        "hook": "on_session_start",
        "session_id": session_id,
        "model": seen[0]["model"],
        "platform": "tui",
    }
    assert [r["hook"] for r in seen][-2:] == ["on_session_end", "on_session_finalize"]
    assert seen[-1] == {
        "hook": "on_session_finalize",
        "session_id": session_id,
        "platform": "tui",
        "reason": "shutdown",
    }
