"""The session screen with a pilot, against a real OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.pilot import open_session, send, wait_until
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.screens.session import SessionScreen
from workbench.tui.widgets.chat import PromptArea, ToolCard
from workbench.tui.widgets.reply import AssistantMessage
from workbench.tui.widgets.timeline import Timeline


@pytest.fixture
def server(fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch) -> FakeOpenAI:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    return fake


async def test_a_reply_streams_in_and_the_turn_line_counts_tokens(server) -> None:
    server.add(text("Hello **there**, friend.", chunks=6, delay=0.01))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "hi")
        await wait_until(pilot, lambda: "in ·" in str(screen.query_one("#turn-line").content))
        await pilot.pause()
        replies = list(screen.query(AssistantMessage))
        assert [r.reply for r in replies] == ["Hello **there**, friend."]
        assert "11 in" in str(screen.query_one("#turn-line").content)
        assert server.requests[-1]["messages"][-1]["content"] == "hi"


async def test_parallel_calls_get_cards_and_lanes_and_a_denied_command_never_runs(
    server, tmp_path: Path
) -> None:
    server.add(
        tools(
            ("read_file", {"path": "a.txt"}),
            ("read_file", {"path": "b.txt"}),
            ("terminal", {"command": "rm *.txt"}),  # a glob: no checkpoint vouches for it
        ),
        text("Both read; nothing deleted."),
    )
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "read both, then delete a")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert app.screen.request.command == "rm *.txt"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "answered" in str(screen.query_one("#turn-line").content))
        cards = {c.call_id: c for c in screen.query(ToolCard)}
        assert [(c.tool, c.status) for c in cards.values()] == [
            ("read_file", "ok"),
            ("read_file", "ok"),
            ("terminal", "denied"),
        ]
        assert (tmp_path / "a.txt").exists()
        model = screen.query_one(Timeline).model
        reads = [b for b in model.bars if b.name == "read_file"]
        terminal = model.by_id[list(cards)[2]]
        assert {b.lane for b in reads} == {0, 1} and all(b.parallel for b in reads)
        assert reads[0].segment == reads[1].segment != terminal.segment
        assert not terminal.parallel and "terminal" in terminal.reason
        assert terminal.start >= max(b.end for b in reads)


async def test_esc_cancels_a_streaming_reply_and_gives_the_prompt_back(server) -> None:
    server.add(text("word " * 400, chunks=400, delay=0.01))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "tell me a long story")
        await wait_until(pilot, lambda: screen.query(AssistantMessage))
        await pilot.press("escape")
        await wait_until(pilot, lambda: "cancelled" in str(screen.query_one("#turn-line").content))
        assert not screen.busy
        assert screen.query_one(PromptArea).text == "tell me a long story"
        assert len(screen.query_one(AssistantMessage).reply) < len("word " * 400)


async def test_up_and_down_walk_the_prompt_history(server) -> None:
    server.add(text("one"), text("two"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        prompt = screen.query_one(PromptArea)
        for words in ("first question", "second question"):
            await send(pilot, screen, words)
            await wait_until(pilot, lambda: not screen.busy and len(server.requests) >= 1)
            await wait_until(
                pilot, lambda: "answered" in str(screen.query_one("#turn-line").content)
            )
        await pilot.press("up")
        assert prompt.text == "second question"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"


async def test_without_a_model_the_pane_says_how_to_configure_one(home: Path) -> None:
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await wait_until(pilot, lambda: len(screen.query(".note")) > 0)
        note = str(screen.query(".note").first().render())
        assert "model.base_url" in note and "config.yaml" in note


async def test_sub_agents_get_lane_groups_and_their_conversation_opens(server) -> None:
    from workbench.tui.screens.conversation import ConversationScreen
    from workbench.tui.screens.viewer import ViewerScreen

    server.add(
        tools(("delegate_task", {"goal": "inspect alpha"}), ("delegate_task", {"goal": "inspect beta"})),
        text("Both inspected."),
    )  # fmt: skip
    server.route("inspect alpha", tools(("read_file", {"path": "a.txt"})), text("alpha: one line"))
    server.route("inspect beta", tools(("read_file", {"path": "b.txt"})), text("beta: one line"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "inspect both")
        await wait_until(pilot, lambda: "answered" in str(screen.query_one("#turn-line").content))
        model = screen.query_one(Timeline).model
        delegates = [b for b in model.bars if b.name == "delegate_task"]
        reads = [b for b in model.bars if b.name == "read_file"]
        assert len(delegates) == 2 and len(reads) == 2
        for read in reads:  # each sub-agent's lane sits right under the call that started it
            parent = model.by_id[read.parent]
            assert read.label.startswith("sub-agent ") and read.lane == parent.lane + 1
        assert all(b.conversation and b.conversation.endswith(".jsonl") for b in delegates)

        timeline = screen.query_one(Timeline)
        timeline.focus()
        await pilot.press("home")
        await pilot.pause()
        assert "v: open its sub-agent's conversation" in str(
            screen.query_one("#call-detail").content
        )
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        conversation = app.screen
        await wait_until(pilot, lambda: conversation.loaded)
        assert conversation.path == Path(delegates[0].conversation)
        (card,) = conversation.query(ToolCard)
        assert card.tool == "read_file" and card.status == "ok"
        (reply,) = conversation.query(AssistantMessage)
        assert reply.reply == "alpha: one line"
        await pilot.press("r")  # the raw transcript
        await wait_until(pilot, lambda: isinstance(app.screen, ViewerScreen))


async def test_the_context_in_use_shows_as_it_changes_and_compression_is_marked(
    server, home: Path, tmp_path: Path
) -> None:
    from workbench.core.agent.compress import SUMMARY_SYSTEM

    (home / "config.yaml").write_text(
        server.model_config()
        + "  context_window: 6000\n  max_tokens: 1024\nagent:\n  disabled_toolsets: [terminal, web]\n"
    )
    server.window = 6000
    server.route(SUMMARY_SYSTEM[:40], *[text("The user had notes read.")] * 20)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        line = screen.query_one("#turn-line")
        seen: list[str] = []
        for n in range(8):
            (tmp_path / f"notes{n}.txt").write_text(
                f"TOP{n}\n" + "".join(f"note {i}: keep calm and carry on\n" for i in range(900))
            )
            server.add(tools(("read_file", {"path": f"notes{n}.txt"})), text(f"read {n}"))
            await send(pilot, screen, f"read notes{n}.txt")
            await wait_until(pilot, lambda n=n: not screen.busy and f"read {n}" in _replies(screen))
            seen.append(str(line.content))
            if screen.query(".divider"):
                break
        assert all(" / 6k" in s and s.startswith("answered · context ") for s in seen)
        assert len(set(seen)) > 1  # it follows the conversation
        (divider,) = screen.query(".divider")
        assert "context compressed " in str(divider.content)
        assert server.refused == []


def _replies(screen: SessionScreen) -> str:
    return " ".join(r.reply for r in screen.query(AssistantMessage))


async def test_a_full_disk_is_said_and_the_session_goes_on(
    fake: FakeOpenAI, full_filesystem, monkeypatch, tmp_path: Path
) -> None:
    from workbench.core.config import ensure_home

    mount, fill = full_filesystem
    home = mount / "home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    ensure_home(home)
    (home / "config.yaml").write_text(fake.model_config())
    fill()
    fake.add(text("Still here."))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "hi")
        await wait_until(
            pilot,
            lambda: [r.reply for r in screen.query(AssistantMessage)] == ["Still here."],
            timeout=30,
        )
        notes = [str(w.content) for w in screen.query(".note")]
        assert any("The transcript is not being saved" in n and "No space left" in n for n in notes)


async def test_with_config_yaml_unreadable_the_chat_says_so_and_offers_no_tool_it_may_switch_off(
    fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("tools:\n  disabled: [terminal\n")  # does not parse
    monkeypatch.chdir(tmp_path)
    fake.add(text("No tools here."))
    flags = {"model": "fake", "base_url": fake.url, "api_key": fake.api_key}
    app = WorkbenchApp(model_flags=flags)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await wait_until(  # the workbench says it as it starts
            pilot,
            lambda: any(
                "line 3" in n.message and "offered none of the tools" in n.message
                for n in app._notifications
            ),
        )
        await send(pilot, screen, "delete build")
        await wait_until(
            pilot, lambda: [r.reply for r in screen.query(AssistantMessage)] == ["No tools here."]
        )
        notes = [str(w.content) for w in screen.query(".note")]
        assert any("line 3" in n and "offered none of the tools you can switch off" in n
                   for n in notes), notes  # fmt: skip
        offered = {t["function"]["name"] for t in fake.requests[0].get("tools", [])}
        assert offered.isdisjoint({"terminal", "read_file", "write_file", "patch"})


async def test_the_model_s_progress_shows_on_the_turn_line_while_it_reads(server) -> None:
    import threading

    release = threading.Event()
    server.add(text("Done.", progress=[(600, 1000, 600), (900, 1000, 600)], hold=release))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, app)
        await send(pilot, screen, "hi")

        def line() -> str:
            return str(screen.query_one("#turn-line").content)

        try:  # the server holds its reply: what shows now is the progress it reported
            await wait_until(pilot, lambda: "900 / 1,000 tokens (90%, 600 from cache)" in line())
            assert screen.busy
        finally:
            release.set()
        await wait_until(pilot, lambda: "answered" in line())
        assert "reading" not in line() and "generating" not in line()
