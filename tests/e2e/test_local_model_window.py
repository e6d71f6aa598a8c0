"""The bundled model on a file larger than its whole window: the turn fits, for real.

read_file returns the head that fits what is left of the window (with next_offset to go on
from); no request is refused; the model answers from what it read. Mechanics, not wording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core import local_model, transcript
from workbench.core.executor import ToolCallFinished
from workbench.core.model import resolve
from workbench.core.runtime import load_runtime
from workbench.core.session import ChatSession

MODELS = Path(__file__).resolve().parents[2] / ".cache" / "models"
MODEL = "qwen2.5-coder-0.5b"  # the quick one: the mechanics are the same
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not local_model.installed(local_model.MODELS[MODEL]),
        reason="the local model is installed by `make test`",
    ),
]
WINDOW = 4096  # the smallest window we allow a user: the hardest case, and quick on CPU


@pytest.mark.timeout(900)  # a few thousand tokens of prompt on a shared 2-core CPU
async def test_a_file_larger_than_the_window_is_summarised(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HERMES_TUI_MODELS_DIR", str(MODELS))
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  local: {MODEL}\n  temperature: 0\n  max_rounds: 2\n  context_window: {WINDOW}\n"
    )
    head = "Project Lighthouse: a tool that keeps ships' logs in sync across harbours."
    body = "".join(
        f"Section {i}: the harbour office files each ship's arrival and departure times.\n"
        for i in range(1, 900)
    )
    (tmp_path / "big.txt").write_text(f"{head}\n\n{body}")  # ~70 KB: several windows
    runtime = load_runtime(home)
    settings = resolve(runtime.config, env={})
    assert settings.local and settings.context_window == WINDOW
    events: list[object] = []
    session = ChatSession(runtime, settings, on_event=events.append, cwd=str(tmp_path))
    await session.start()
    try:
        finished = await session.turn("Use the read_file tool on big.txt, then summarize it.")
    finally:
        await session.close()
    assert finished.reason in ("answered", "max_rounds"), finished.error
    assert finished.text.strip()  # an answer, not a refusal
    reads = [e for e in events if isinstance(e, ToolCallFinished) and e.name == "read_file"]
    assert reads and reads[0].status == "ok"
    result = json.loads(reads[0].content)
    assert head in result["content"] and result.get("next_offset")  # the head, and more to come
    records = transcript.read(session.transcript.path)
    assert not [r for r in records if r["kind"] in ("error", "context_refused")]
    sent = [m for m in transcript.messages(records) if m["role"] == "tool"]
    assert head in sent[0]["content"]
    assert finished.context <= WINDOW
