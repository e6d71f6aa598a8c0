"""A whole agent session in a real terminal (tmux) against the OpenAI-protocol test server:
parallel tool calls, a destructive command denied in the modal, a spilled result opened in
the viewer from the timeline, a cancelled stream, quit; the transcript holds every event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.tmux import keys, screen, typed, wait_for, wait_until

pytestmark = pytest.mark.e2e


def events(home: Path) -> list[dict]:
    (transcript,) = (home / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in transcript.read_text().splitlines()]


def test_a_whole_session(tmux_run, fake: FakeOpenAI, home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    (tmp_path / "big.txt").write_text("".join(f"{n:05d} {'x' * 150}\n" for n in range(3000)))
    fake.add(
        tools(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"}),
              ("terminal", {"command": "rm *.txt"})),
        tools(("search_files", {"pattern": "xxxx", "path": "big.txt", "limit": 1000, "context": 2})),
        text("Read a and b; I did not delete a. big.txt is long.", chunks=8),
        text("word " * 3000, chunks=3000, delay=0.005),
    )  # fmt: skip
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config())
    session = tmux_run()
    wait_for(session, "Built-in (10)")
    keys(session, "F6")
    wait_for(session, "Talking to fake")
    typed(session, "read a and b, delete a, then read big.txt")
    keys(session, "Enter")
    wait_for(session, "needs your approval", "rm *.txt", "deletes *.txt")
    keys(session, "Enter")  # deny is the default
    # the denied card, open, may push the reads off screen
    wait_for(session, "answered", "denied", "search_files(", timeout=30)
    assert (tmp_path / "a.txt").exists()

    keys(session, "F7", "End")  # the timeline: the last call searched big.txt
    # (the spilled file's path is checked below, from the events: on screen its line is cut
    # at the pane's width, which a longer HERMES_HOME, as under pytest-xdist, pushes it past)
    wait_for(session, "v: open the full result", "search_files")
    keys(session, "v")
    # the compact JSON, pretty-printed once indexed
    wait_for(session, "Close viewer", "x" * 40, '"path": "big.txt"')
    keys(session, "q")  # F8 before the viewer has gone would be the app's (the rules)
    wait_until(lambda: "Close viewer" not in screen(session), what="the viewer closed")
    keys(session, "F8")
    wait_for(session, "⏎ Send")  # the prompt has the focus again

    typed(session, "now a long story")
    keys(session, "Enter")
    wait_for(session, "word word word")
    keys(session, "Escape")
    wait_for(session, "cancelled", "│ now a long story")  # the prompt came back, in its box
    keys(session, "C-q")
    wait_for(session, "EXIT=0")

    kinds = [e["kind"] for e in events(home)]
    assert kinds.count("tool_started") == kinds.count("tool_finished") == 4
    finished = [(e["name"], e["status"]) for e in events(home) if e["kind"] == "tool_finished"]
    assert sorted(finished) == [
        ("read_file", "ok"), ("read_file", "ok"), ("search_files", "ok"), ("terminal", "denied")
    ]  # fmt: skip
    spilled = [e["spilled"] for e in events(home) if e["kind"] == "tool_finished" and e["spilled"]]
    assert len(spilled) == 1 and Path(spilled[0]).stat().st_size > 100_000
    assert Path(spilled[0]).is_relative_to(home / "state" / "results")  # the session's folder
    assert [e["decision"] for e in events(home) if e["kind"] == "approval"] == ["deny"]
    reasons = [e["reason"] for e in events(home) if e["kind"] == "turn_finished"]
    assert reasons == ["answered", "cancelled"]


def test_sub_agents_in_a_real_terminal(
    tmux_run, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    fake.add(
        tools(("delegate_task", {"goal": "inspect alpha"}), ("delegate_task", {"goal": "inspect beta"})),
        text("Both sub-agents reported."),
    )  # fmt: skip
    fake.route("inspect alpha", tools(("read_file", {"path": "a.txt"})), text("alpha: one line"))
    fake.route("inspect beta", text("beta: nothing to read"))
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config())
    session = tmux_run()
    wait_for(session, "Built-in (10)")
    keys(session, "F6")
    wait_for(session, "Talking to fake")
    typed(session, "inspect both")
    keys(session, "Enter")
    wait_for(session, "answered", "read_file(", "[sub-agent ", timeout=30)  # labelled
    keys(session, "F7", "Home")
    wait_for(session, "v: open its sub-agent's", "delegate_task")
    keys(session, "v")
    # the conversation screen is drawn after its frame: wait for its content, not its footer
    wait_for(session, "Raw transcript", "Goal: inspect alpha", "alpha: one line")
    keys(session, "Escape", "C-q")
    wait_for(session, "EXIT=0")
    (child,) = [p for p in (home / "sessions").iterdir() if p.is_dir()]
    assert sorted(p.name for p in child.iterdir()) == ["sub-agent-1.jsonl", "sub-agent-2.jsonl"]
    ended = [e["reason"] for e in events(home) if e["kind"] == "child_finished"]
    assert ended == ["answered", "answered"]


def test_the_workbench_takes_the_model_flags(tmux_run, fake: FakeOpenAI, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("model:\n  default: a/b\n  provider: anthropic\n")
    fake.add(text("hello from the flags"))
    session = tmux_run("--model", "flag-model", "--base-url", fake.url, "--api-key", fake.api_key)
    wait_for(session, "Built-in (10)")
    keys(session, "F6")
    intro = wait_for(session, "Talking to flag-model via custom")
    assert f"({fake.url})" in intro and "key --api-key" in intro
    typed(session, "hi")
    keys(session, "Enter")
    wait_for(session, "hello from the flags", timeout=30)
    keys(session, "C-q")
    wait_for(session, "EXIT=0")
    assert fake.requests[0]["model"] == "flag-model"


def test_a_model_that_cannot_be_used_is_said_and_the_prompt_kept(tmux_run, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("model:\n  default: a/b\n  provider: openrouter\n")
    session = tmux_run()
    wait_for(session, "Built-in (10)")
    keys(session, "F6")
    wait_for(session, "The configured model cannot be used")
    typed(session, "my precious prompt")
    keys(session, "Enter")
    shown = wait_for(session, "│ my precious prompt")  # back in the prompt box
    assert "OPENROUTER_API_KEY" in shown and "Starting the local model" not in shown
    keys(session, "C-q")
    wait_for(session, "EXIT=0")
