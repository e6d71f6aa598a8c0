"""A chat session: the model (an endpoint or the bundled local one), the agent, its transcript.

Front ends (the headless `chat` command, the UI) create one, attach to the runtime's `asker`
what they can answer (approvals, clarify questions), and run turns. `resume` continues a
session from its transcript.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.core.agent import transcript
from workbench.core.agent.context import Window
from workbench.core.agent.delegation import NAME as DELEGATE
from workbench.core.agent.delegation import Delegation, Limits, SubagentTask
from workbench.core.agent.events import ModelProgress, SubagentFinished, TurnFinished
from workbench.core.agent.loop import Agent
from workbench.core.agent.own_tools import (
    OwnToolsState,
    ToolRouter,
    agent_tools,
)
from workbench.core.config import Config
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.budget import BudgetConfig
from workbench.core.execution.events import ToolCallFinished, ToolCallStarted
from workbench.core.execution.executor import Executor
from workbench.core.execution.kept import CallKeeper, by_caller, saving, watching
from workbench.core.model import local as local_model
from workbench.core.model import prompt_cache, tokens
from workbench.core.model.settings import ModelSettings
from workbench.core.plugins.lifecycle import CLI, SessionHooks
from workbench.core.runtime import Runtime, new_session_id
from workbench.core.tools.deferral import ToolSearchSettings
from workbench.core.tools.memory import MemorySession


class SessionError(Exception):
    """The session cannot start (no such session to resume, the local model is missing...)."""


class ChatSession:
    def __init__(
        self,
        runtime: Runtime,
        settings: ModelSettings,
        *,
        broker: ApprovalBroker | None = None,
        on_event: Callable[[object], None] | None = None,
        resume: str | None = None,
        cwd: str | None = None,
        executor: Executor | None = None,
        platform: str = CLI,
    ) -> None:
        """`executor`: the front end's own, shared with its calls run by hand (one spill
        directory, one memory of written files; the session neither replaces its callback
        for those calls nor shuts it down); None: the session makes its own. `platform`:
        the front end, as the plugins' session hooks are told (cli, tui)."""
        self.runtime = runtime
        self.settings = settings
        self.broker = broker
        self.on_event = on_event
        self.local: local_model.LocalServer | None = None
        self._owns_local = True
        self.notes: list[str] = []  # what a front end should tell the user at the start
        self._running: asyncio.Task[Any] | None = None
        self.warming: asyncio.Future[str] | None = None  # the local server's prompt cache
        self.primed = ""  # how it was filled: restored, saved, read, failed (prompt_cache.prime)
        history: list[dict[str, Any]] = []
        if resume is not None:
            path = transcript.find(runtime.home, resume or None)
            if path is None:
                raise SessionError(f"no session matches '{resume}' (see `hermes-tui sessions`)")
            try:
                records = transcript.read(path)
            except OSError as exc:
                raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
            history, repaired = transcript.resumable(transcript.conversation(records))
            self.notes += _resume_notes(path, records.skipped, repaired)
            session_id = path.stem
        else:
            session_id = executor.session_id if executor is not None else new_session_id()
        self.transcript = transcript.Transcript(
            transcript.sessions_dir(runtime.home) / f"{session_id}.jsonl"
        )
        if self.transcript.failure:
            self.notes.append(transcript.not_saved(self.transcript.failure))
        if unknown := runtime.switches_unknown():
            self.notes.append(unknown)
        if broker is not None and broker.book.policy.fail_closed:  # e.g. an untrusted config
            self.notes.append(f"every call asks: {broker.book.policy.fail_closed}")
        if broker is not None and broker.mode_note:  # e.g. Hermes's `smart`, said once
            self.notes.append(broker.mode_note)
        self.transcript.on_failure = self._tell  # a full disk later in the session
        if resume is None:
            self.transcript.record("session", id=session_id, model=settings.describe(), cwd=cwd)
        else:
            self.transcript.record("resumed", id=session_id, model=settings.describe())
        self.state = OwnToolsState(runtime.home, asker=runtime.asker)
        self.cwd = cwd
        # sub-agents started, for their names: a resumed session goes on from its last one
        self._subagents = [_count(self._subagents_dir(), "sub-agent-*.jsonl")]
        offered = functools.partial(runtime.effective_tools, lean=settings.lean)
        self.tools = self._tools(self.state, depth=0, offered=offered)
        self._owns_executor = executor is None
        self.executor = executor or runtime.executor(broker=broker, session_id=session_id, cwd=cwd)
        by_hand = None if self._owns_executor else self.executor.on_event
        self.executor.registry = self.tools
        self._limit_delegation(self.executor)
        self.window = session_window(runtime, settings)
        # results outside a turn's own sizing (none today) still follow the model's window
        self.executor.budget = BudgetConfig.for_context_window(self.window.context)
        # the plugins' session hooks: started with the first turn, finalized on close
        self.lifecycle = SessionHooks(
            runtime.hooks,
            session_id,
            model=settings.model,
            platform=platform,
            resumed=resume is not None,
        )
        self.agent = Agent(
            settings,
            self.tools,
            self.state,
            self.executor,
            offered,
            transcript=self.transcript,
            on_event=on_event,
            messages=history,
            memory=MemorySession(runtime.memory, session_id, runtime.home),
            window=self.window,
            deferral=ToolSearchSettings.from_config(runtime.config).for_profile(settings.lean),
            lifecycle=self.lifecycle,
        )
        # every call of the agent and its sub-agents is kept in its tool's history
        self._observe = watching(CallKeeper(saving(runtime.history), "agent"), self.agent.observe)
        self.executor.on_event = (
            self._observe if by_hand is None else by_caller(by_hand, self._observe)
        )
        if broker is not None:
            broker.add_listener(self.agent.observe)

    def _tell(self, event: object) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _tools(
        self,
        state: OwnToolsState,
        depth: int,
        offered: Any,
        me: SubagentTask | None = None,
        turn_id: Callable[[], str] | None = None,
    ) -> ToolRouter:
        """`me`: the sub-agent the tools are for; `turn_id`: its agent's turn (the top
        agent's by default), for the plugins' subagent_start and subagent_stop hooks."""
        delegation = _delegation(
            self.runtime, depth, offered, self._spawn, self._observe_subagent, self._subagents
        )
        delegation.hooks, delegation.session_id, delegation.me = self.runtime.hooks, self.id, me
        delegation.turn_id = turn_id or (lambda: self.agent.turn_id)
        return _agent_tools(self.runtime, state, self.id, delegation)

    def _limit_delegation(self, executor: Any) -> None:
        """delegate_task runs under its own timeout, not the tools' (a sub-agent takes longer)."""
        limits = Limits.from_config(self.runtime.config.get)
        # no limit (child_timeout_seconds: 0): none here either
        wall = math.inf if limits.timeout is None else limits.timeout + 5
        executor.tool_timeouts.setdefault(DELEGATE, wall)

    def _subagents_dir(self) -> Path:
        return transcript.sessions_dir(self.runtime.home) / self.id

    def _observe_subagent(self, event: object) -> None:
        self.agent.observe(event)
        memory = self.agent.memory
        if isinstance(event, SubagentFinished) and event.answer and memory is not None:
            subagent_id = f"{self.id}/{event.name.replace(' ', '-')}"  # as session_search names it
            # off the loop: a provider may block; the parent's turn goes on meanwhile
            asyncio.get_running_loop().run_in_executor(
                None, memory.delegated, event.goal, event.answer, subagent_id
            )

    def _spawn(self, task: SubagentTask) -> Any:
        """A sub-agent: its own conversation and transcript, the session's model and tools."""
        path = self._subagents_dir() / f"{task.name.replace(' ', '-')}.jsonl"
        record = transcript.Transcript(path, on_failure=self._tell)
        record.record("session", id=f"{self.id}/{task.name}", model=self.settings.describe(),
                      cwd=self.cwd, parent=task.call_id, goal=task.goal)  # fmt: skip
        state = OwnToolsState(self.runtime.home)
        given = set(task.tools)

        def allowed() -> list[str]:  # what it was given, less what is switched off since;
            # and the agent's own it has, as long as their toolsets are on
            registry = self.runtime.registry
            on = self.runtime.effective_tools()
            return [n for n in on if n in given or registry.get_entry(n) is None]

        agents: list[Agent] = []  # its own, once made: its turn is its sub-agents' parent's
        tools = self._tools(
            state,
            depth=task.depth,
            offered=allowed,
            me=task,
            turn_id=lambda: agents[0].turn_id if agents else "",
        )
        executor = self.runtime.executor(broker=self.broker, session_id=self.id, cwd=self.cwd)
        executor.registry, executor.label, executor.parent = tools, task.name, task.call_id
        executor.budget = self.executor.budget
        # one session, one memory of the files it wrote: a script a sub-agent wrote asks when
        # its parent (or another sub-agent) runs it, and the other way round
        executor.written = self.executor.written
        self._limit_delegation(executor)
        agent = Agent(
            self.settings,
            tools,
            state,
            executor,
            allowed,
            transcript=record,
            client=self.agent.client,
            on_event=lambda event: _forward_subagent_event(event, self._observe),
            window=replace(self.agent.window),
            meter=self.agent.meter,
        )
        agents.append(agent)
        executor.on_event = agent.observe
        return SessionSubagent(agent, executor, record)

    @property
    def id(self) -> str:
        return self.transcript.session_id

    async def start(self, server: local_model.LocalServer | None = None) -> None:
        """Connect to the endpoint, starting the bundled local model when there is none.

        `server`: a bundled model's server already running (for this model and window) to
        share; its prompt cache then already holds the system prompt and the tools. Whoever
        started it stops it.
        """
        import openai

        settings = self.settings
        self._owns_local = server is None
        base_url: str | None  # as settings.base_url, which only a local model lacks
        if settings.local and server is not None:
            self.local = server
            base_url, api_key = server.base_url, server.api_key
        elif settings.local:
            self._tell(ModelProgress("loading"))
            self.local = await asyncio.to_thread(start_local, self.runtime, settings, self.window)
            base_url, api_key = self.local.base_url, self.local.api_key
        else:
            base_url, api_key = settings.base_url, settings.api_key or "not-needed"
        self.agent.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=2, timeout=120.0
        )
        self.agent.meter.tokenizer = tokens.tokenizer_for(
            settings.model,
            llama_url=self.local.base_url if self.local is not None else None,
            api_key=self.local.api_key if self.local is not None else None,
        )
        if self.local is not None and self._owns_local:  # a shared server is warm already
            self.warming = asyncio.ensure_future(self._prime())
            self.agent.ready = self.warming

    async def _prime(self) -> str:
        """The fixed prompt (system prompt and tools) into the new server's cache before the
        first request: restored from HERMES_HOME if a process read it before, else read now
        and saved (core.model.prompt_cache)."""
        assert self.local is not None
        spec = local_model.MODELS[self.settings.model]
        request = self.agent.warm_request()
        fixed = {"messages": request["messages"], "tools": request.get("tools", [])}
        template = local_model.TEMPLATE.read_text(encoding="utf-8")
        entry = prompt_cache.key(spec.sha256, local_model.build(), template, fixed)
        cache = prompt_cache.PromptCache(prompt_cache_dir(self.runtime.home))
        self.primed = await prompt_cache.prime(self.local, cache, entry, self.agent.warm)
        return self.primed

    async def turn(self, prompt: str) -> TurnFinished:
        self._running = asyncio.current_task()
        try:
            return await self.agent.run_turn(prompt)
        finally:
            self._running = None

    def cancel(self) -> None:
        self.agent.cancel()

    def replace_with(self, new: ChatSession) -> None:
        """A new chat replaces this session (the caller then closes this one): the plugins
        hear this one finalized and the new one reset (core.plugins.lifecycle)."""
        self.lifecycle.replaced_by(new.lifecycle)

    async def close(self, grace: float = 5.0, reason: str = "shutdown") -> None:
        """Cancel a running turn and let it record how it ended, then close everything;
        the plugins hear the session finalized (`reason`, unless a new one replaced it)."""
        running = self._running
        if running is not None and not running.done():
            self.agent.cancel()
            await asyncio.wait({running}, timeout=grace)
        await asyncio.to_thread(self.lifecycle.finalize, reason)
        if self.agent.memory is not None:
            await asyncio.to_thread(self.agent.memory.end, list(self.agent.messages))
        if self.warming is not None:
            self.warming.cancel()
            await asyncio.wait({self.warming}, timeout=grace)
        if self.agent.client is not None:
            await self.agent.client.close()
        if self.local is not None and self._owns_local:
            self.local.stop()
        if self._owns_executor:
            self.executor.shutdown()
        self.transcript.close()


class SessionSubagent:
    """A sub-agent for one delegate_task call (core.agent.delegation.Subagent)."""

    def __init__(self, agent: Agent, executor: Any, record: transcript.Transcript) -> None:
        self.agent, self.executor, self.record = agent, executor, record
        self.transcript = record.path
        self.cancel = agent.cancel

    async def run(self, prompt: str) -> TurnFinished:
        try:
            return await self.agent.run_turn(prompt)
        finally:
            self.executor.shutdown()
            self.record.close()


def _forward_subagent_event(event: object, observe: Callable[[object], None]) -> None:
    """A sub-agent's tool calls reach the parent (transcript, timeline); its text stays its own."""
    if isinstance(event, ToolCallStarted | ToolCallFinished):
        observe(event)


def _count(directory: Path, pattern: str) -> int:
    try:
        return len(list(directory.glob(pattern)))
    except OSError:  # unreadable: the names start again, in a transcript not saved anyway
        return 0


def _resume_notes(path: Path, skipped: int, repaired: int) -> list[str]:
    notes = []
    if skipped:
        notes.append(f"{path.name}: {skipped} damaged line(s) could not be read and were left out")
    if repaired:
        notes.append(
            f"{path.name}: {repaired} tool call(s) had no result; each now has an error "
            "result, so the model can go on"
        )
    return notes


def start_local(
    runtime: Runtime, settings: ModelSettings, window: Window
) -> local_model.LocalServer:
    """The bundled model's server for `settings`, started as a session starts it (blocks
    until it listens; whoever starts it stops it)."""
    # one number: the server's context is the window the budgets assume
    return local_model.start(
        local_model.MODELS[settings.model],
        models_dir(runtime.home),
        log=runtime.home / "logs" / "local-model.log",
        ctx=window.context,
        max_tokens=window.reply,
        slots=prompt_cache_dir(runtime.home),
        threads=settings.threads,
        batch_threads=settings.batch_threads,
    )


def session_window(runtime: Runtime, settings: ModelSettings) -> Window:
    """The context window a session of this model works in."""
    return Window.for_model(
        settings.model,
        settings.context_window,
        settings.max_tokens,
        runtime.config.get("compression.threshold"),
    )


def prompt_cache_dir(home: Path) -> Path:
    """Where the fixed prompt's saved state is kept (the local server's slot folder)."""
    return home / "state" / "prompt-cache"


def models_dir(home: Path) -> Path:
    """Where assembled models are kept: $HERMES_TUI_MODELS_DIR, else HERMES_HOME/models."""
    return Path(os.environ.get("HERMES_TUI_MODELS_DIR") or home / "models")


def transcript_path(home: Path, session_id: str) -> Path:
    return transcript.sessions_dir(home) / f"{session_id}.jsonl"


def _delegation(
    runtime: Runtime,
    depth: int,
    offered: Callable[[], list[str]],
    spawn: Callable[[SubagentTask], Any],
    emit: Callable[[object], None],
    counter: list[int],
    config: Config | None = None,
) -> Delegation:
    """`config`: fixed (a change previewed); None: the runtime's, as it is when asked."""
    return Delegation(
        depth=depth,
        limits=lambda: Limits.from_config((config or runtime.config).get),
        offered=offered,
        toolset_of=lambda name: getattr(runtime.registry.get_entry(name), "toolset", None),
        spawn=spawn,
        emit=emit,
        counter=counter,
    )


def _agent_tools(
    runtime: Runtime, state: OwnToolsState, session_id: str, delegation: Delegation
) -> ToolRouter:
    return agent_tools(
        runtime.registry,
        state,
        runtime.memory.registry,
        index=runtime.session_index,
        session_id=session_id,
        delegation=delegation,
    )


def probe_agent(runtime: Runtime, settings: ModelSettings, executor: Executor) -> Agent:
    """An agent with the tools, window and deferral a session's top agent has, to build the
    request its first round would send (`Agent.first_request`) without a session: no
    transcript, no memory provider, nothing that a sub-agent could start from."""
    window = session_window(runtime, settings)
    deferral = ToolSearchSettings.from_config(runtime.config).for_profile(settings.lean)
    tools = sizing_tools(runtime, runtime.config)
    state = OwnToolsState(runtime.home)
    return Agent(
        settings, tools, state, executor, runtime.effective_tools, window=window, deferral=deferral
    )


def sizing_tools(runtime: Runtime, config: Config) -> ToolRouter:
    """The tools a session's top agent would have under `config`, built as a session builds
    them, to size them (nothing runs: no sub-agent can start from here)."""

    def no_subagents(task: SubagentTask) -> Any:
        raise SessionError("sizes only: no sub-agent runs here")

    delegation = _delegation(
        runtime,
        0,
        lambda: runtime.effective_tools(config),
        no_subagents,
        lambda event: None,
        [0],
        config=config,
    )
    return _agent_tools(runtime, OwnToolsState(runtime.home), "", delegation)
