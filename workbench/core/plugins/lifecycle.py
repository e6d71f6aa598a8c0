"""A session's plugin hooks, as Hermes 0.19 calls them: the one place front ends call.

A front end makes one `SessionHooks` per session (`ChatSession` does for `chat` and the
workbench; `one_call_session` for `call` and `replay`), and the agent calls its turn hooks:

* `on_session_start(session_id, model, platform)`: once, as a new session's first turn
  begins (Hermes: when its system prompt is first built); not for a resumed session;
* each turn, `pre_llm_call` before the model is asked (`turn_context`), then with an answer
  `transform_llm_output` (`answer`) and `post_llm_call` (`answered`), and, however the turn
  ended, `on_session_end` (`turn_ended`);
* `on_session_finalize(session_id, platform, reason)`: once, when the session ends: reason
  `shutdown` when the app stops, `session_boundary` when a new session replaces it
  (`replaced_by`, which then calls the new one's `on_session_reset` with reason
  `new_session`).

Each callback runs under the registry's deadline (core.plugins.hooks): one that raises or
hangs is logged and left behind; the session goes on.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from workbench.core.plugins.hooks import HookRegistry

CLI, TUI = "cli", "tui"  # the platforms, as Hermes names its own front ends


class SessionHooks:
    def __init__(
        self,
        hooks: HookRegistry,
        session_id: str,
        *,
        model: str = "",
        platform: str = CLI,
        resumed: bool = False,
    ) -> None:
        self.hooks = hooks
        self.session_id = session_id
        self.model = model
        self.platform = platform
        self._lock = threading.Lock()
        self._started = resumed  # a resumed session started in an earlier process
        self._finalized = False

    def _once(self, flag: str) -> bool:
        """True the first time `flag` is asked for (then it is set)."""
        with self._lock:
            if getattr(self, flag):
                return False
            setattr(self, flag, True)
            return True

    # -- the session ---------------------------------------------------------------

    def start(self) -> None:
        """`on_session_start`, once (nothing for a resumed session)."""
        if self._once("_started"):
            self.hooks.invoke(
                "on_session_start",
                session_id=self.session_id,
                model=self.model,
                platform=self.platform,
            )

    def finalize(self, reason: str = "shutdown") -> None:
        """`on_session_finalize`, once, however many ways the session is ended."""
        if self._once("_finalized"):
            self.hooks.invoke(
                "on_session_finalize",
                session_id=self.session_id,
                platform=self.platform,
                reason=reason,
            )

    def replaced_by(self, new: SessionHooks) -> None:
        """A new session replaces this one (a new chat): this one is finalized
        (`session_boundary`), then the new one's `on_session_reset` (`new_session`). The new
        one's `on_session_start` comes with its first turn."""
        self.finalize("session_boundary")
        new.hooks.invoke(
            "on_session_reset",
            session_id=new.session_id,
            platform=new.platform,
            reason="new_session",
        )

    # -- a turn --------------------------------------------------------------------

    def turn_context(
        self,
        *,
        task_id: str,
        turn_id: str,
        user_message: str,
        history: list[dict[str, Any]],
        first: bool,
        sender_id: str = "",
    ) -> str:
        """`pre_llm_call`: what its callbacks answered (`{"context": ...}` or a non-blank
        string), joined by blank lines, as Hermes appends it to the user's message."""
        parts = []
        for _owner, answer in self.hooks.invoke(
            "pre_llm_call",
            session_id=self.session_id,
            task_id=task_id,
            turn_id=turn_id,
            user_message=user_message,
            conversation_history=copy.deepcopy(history),
            is_first_turn=first,
            model=self.model,
            platform=self.platform,
            sender_id=sender_id,
        ):
            if isinstance(answer, dict) and answer.get("context"):
                parts.append(str(answer["context"]))
            elif isinstance(answer, str) and answer.strip():
                parts.append(answer)
        return "\n\n".join(parts)

    def answer(self, text: str) -> str:
        """`transform_llm_output`: the first non-empty string replaces the answer."""
        replaced = self.hooks.first_string(
            "transform_llm_output",
            response_text=text,
            session_id=self.session_id,
            model=self.model,
            platform=self.platform,
        )
        return text if replaced is None else replaced

    def answered(
        self,
        *,
        task_id: str,
        turn_id: str,
        user_message: str,
        answer: str,
        history: list[dict[str, Any]],
    ) -> None:
        """`post_llm_call`, after a turn that answered."""
        self.hooks.invoke(
            "post_llm_call",
            session_id=self.session_id,
            task_id=task_id,
            turn_id=turn_id,
            user_message=user_message,
            assistant_response=answer,
            conversation_history=copy.deepcopy(history),
            model=self.model,
            platform=self.platform,
        )

    def turn_ended(self, *, task_id: str, turn_id: str, completed: bool, interrupted: bool) -> None:
        """`on_session_end`, at the end of every turn (Hermes: of every run_conversation)."""
        self.hooks.invoke(
            "on_session_end",
            session_id=self.session_id,
            task_id=task_id,
            turn_id=turn_id,
            completed=completed,
            interrupted=interrupted,
            model=self.model,
            platform=self.platform,
        )


@contextmanager
def one_call_session(
    hooks: HookRegistry, session_id: str, *, platform: str = CLI
) -> Iterator[SessionHooks]:
    """A session of tool calls without a model (`call`, `replay`): started before the
    first call, finalized (`shutdown`) after the last."""
    session = SessionHooks(hooks, session_id, platform=platform)
    session.start()
    try:
        yield session
    finally:
        session.finalize("shutdown")
