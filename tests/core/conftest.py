"""Fixtures for the agent's tests: a working directory and chat sessions against the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.calls import scratch  # noqa: F401  (the gate's tests use it)
from tests.support.fake_openai import FakeOpenAI
from workbench.core.model.settings import ModelSettings
from workbench.core.runtime import load_runtime
from workbench.core.session import ChatSession


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "a.txt").write_text("alpha\n")
    (path / "b.txt").write_text("beta\n")
    return path


@pytest.fixture
def make_session(home: Path, fake: FakeOpenAI, workdir: Path):
    sessions: list[ChatSession] = []

    async def make(**kw) -> tuple[ChatSession, list[object]]:
        events: list[object] = []
        settings = ModelSettings(
            "test-model",
            base_url=fake.url,
            api_key="test-key",
            max_rounds=kw.pop("max_rounds", 3),
            context_window=kw.pop("context_window", None),
            max_tokens=kw.pop("max_tokens", 2048),
            temperature=0.0,
            lean=kw.pop("lean", False),
            turn_timeout=kw.pop("turn_timeout", 900.0),
            require_tool=kw.pop("require_tool", False),
        )
        runtime = kw.pop("runtime", None) or load_runtime(home)
        session = ChatSession(runtime, settings, on_event=events.append, cwd=str(workdir), **kw)
        await session.start()
        sessions.append(session)
        return session, events

    return make
