"""A chat session: the model (an endpoint or the bundled local one), the agent, its transcript.

Front ends (the headless `chat` command, the UI) create one, attach what they can answer
(approvals, clarify questions), and run turns. `resume` continues a session from its
transcript.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core import local_model, transcript
from workbench.core.agent import Agent, TurnFinished
from workbench.core.agent_tools import Clarifier, SessionState, session_tools
from workbench.core.approval import ApprovalBroker
from workbench.core.budget import BudgetConfig
from workbench.core.model import ModelSettings
from workbench.core.runtime import Runtime, new_session_id


class SessionError(Exception):
    """The session cannot start (no such session to resume, the local model is missing...)."""


class ChatSession:
    def __init__(
        self,
        runtime: Runtime,
        settings: ModelSettings,
        *,
        broker: ApprovalBroker | None = None,
        clarify: Clarifier | None = None,
        on_event: Callable[[object], None] | None = None,
        resume: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.settings = settings
        self.broker = broker
        self.on_event = on_event
        self.local: local_model.LocalServer | None = None
        self._running: asyncio.Task[Any] | None = None
        history: list[dict[str, Any]] = []
        if resume is not None:
            path = transcript.find(runtime.home, resume or None)
            if path is None:
                raise SessionError(f"no session matches '{resume}' (see `hermes-tui sessions`)")
            history = transcript.messages(transcript.read(path))
            session_id = path.stem
        else:
            session_id = new_session_id()
        self.transcript = transcript.Transcript(
            transcript.sessions_dir(runtime.home) / f"{session_id}.jsonl"
        )
        if resume is None:
            self.transcript.record("session", id=session_id, model=settings.describe(), cwd=cwd)
        else:
            self.transcript.record("resumed", id=session_id, model=settings.describe())
        self.state = SessionState(runtime.home, clarify=clarify)
        self.tools = session_tools(runtime.registry, self.state)
        self.executor = runtime.executor(broker=broker, session_id=session_id, cwd=cwd)
        self.executor.registry = self.tools
        if settings.context_window:  # results must fit the model actually used
            self.executor.budget = BudgetConfig.for_context_window(settings.context_window)
        self.agent = Agent(
            settings,
            self.tools,
            self.state,
            self.executor,
            runtime.effective_tools,
            transcript=self.transcript,
            on_event=on_event,
            messages=history,
        )
        self.executor.on_event = self.agent.observe
        if broker is not None:
            broker.add_listener(self.agent.observe)

    @property
    def id(self) -> str:
        return self.transcript.session_id

    async def start(self) -> None:
        """Connect to the endpoint, starting the bundled local model when there is none."""
        import openai

        settings = self.settings
        if settings.local:
            spec = local_model.MODELS[settings.model]
            log = self.runtime.home / "logs" / "local-model.log"
            self.local = await asyncio.to_thread(
                local_model.start, spec, models_dir(self.runtime.home), log=log
            )
            base_url, api_key = self.local.base_url, self.local.api_key
        else:
            base_url, api_key = settings.base_url, settings.api_key or "not-needed"
        self.agent.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=2, timeout=120.0
        )

    async def turn(self, prompt: str) -> TurnFinished:
        self._running = asyncio.current_task()
        try:
            return await self.agent.run_turn(prompt)
        finally:
            self._running = None

    def cancel(self) -> None:
        self.agent.cancel()

    async def close(self, grace: float = 5.0) -> None:
        """Cancel a running turn and let it record how it ended, then close everything."""
        running = self._running
        if running is not None and not running.done():
            self.agent.cancel()
            await asyncio.wait({running}, timeout=grace)
        if self.agent.client is not None:
            await self.agent.client.close()
        if self.local is not None:
            self.local.stop()
        self.executor.shutdown()
        self.transcript.close()


def models_dir(home: Path) -> Path:
    """Where assembled models are kept: $HERMES_TUI_MODELS_DIR, else HERMES_HOME/models."""
    return Path(os.environ.get("HERMES_TUI_MODELS_DIR") or home / "models")


def transcript_path(home: Path, session_id: str) -> Path:
    return transcript.sessions_dir(home) / f"{session_id}.jsonl"
