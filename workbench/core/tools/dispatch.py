"""Running one tool's handler and turning whatever happens into a result.

`dispatch` never raises: every exception a handler raises, `SystemExit` and
`KeyboardInterrupt` included, becomes an error result, and a result of the wrong type
becomes a contract error. Async handlers run to completion from sync code on a loop kept
per thread; `dispatch_async` awaits them, and runs sync handlers in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.own_output import speaking
from workbench.core.tools import errors
from workbench.core.tools.events import ToolSource

if TYPE_CHECKING:
    from workbench.core.tools.entry import ToolEntry

logger = logging.getLogger(__name__)

Handler = Callable[..., Any]


def dispatch(
    entry: ToolEntry | None, name: str, args: dict[str, Any], **kwargs: Any
) -> str | dict[str, Any]:
    """Run `entry`'s handler (None: no such tool) and return its result or an error."""
    if entry is None:
        return errors.unknown_tool(name)
    try:
        with _speaking(entry):
            if entry.is_async:
                result = run_coroutine_sync(entry.handler(args, **kwargs))
            else:
                result = entry.handler(args, **kwargs)
    except BaseException as exc:
        logger.warning("tool %s raised %s: %s", name, type(exc).__name__, exc)
        return errors.execution_failed(exc)
    return checked_result(name, result)


async def dispatch_async(
    entry: ToolEntry | None,
    name: str,
    args: dict[str, Any],
    *,
    thread_pool: Any = None,
    **kwargs: Any,
) -> str | dict[str, Any]:
    """`dispatch` for an event loop: async handlers are awaited, sync ones run in a thread
    (of `thread_pool` when given, else the loop's default executor).

    Cancellation of the awaiting task propagates (the caller's interrupt), everything
    else becomes an error result.
    """
    if entry is None:
        return errors.unknown_tool(name)
    try:
        if entry.is_async:
            with _speaking(entry):
                result = await entry.handler(args, **kwargs)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(thread_pool, _call_guarded, entry, args, kwargs)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        logger.warning("tool %s raised %s: %s", name, type(exc).__name__, exc)
        return errors.execution_failed(exc)
    if isinstance(result, _Raised):
        return errors.execution_failed(result.exc)
    return checked_result(name, result)


def checked_result(name: str, result: Any) -> str | dict[str, Any]:
    """A handler's result if it keeps the contract (a string or a multimodal envelope)."""
    if isinstance(result, str):
        return result
    if (
        isinstance(result, dict)
        and result.get("_multimodal") is True
        and isinstance(result.get("content"), list)
    ):
        return result
    return errors.result_contract(name, result)


@dataclass(slots=True)
class _Raised:
    exc: BaseException


def _call_guarded(entry: ToolEntry, args: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """Run a sync handler in a worker thread, keeping SystemExit from killing the thread."""
    try:
        with _speaking(entry):
            return entry.handler(args, **kwargs)
    except BaseException as exc:
        return _Raised(exc)


def _speaking(entry: ToolEntry) -> contextlib.AbstractContextManager[None]:
    """A plugin's handler speaks as its plugin: what it prints is that plugin's output."""
    if entry.source is ToolSource.PLUGIN:
        return speaking(entry.owner)
    return contextlib.nullcontext()


_thread_loops = threading.local()


def run_coroutine_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, inside a running loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_thread_loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = _thread_loops.loop = asyncio.new_event_loop()
        return loop.run_until_complete(coro)
    # A loop is running in this thread: it cannot be re-entered, so use a fresh thread.
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=runner, name="tool-async-bridge", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
