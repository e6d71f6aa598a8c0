"""The bundled model's window, for real: a file larger than it is read and summarised.

The server runs with the window the budgets assume (one number), the request sizes are
counted by the server's own tokenizer, and no request is refused as too long.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.agent import transcript
from workbench.core.agent.events import ContextNotice
from workbench.core.execution.executor import ToolCallFinished
from workbench.core.model import local as local_model
from workbench.core.model.settings import resolve
from workbench.core.model.tokens import LlamaCpp
from workbench.core.runtime import load_runtime
from workbench.core.session import ChatSession

MODELS = Path(__file__).resolve().parents[2] / ".cache" / "models"
MODEL = "qwen2.5-coder-0.5b"  # the quick bundled model: the mechanics are the default's
pytestmark = [
    pytest.mark.e2e,
    # the bundled model takes every core, and the lifetime tests count its servers: the
    # tests that run it go one after the other, on one worker
    pytest.mark.xdist_group("local-model"),
    pytest.mark.skipif(
        not local_model.installed(local_model.MODELS[MODEL]),
        reason="the local model is installed by `make test`",
    ),
]


@pytest.mark.timeout(900)  # a few thousand tokens of prompt on a shared 2-core CPU
async def test_a_file_larger_than_the_window_is_read_and_summarised(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HERMES_TUI_MODELS_DIR", str(MODELS))
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  local: {MODEL}\n  temperature: 0\n  max_rounds: 1\n"
        "agent:\n  disabled_toolsets: [terminal, web]\n"
    )
    lines = [f"Section {i}: the harbour ferry leaves at {6 + i % 12} o'clock." for i in range(900)]
    (tmp_path / "guide.txt").write_text("Ferry guide for Port Elm\n" + "\n".join(lines) + "\n")
    runtime = load_runtime(home)
    settings = resolve(runtime.config, env={})
    events: list[object] = []
    session = ChatSession(runtime, settings, on_event=_log(events), cwd=str(tmp_path))
    await session.start()
    try:
        window = session.agent.window
        assert isinstance(session.agent.meter.tokenizer, LlamaCpp)
        assert session.agent.meter.text("hello world") == 2  # the server's own tokenizer
        assert (tmp_path / "guide.txt").stat().st_size / 4 > window.context  # over the window
        finished = await session.turn("Use the read_file tool on guide.txt, then summarize it.")
    finally:
        await session.close()
    records = transcript.read(session.transcript.path)
    assert finished.reason != "error", finished.error
    assert not [r for r in records if r["kind"] in ("context_refused", "error")]
    (read,) = [e for e in events if isinstance(e, ToolCallFinished)][:1]
    assert read.name == "read_file" and read.status == "ok"
    page = json.loads(read.content)
    assert page["content"].startswith("     1|Ferry guide for Port Elm") and page["next_offset"] > 1
    # an answer from what fitted; or the 0.5B, told to answer, wrote another read_file call
    # as text: not shown as its answer, the user told it was not run (core.agent.text_calls)
    notices = [e.text for e in events if isinstance(e, ContextNotice)]
    assert finished.text.strip() or any("was not run" in n for n in notices)
    assert "tool_call" not in finished.text
    # the endpoint's count agrees with ours once corrected: the template adds little
    assert 1.0 <= session.agent.meter.scale < 1.5
    assert 0 < finished.context < window.context


def _log(events: list[object]):
    import sys
    import time

    began = time.monotonic()

    def on_event(event: object) -> None:
        events.append(event)
        if type(event).__name__ != "TextDelta":
            print(f"{time.monotonic() - began:7.1f}s {event!r}"[:300], file=sys.stderr)

    return on_event
