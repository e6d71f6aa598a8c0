"""Asking a person: the one way the core waits for someone's answer, and fails closed.

Approvals, an MCP server's elicitation and sampling requests, the agent's `clarify`
question and whether to trust a project's changed plugins and rules all go through an
`Asker`. Each ask is in the pending table under an id until it is
settled, exactly once, by the first of:
- an answer (`answer`, from any thread; a later or second answer is ignored and logged),
- its deadline (the ask's default: deny, decline, no answer),
- the call that asked being cancelled, the last front end going away, or `close` (the
  default again).
Asking when no front end can answer that kind settles at once with the default.

Each ask and its end are events (`Asked`, `Settled`) for the asker's listeners, the front
ends' one stream of core events: the TUI shows its modal from `Asked` and closes it on
`Settled`; a headless front end attaches a callable that is handed each ask instead.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

logger = logging.getLogger(__name__)


class AskKind(StrEnum):
    APPROVAL = "approval"  # a tool call waits for a person's yes (execution.approval)
    ELICITATION = "elicitation"  # an MCP server asks for input (mcp.asks)
    SAMPLING = "sampling"  # an MCP server asks for a completion of our model (mcp.asks)
    CLARIFY = "clarify"  # the agent asks the user a question (agent.own_tools)
    TRUST = "trust"  # a project's plugins or rules changed since trusted (trust)


EVERY_KIND = frozenset(AskKind)
ANSWERED = "answered"  # Settled.why of an ask a person answered
NO_ANSWER = "no answer in time"  # Settled.why of an ask whose deadline passed
NO_ONE = "no one can be asked"  # Settled.why of an ask no front end could answer


@dataclass(frozen=True, slots=True)
class Ask:
    """One question waiting for a person. `subject` is what the front end shows (an
    ApprovalRequest, an Elicitation, a SamplingRequest, a Question); its `id` and `deadline`
    are the ask's. `call_id`: the tool call that waits on it, when one does."""

    id: int
    kind: AskKind
    subject: Any
    deadline: float  # time.monotonic() at which silence becomes the default
    call_id: str = ""

    @classmethod
    def about(cls, kind: AskKind, subject: Any, call_id: str = "") -> Ask:
        """The ask of a subject made with the asker's `next_id()` and `deadline()`."""
        return cls(subject.id, kind, subject, subject.deadline, call_id)


@dataclass(frozen=True, slots=True)
class Asked:
    """An event: a person is asked (the TUI queues its modal)."""

    ask: Ask


@dataclass(frozen=True, slots=True)
class Settled:
    """An event: the ask ended; `answer` is what the asker got (the default unless `why` is
    ANSWERED), `why` says how it ended."""

    ask: Ask
    answer: Any
    why: str


@dataclass(frozen=True, slots=True)
class Question:
    """What `clarify` asks: the text and, when the agent offers them, the choices."""

    id: int
    text: str
    choices: tuple[str, ...]
    deadline: float


FrontEnd = Callable[[Ask], None]
Listener = Callable[[object], None]


@dataclass
class _Waiting:
    ask: Ask
    default: Any
    future: asyncio.Future[tuple[Any, str]]
    loop: asyncio.AbstractEventLoop


class Asker:
    """The pending asks of one workbench session, shared by everything that asks."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the table is read and settled from any thread
        self._pending: dict[int, _Waiting] = {}
        self._front_ends: list[tuple[FrontEnd | None, frozenset[AskKind]]] = []
        self._listeners: list[Listener] = []

    # -- who answers, who listens ----------------------------------------------------------

    def attach(
        self, front_end: FrontEnd | None = None, kinds: Collection[AskKind] = EVERY_KIND
    ) -> Callable[[], None]:
        """Someone can answer asks of `kinds`: `front_end(ask)` is called on the asking
        thread for each (None: the front end reads `Asked` from the listeners' stream).
        Returns `detach`; when no one is left for a kind, its pending asks fail closed."""
        entry = (front_end, frozenset(kinds))
        self._front_ends.append(entry)

        def detach() -> None:
            if entry in self._front_ends:
                self._front_ends.remove(entry)
            gone = [k for k in entry[1] if not self.can_ask(k)]
            if gone:
                self.close("the front end that could answer went away", gone)

        return detach

    def can_ask(self, kind: AskKind) -> bool:
        return any(kind in kinds for _, kinds in self._front_ends)

    def listen(self, listener: Listener) -> Callable[[], None]:
        """`listener(event)` gets every Asked and Settled, from the thread that asked."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: Asked | Settled) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("an ask listener failed")

    # -- asking ----------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    @staticmethod
    def deadline(timeout: float) -> float:
        return time.monotonic() + timeout

    def pending(self, kind: AskKind | None = None) -> list[Ask]:
        with self._lock:
            waiting = [w.ask for w in self._pending.values()]
        return sorted((a for a in waiting if kind is None or a.kind is kind), key=lambda a: a.id)

    async def ask(self, ask: Ask, default: Any) -> tuple[Any, str]:
        """Wait for a person's answer to `ask`: (the answer, ANSWERED), or (`default`, why
        not). Never raises but CancelledError (the ask is then settled with the default)."""
        if not self.can_ask(ask.kind):
            return self._settled(ask, default, NO_ONE)
        loop = asyncio.get_running_loop()
        waiting = _Waiting(ask, default, loop.create_future(), loop)
        with self._lock:
            self._pending[ask.id] = waiting
        self._emit(Asked(ask))
        for front_end, kinds in list(self._front_ends):
            if front_end is not None and ask.kind in kinds and not self._show(front_end, ask):
                self._settle(ask.id, default, "the front end failed to show it")
        try:
            left = max(0.0, ask.deadline - time.monotonic())
            answer, why = await asyncio.wait_for(asyncio.shield(waiting.future), left)
        except TimeoutError:
            answer, why = await self._expired(waiting)
        except asyncio.CancelledError:
            self._settle(ask.id, default, "withdrawn: the call was cancelled")
            self._emit(Settled(ask, default, "withdrawn: the call was cancelled"))
            raise
        return self._settled(ask, answer, why)

    def _show(self, front_end: FrontEnd, ask: Ask) -> bool:
        try:
            front_end(ask)
        except Exception:
            logger.exception("a front end failed to show an ask; it fails closed")
            return False
        return True

    async def _expired(self, waiting: _Waiting) -> tuple[Any, str]:
        """The deadline passed: the default, unless an answer took the ask first (then it
        is already on its way to the future)."""
        self._settle(waiting.ask.id, waiting.default, NO_ANSWER)
        return await waiting.future

    def _settled(self, ask: Ask, answer: Any, why: str) -> tuple[Any, str]:
        self._emit(Settled(ask, answer, why))
        if why != ANSWERED:
            logger.info("%s %d settled without an answer: %s", ask.kind, ask.id, why)
        return answer, why

    # -- settling --------------------------------------------------------------------------

    def answer(self, ask_id: int, answer: Any) -> bool:
        """A person's answer, from any thread. Only the first settles the ask; False (and a
        log line) when it is no longer pending: answered, timed out, withdrawn."""
        if self._settle(ask_id, answer, ANSWERED):
            return True
        logger.info("ask %d: an answer came after it was settled; ignored", ask_id)
        return False

    def close(self, why: str = "closed", kinds: Collection[AskKind] = EVERY_KIND) -> None:
        """Every pending ask of `kinds` fails closed (the front end or the session ends)."""
        for ask in self.pending():
            if ask.kind in kinds:
                with self._lock:
                    waiting = self._pending.get(ask.id)
                if waiting is not None:
                    self._settle(ask.id, waiting.default, why)

    def _settle(self, ask_id: int, answer: Any, why: str) -> bool:
        with self._lock:
            waiting = self._pending.pop(ask_id, None)
        if waiting is None:
            return False
        result = (answer, why)

        def resolve() -> None:
            if not waiting.future.done():
                waiting.future.set_result(result)

        try:
            waiting.loop.call_soon_threadsafe(resolve)
        except RuntimeError:  # its loop is closed: nobody waits any more
            logger.info("ask %d: its loop has closed", ask_id)
        return True
