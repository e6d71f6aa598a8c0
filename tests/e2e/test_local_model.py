"""The bundled local model (Qwen2.5-Coder-0.5B on llama.cpp), for real: mechanics, not wording."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from workbench.core.agent import transcript
from workbench.core.agent.loop import ServerTimings, TextDelta
from workbench.core.execution.executor import ToolCallFinished
from workbench.core.model import local as local_model
from workbench.core.model.settings import resolve
from workbench.core.runtime import load_runtime
from workbench.core.session import ChatSession

MODELS = Path(__file__).resolve().parents[2] / ".cache" / "models"
pytestmark = [
    pytest.mark.e2e,
    # the bundled model takes every core, and the lifetime tests count its servers: the
    # tests that run it go one after the other, on one worker
    pytest.mark.xdist_group("local-model"),
    pytest.mark.skipif(
        not local_model.installed(local_model.MODELS["qwen2.5-coder-0.5b"]),
        reason="the local model is installed by `make test`",
    ),
]


@pytest.mark.timeout(360)  # two requests of a real model on a shared CPU: ~2 min under load
async def test_a_real_tool_call_round_trip(home: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_TUI_MODELS_DIR", str(MODELS))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "todo.txt").write_text("buy milk\n")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("model:\n  local: qwen2.5-coder-0.5b\n")
    runtime = load_runtime(home)
    settings = resolve(runtime.config, env={}, max_rounds=1)
    assert settings.local and settings.model == "qwen2.5-coder-0.5b"
    events: list[object] = []
    session = ChatSession(runtime, settings, on_event=events.append, cwd=str(tmp_path))
    await session.start()
    try:
        assert session.local.base_url.startswith("http://127.0.0.1:")
        await asyncio.wait_for(session.warming, 240)  # the prompt cache filled meanwhile
        finished = await session.turn("Please read the file todo.txt")
    finally:
        await session.close()
    assert session.local.process.poll() is not None  # the server is gone with the session
    calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert calls and calls[0].name == "read_file" and calls[0].status == "ok"
    assert "buy milk" in json.loads(calls[0].content)["content"]
    records = transcript.read(session.transcript.path)
    sent_back = [m for m in transcript.messages(records) if m["role"] == "tool"]
    assert sent_back and "buy milk" in sent_back[0]["content"]
    assistant = [m for m in transcript.messages(records) if m["role"] == "assistant"]
    assert assistant[0]["tool_calls"][0]["function"]["name"] == "read_file"
    # round cap 1: the loop stopped and asked once more for an answer (tool_choice none);
    # a call the model wrote as text in that round ran, and it was asked once again
    assert finished.reason in ("max_rounds", "answered") and finished.rounds in (2, 3)
    # the server read the system prompt and the tools before the prompt came (warm), and
    # the final round read only what the first round had not (its prefix kept)
    first, final = [e for e in events if isinstance(e, ServerTimings)][:2]
    assert first.cached > 500 and first.evaluated < first.cached
    assert final.cached > first.cached + first.evaluated - 8
    assert any(isinstance(e, TextDelta) for e in events) or finished.text == ""
    assert os.path.getsize(MODELS / local_model.MODELS["qwen2.5-coder-0.5b"].file) == 491_400_064


@pytest.mark.timeout(360)  # three turns of a real model on CPU: ~40 s alone, more when shared
async def test_resume_approval_and_cancel_on_the_real_model(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    import asyncio

    from workbench.core.execution.approval import ApprovalBroker

    monkeypatch.setenv("HERMES_TUI_MODELS_DIR", str(MODELS))
    home.mkdir(parents=True, exist_ok=True)
    # Only the terminal, and a call required: the test is about resume, approval and cancel,
    # not about which tool a 0.5B model picks for "delete a file".
    (home / "config.yaml").write_text(
        "model:\n  local: qwen2.5-coder-0.5b\n  temperature: 0\n  max_rounds: 1\n"
        "  first_tool_call: required\nplatform_toolsets:\n  cli: [terminal]\n"
    )
    (tmp_path / "old.log").write_text("keep me\n")
    runtime = load_runtime(home)
    settings = resolve(runtime.config, env={})
    first = ChatSession(runtime, settings, cwd=str(tmp_path))
    await first.start()
    await first.turn("Say hello.")
    await first.close()
    asked: list[str] = []
    broker = ApprovalBroker()
    broker.attach(lambda request: (asked.append(request.command), broker.answer(request.id, "d")))
    resumed = ChatSession(runtime, settings, broker=broker, cwd=str(tmp_path), resume=first.id)
    await resumed.start()
    try:
        assert resumed.id == first.id and resumed.agent.messages[0]["content"] == "Say hello."
        await resumed.turn(
            "Please delete the file old.log by running the terminal command: rm old.log"
        )
        assert asked == ["rm old.log"] and (tmp_path / "old.log").exists()
        task = asyncio.create_task(resumed.turn("Write a very long story about a dragon."))
        await asyncio.sleep(1.0)
        resumed.cancel()
        assert (await task).reason == "cancelled"
    finally:
        await resumed.close()
    kinds = [r["kind"] for r in transcript.read(resumed.transcript.path)]
    assert kinds.count("turn_finished") == 3 and "approval" in kinds and "resumed" in kinds


@pytest.mark.timeout(900)  # the agent's prompt read twice more by a 0.5B model on 2 cores
async def test_the_model_probe_finds_the_bundled_model_native(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    from workbench.core import probe

    monkeypatch.setenv("HERMES_TUI_MODELS_DIR", str(MODELS))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "README.md").write_text("# notes\nA list of things to buy.\n")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("model:\n  local: qwen2.5-coder-0.5b\n")
    runtime = load_runtime(home)
    settings = resolve(runtime.config, env={})
    report = await probe.run(runtime, settings, cwd=str(tmp_path))
    assert [(f.request, f.stream) for f in report.findings] == [
        ("minimal", True), ("minimal", False), ("agent", True), ("agent", False),
    ]  # fmt: skip
    # our template makes llama.cpp return real calls, streamed and not
    assert [f.kind for f in report.findings] == ["native"] * 4, report.as_json()
    assert report.ok and report.advice == [
        "native (every request): proper tool calls: nothing to change."
    ]
