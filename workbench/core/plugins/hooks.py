"""Plugin hooks and middleware, run where Hermes 0.19 runs them.

Callbacks get keyword arguments only, as in Hermes, each on its own daemon thread under a
deadline (`HOOK_TIMEOUT`, `plugins.hook_timeout` in config.yaml): one that raises or does
not return in time is logged and left behind, and the turn or call goes on. What runs:

* around every tool call: `pre_tool_call` (the first dict answer wins:
  `{"action": "block", "message": ...}` stops the call; `{"action": "approve", ...}` sends
  it to the approval broker, fail closed), `post_tool_call` (its status and duration),
  `transform_tool_result` (the first string replaces the result); `tool_request`
  middleware may replace the arguments, `tool_execution` middleware wraps the dispatch and
  fails closed: one that raises before calling `next_call` blocks the call (Hermes skips it
  and runs the call);
* `transform_terminal_output` on a foreground terminal command's output (the first string
  replaces it, still cut to the terminal's limit);
* each turn (core.agent.loop): `pre_llm_call` (its context is appended to the copy of the
  user's message the model is sent), `transform_llm_output` (the first non-empty string
  replaces the answer), `post_llm_call`, `on_session_end`; `llm_request` middleware may
  replace each model request, and fails closed (one that raises ends the turn);
  `llm_execution` middleware wraps each model call (`next_call(request)` makes it and
  returns an openai ChatCompletion; what the chain returns is the round's reply), and fails
  closed as `tool_execution` does;
* a session's life (core.plugins.lifecycle): `on_session_start`, `on_session_reset`,
  `on_session_finalize`;
* around each sub-agent (core.agent.delegation): `subagent_start`, `subagent_stop`.

The other Hermes hook names (`NOT_RUN`) are accepted and listed, not run by this front end.
"""

from __future__ import annotations

import contextvars
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
TOOL_HOOKS = frozenset({"pre_tool_call", "post_tool_call", "transform_tool_result"})
TURN_HOOKS = frozenset({"pre_llm_call", "transform_llm_output", "post_llm_call", "on_session_end"})
SESSION_HOOKS = frozenset({"on_session_start", "on_session_reset", "on_session_finalize"})
SUBAGENT_HOOKS = frozenset({"subagent_start", "subagent_stop"})
RUN_HOOKS = TOOL_HOOKS | TURN_HOOKS | SESSION_HOOKS | SUBAGENT_HOOKS | {"transform_terminal_output"}
NOT_RUN = VALID_HOOKS - RUN_HOOKS  # accepted and listed: gateway, kanban, API hooks
MIDDLEWARE_KINDS = frozenset({"tool_request", "tool_execution", "llm_request", "llm_execution"})
RUN_MIDDLEWARE = MIDDLEWARE_KINDS
HOOK_TIMEOUT = 5.0  # seconds a hook callback may take before it is abandoned
TELEMETRY = {"telemetry_schema_version": "hermes.observer.v1"}

Callback = Callable[..., Any]
# what the terminal is handed to run transform_terminal_output: (command, output, returncode)
# -> the output to keep
TerminalOutputHook = Callable[[str, str, int | None], str]


def hook_rows(names: Sequence[str]) -> list[dict[str, Any]]:
    """A plugin's hooks as `plugins --json` lists them: each name and whether it runs here."""
    return [{"name": name, "runs": name in RUN_HOOKS} for name in names]


def hooks_line(names: Sequence[str]) -> str:
    """A plugin's hooks in a few words: those that run, and those accepted but not run."""
    runs = [n for n in names if n in RUN_HOOKS]
    idle = [n for n in names if n not in RUN_HOOKS]
    said = [f"hooks: {', '.join(runs)}"] if runs else []
    if idle:
        said.append(f"hooks accepted, not run by hermes-tui: {', '.join(idle)}")
    return "; ".join(said)


class MiddlewareBlocked(Exception):
    """A middleware failed before passing the call on: the call (or model request) is blocked."""


@dataclass(frozen=True)
class Failed:
    """What a callback that raised or did not return in time answered: nothing, and why."""

    why: str


@dataclass(frozen=True)
class Before:
    """What the pre-call stage decided."""

    args: dict[str, Any]
    block: str = ""  # a plugin's message when it blocked the call
    approve: str = ""  # a plugin's reason when it asked for approval
    owner: str = ""


class HookRegistry:
    """Hooks and middleware by owner (a plugin key), swapped atomically on reload."""

    def __init__(self, timeout: float = HOOK_TIMEOUT) -> None:
        self.timeout = timeout  # per callback; one that takes longer is abandoned
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
        """Whether any hook or middleware that runs around a tool call is registered."""
        return any(self._hooks.get(n) for n in TOOL_HOOKS) or any(
            self._middleware.get(k) for k in ("tool_request", "tool_execution")
        )

    def has(self, name: str) -> bool:
        """Whether a callback of hook `name` is registered."""
        return bool(self._hooks.get(name))

    def has_middleware(self, kind: str) -> bool:
        return bool(self._middleware.get(kind))

    @property
    def wraps_execution(self) -> bool:
        return bool(self._middleware.get("tool_execution"))

    def invoke(self, name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every callback of `name`, in order; return (owner, result) for non-None
        results. A callback that raises or takes longer than `timeout` is logged and
        skipped: it never takes the caller down."""
        results = []
        for owner, callback in self._hooks.get(name, ()):
            value = self._call(f"hook {name}", owner, callback, {**TELEMETRY, **kwargs})
            if value is not None and not isinstance(value, Failed):
                results.append((owner, value))
        return results

    def _call(self, what: str, owner: str, callback: Callback, kwargs: dict[str, Any]) -> Any:
        """`callback(**kwargs)` on a daemon thread of its own, waited for `timeout` seconds;
        Failed when it raised or is still running (it runs on, unwaited)."""
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                with speaking(owner):
                    box["value"] = callback(**kwargs)
            except BaseException as exc:  # SystemExit too: it would end only this thread
                box["error"] = exc

        context = contextvars.copy_context()
        thread = threading.Thread(
            target=context.run, args=(run,), name=f"{what} of {owner}", daemon=True
        )
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            logger.warning(
                "%s of plugin %s did not return within %.3g s: abandoned (it may still be "
                "running); the turn goes on",
                what,
                owner,
                self.timeout,
            )
            return Failed(f"it did not answer within {self.timeout:.3g} s")
        if "error" in box:
            error = box["error"]
            logger.error(
                "%s of plugin %s failed: %s: %s", what, owner, type(error).__name__, error,
                exc_info=error,
            )  # fmt: skip
            return Failed(f"{type(error).__name__}: {error}")
        return box.get("value")

    def first_string(self, name: str, **kwargs: Any) -> str | None:
        """The first non-empty string a callback of `name` answered (None: none did)."""
        for _owner, value in self.invoke(name, **kwargs):
            if isinstance(value, str) and value:
                return value
        return None

    # -- the model request ----------------------------------------------------------

    def llm_request(self, request: dict[str, Any], **context: Any) -> dict[str, Any]:
        """The request after `llm_request` middleware: each may answer `{"request": {...}}`
        to replace it (a deep copy of what it answered is used). One that raises or does
        not answer in time blocks the request (MiddlewareBlocked): Hermes sends it anyway."""
        chain = self._middleware.get("llm_request", ())
        if not chain:
            return request
        original = copy.deepcopy(request)
        current = copy.deepcopy(request)
        for owner, callback in chain:
            answer = self._call(
                "llm_request middleware",
                owner,
                callback,
                {
                    **TELEMETRY,
                    "middleware_schema_version": "hermes.middleware.v1",
                    **context,
                    "request": copy.deepcopy(current),
                    "original_request": copy.deepcopy(original),
                },
            )
            if isinstance(answer, Failed):
                raise MiddlewareBlocked(
                    f"llm_request middleware of plugin {owner} failed ({answer.why}): the "
                    "model request was not sent"
                )
            if isinstance(answer, dict) and isinstance(answer.get("request"), dict):
                current = copy.deepcopy(answer["request"])
        return current

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
            answer = self._call(
                "tool_request middleware",
                owner,
                callback,
                {
                    **context,
                    "tool_name": tool_name,
                    "args": copy.deepcopy(args),
                    "original_args": original,
                },
            )
            if isinstance(answer, Failed):
                raise MiddlewareBlocked(f"tool_request middleware of {owner} failed: {answer.why}")
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
        return self._chain(
            "tool_execution", "args", args, dispatch, {"tool_name": tool_name, **context}, ""
        )

    def llm_execution(
        self, request: dict[str, Any], next_call: Callable[[dict[str, Any]], Any], **context: Any
    ) -> tuple[str, Any]:
        """Run the model call `next_call` inside the llm_execution middleware chain
        (outermost first), with Hermes's arguments; return the outermost plugin and what it
        answered (the response). Fails closed as tool_execution does."""
        chain = self._middleware.get("llm_execution", ())
        extra = {
            **TELEMETRY,
            "middleware_schema_version": "hermes.middleware.v1",
            "middleware_trace": [],
            **context,
            "original_request": copy.deepcopy(request),
        }
        answer = self._chain(
            "llm_execution",
            "request",
            request,
            next_call,
            extra,
            ": the model request was not sent",
        )
        return (chain[0][0] if chain else ""), answer

    def _chain(
        self,
        kind: str,
        key: str,
        payload: dict[str, Any],
        dispatch: Callable[[dict[str, Any]], Any],
        extra: dict[str, Any],
        blocked: str,
    ) -> Any:
        """`dispatch` inside the `kind` middleware chain: each callback gets `extra`, the
        payload under `key` and `next_call`. One that raises before calling `next_call`
        blocks the call (MiddlewareBlocked: fail closed; Hermes skips it and runs the call)."""
        chain = list(self._middleware.get(kind, ()))

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
                    return callback(**extra, **{key: payload}, next_call=next_call)
            except MiddlewareBlocked:
                raise
            except Exception as exc:
                if not used:  # failed before passing the call on: fail closed
                    raise MiddlewareBlocked(
                        f"{kind} middleware of {'plugin ' if blocked else ''}{owner} failed: "
                        f"{exc}{blocked}"
                    ) from exc
                raise

        return call(0, payload)

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

    def terminal_output(
        self, command: str, output: str, returncode: int | None, task_id: str, env_type: str
    ) -> str:
        """A foreground terminal command's output after `transform_terminal_output`: the
        first string a callback answers replaces it."""
        for _owner, value in self.invoke(
            "transform_terminal_output",
            command=command,
            output=output,
            returncode=returncode,
            task_id=task_id,
            env_type=env_type,
        ):
            if isinstance(value, str):
                return value
        return output


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
