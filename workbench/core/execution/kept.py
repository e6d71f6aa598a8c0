"""Every call an executor runs, kept in its tool's history (see `core/history.py`).

An executor's events are watched where they come out: a call's start carries its arguments,
its end the status, result and time; `CallKeeper` pairs the two and hands the finished call
to `keep` (which saves it now, or shows it at once and saves it on another thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from workbench.core.execution.events import ToolCallFinished, ToolCallStarted
from workbench.core.history import CallEntry, CallHistory, entry
from workbench.core.tools.deferral import TOOL_CALL

logger = logging.getLogger(__name__)

FORM_CALL = "form-"  # the id prefix of calls run by hand (the run form, a re-run)


def by_hand(call_id: str) -> bool:
    """Whether a call was run by hand (the run form, a re-run), not by an agent."""
    return call_id.startswith(FORM_CALL)


class CallKeeper:
    def __init__(self, keep: Callable[[CallEntry], None], origin: str = "") -> None:
        self.keep = keep
        self.origin = origin  # "": from the call's id (FORM_CALL: form, else agent)
        self._arguments: dict[str, object] = {}

    def __call__(self, event: object) -> None:
        if isinstance(event, ToolCallStarted | ToolCallFinished) and event.name == TOOL_CALL:
            return  # the bridge: the call it made is kept, under its own tool, with `via`
        if isinstance(event, ToolCallStarted):
            self._arguments[event.call_id] = event.arguments
        elif isinstance(event, ToolCallFinished):
            arguments = self._arguments.pop(event.call_id, None)
            origin = self.origin or ("form" if by_hand(event.call_id) else "agent")
            self.keep(
                entry(
                    event.name,
                    arguments if isinstance(arguments, dict) else None,
                    event.status,
                    event.content,
                    event.duration,
                    origin,
                    event.spilled,
                    event.via,
                )
            )


def saving(history: CallHistory) -> Callable[[CallEntry], None]:
    """Keep a call by saving it at once; a history that cannot be written loses only that."""

    def keep(call: CallEntry) -> None:
        try:
            history.add(call)
        except OSError as exc:
            logger.warning("call history not saved: %s", exc)

    return keep


def watching(keeper: CallKeeper, then: Callable[[object], None] | None) -> Callable[[object], None]:
    """An executor's event callback that keeps its calls, then passes every event on."""

    def observe(event: object) -> None:
        try:
            keeper(event)
        except Exception:  # the history never stops a call's events reaching the front end
            logger.exception("keeping a call in the history failed")
        if then is not None:
            then(event)

    return observe


def by_caller(
    hand: Callable[[object], None], agent: Callable[[object], None]
) -> Callable[[object], None]:
    """The event callback of an executor an agent shares with calls run by hand: a call's
    events go to whoever made it (told by the call's id), the rest (a checkpoint's) to the
    agent, which passes them on."""

    def route(event: object) -> None:
        if isinstance(event, ToolCallStarted | ToolCallFinished) and by_hand(event.call_id):
            hand(event)
        else:
            agent(event)

    return route
