"""Plugin hooks and middleware around every tool call, as Hermes's plugins register them.

Callbacks get keyword arguments only, as in Hermes, each in its own try/except. What runs:

* `pre_tool_call`: the first dict answer wins: `{"action": "block", "message": ...}` stops
  the call; `{"action": "approve", ...}` sends it to the approval broker (fail closed);
* `post_tool_call` after every call, with its status and duration;
* `transform_tool_result`: the first string returned replaces the result;
* `tool_request` middleware may replace the arguments; `tool_execution` middleware wraps
  the dispatch and fails closed: one that raises before calling `next_call` blocks the call
  (Hermes skips it and runs the call).

The other Hermes hook names are accepted and listed, not run by this front end.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.own_output import speaking

logger = logging.getLogger(__name__)

VALID_HOOKS = frozenset(
    {
        "pre_tool_call",
        "post_tool_call",
        "transform_terminal_output",
        "transform_tool_result",
        "transform_llm_output",
        "pre_llm_call",
        "post_llm_call",
        "pre_verify",
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "on_session_start",
        "on_session_end",
        "on_session_finalize",
        "on_session_reset",
        "subagent_start",
        "subagent_stop",
        "pre_gateway_dispatch",
        "pre_approval_request",
        "post_approval_response",
        "kanban_task_claimed",
        "kanban_task_completed",
        "kanban_task_blocked",
    }
)
RUN_HOOKS = frozenset({"pre_tool_call", "post_tool_call", "transform_tool_result"})
MIDDLEWARE_KINDS = frozenset({"tool_request", "tool_execution", "llm_request", "llm_execution"})
TELEMETRY = {"telemetry_schema_version": "hermes.observer.v1"}

Callback = Callable[..., Any]


class MiddlewareBlocked(Exception):
    """A tool_execution middleware failed before passing the call on: the call is blocked."""


@dataclass(frozen=True)
class Before:
    """What the pre-call stage decided."""

    args: dict[str, Any]
    block: str = ""  # a plugin's message when it blocked the call
    approve: str = ""  # a plugin's reason when it asked for approval
    owner: str = ""


class HookRegistry:
    """Hooks and middleware by owner (a plugin key), swapped atomically on reload."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: dict[str, tuple[tuple[str, Callback], ...]] = {}
        self._middleware: dict[str, tuple[tuple[str, Callback], ...]] = {}

    def replace_owner(
        self,
        owner: str,
        hooks: list[tuple[str, Callback]],
        middleware: Sequence[tuple[str, Callback]] = (),
    ) -> None:
        with self._lock:
            self._hooks = _swap(self._hooks, owner, hooks)
            self._middleware = _swap(self._middleware, owner, middleware)

    def remove_owner(self, owner: str) -> None:
        self.replace_owner(owner, [], [])

    @property
    def active(self) -> bool:
        """Whether any hook or middleware this front end runs is registered."""
        return any(self._hooks.get(n) for n in RUN_HOOKS) or any(
            self._middleware.get(k) for k in ("tool_request", "tool_execution")
        )

    @property
    def wraps_execution(self) -> bool:
        return bool(self._middleware.get("tool_execution"))

    def invoke(self, name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every callback of `name`; return (owner, result) for non-None results."""
        results = []
        for owner, callback in self._hooks.get(name, ()):
            try:
                with speaking(owner):
                    value = callback(**kwargs, **TELEMETRY)
            except Exception:
                logger.exception("hook %s of plugin %s failed", name, owner)
                continue
            if value is not None:
                results.append((owner, value))
        return results

    # -- the stages around a tool call ----------------------------------------------

    def before(self, tool_name: str, args: dict[str, Any], context: dict[str, Any]) -> Before:
        args = self._request_middleware(tool_name, args, context)
        for owner, answer in self.invoke(
            "pre_tool_call", tool_name=tool_name, args=args, middleware_trace=[], **context
        ):
            if not isinstance(answer, dict):
                continue
            action = answer.get("action")
            message = str(answer.get("message") or "")
            if action == "block":
                return Before(args, block=message or f"blocked by plugin {owner}", owner=owner)
            if action == "approve":
                return Before(
                    args, approve=message or f"plugin {owner} asks for approval", owner=owner
                )
        return Before(args)

    def _request_middleware(
        self, tool_name: str, args: dict[str, Any], context: dict[str, Any]
    ) -> dict[str, Any]:
        original = copy.deepcopy(args)
        for owner, callback in self._middleware.get("tool_request", ()):
            try:
                with speaking(owner):
                    answer = callback(
                        tool_name=tool_name,
                        args=copy.deepcopy(args),
                        original_args=original,
                        **context,
                    )
            except Exception as exc:
                raise MiddlewareBlocked(
                    f"tool_request middleware of {owner} failed: {exc}"
                ) from exc
            if isinstance(answer, dict) and isinstance(answer.get("args"), dict):
                args = answer["args"]
        return args

    def around(
        self,
        tool_name: str,
        args: dict[str, Any],
        context: dict[str, Any],
        dispatch: Callable[[dict[str, Any]], Any],
    ) -> Any:
        """Run `dispatch` inside the tool_execution middleware chain (outermost first)."""
        chain = list(self._middleware.get("tool_execution", ()))

        def call(index: int, payload: dict[str, Any]) -> Any:
            if index == len(chain):
                return dispatch(payload)
            owner, callback = chain[index]
            used: list[bool] = []

            def next_call(new_payload: dict[str, Any] | None = None) -> Any:
                if used:
                    raise RuntimeError("next_call may be called only once")
                used.append(True)
                return call(index + 1, payload if new_payload is None else new_payload)

            try:
                with speaking(owner):
                    return callback(
                        tool_name=tool_name, args=payload, next_call=next_call, **context
                    )
            except MiddlewareBlocked:
                raise
            except Exception as exc:
                if not used:  # failed before passing the call on: fail closed
                    raise MiddlewareBlocked(
                        f"tool_execution middleware of {owner} failed: {exc}"
                    ) from exc
                raise

        return call(0, args)

    def after(
        self,
        tool_name: str,
        args: dict[str, Any],
        result: Any,
        context: dict[str, Any],
        status: str,
        duration_ms: float,
    ) -> Any:
        error_message = ""
        if status != "ok" and isinstance(result, str):
            error_message = result[:500]
        details = dict(
            tool_name=tool_name,
            args=args,
            result=result,
            duration_ms=duration_ms,
            status=status,
            error_type=None if status == "ok" else status,
            error_message=error_message,
            **context,
        )
        self.invoke("post_tool_call", middleware_trace=[], **details)
        if isinstance(result, str):
            for _owner, value in self.invoke("transform_tool_result", **details):
                if isinstance(value, str):
                    return value
        return result


def _swap(
    table: dict[str, tuple[tuple[str, Callback], ...]],
    owner: str,
    items: Sequence[tuple[str, Callback]],
) -> dict[str, tuple[tuple[str, Callback], ...]]:
    """A new table without `owner`'s entries, then with the new ones."""
    out = {name: tuple(e for e in entries if e[0] != owner) for name, entries in table.items()}
    for name, callback in items:
        out[name] = (*out.get(name, ()), (owner, callback))
    return {name: entries for name, entries in out.items() if entries}


hooks = HookRegistry()
