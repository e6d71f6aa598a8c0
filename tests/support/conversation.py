"""What the chat API accepts as a conversation, checked on the messages a request sends."""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def assert_valid_conversation(messages: list[dict[str, Any]]) -> None:
    """Each assistant tool call is answered by one tool message right after that assistant
    message (before any other message), and no tool message answers anything else."""
    open_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            call_id = message["tool_call_id"]
            assert call_id in open_ids, f"message {index}: tool result for no open call {call_id}"
            assert isinstance(message["content"], str), f"message {index}: content not text"
            open_ids.remove(call_id)
            continue
        assert not open_ids, f"message {index} ({role}) comes before results for {open_ids}"
        if role == "assistant":
            open_ids = {c["id"] for c in message.get("tool_calls") or []}
    assert not open_ids, f"the conversation ends before results for {open_ids}"


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def assert_alternating(messages: list[dict[str, Any]]) -> None:
    """No two user messages in a row, nor two assistant messages (some endpoints refuse
    either, and a model reads each as one speaker's turn); system text only first."""
    roles = [m["role"] for m in messages]
    for index, (before, role) in enumerate(pairwise(roles), 1):
        assert role != "system", f"message {index}: system text after the start: {roles}"
        assert not (before == role and role in ("user", "assistant")), (
            f"messages {index - 1} and {index} are both {role}: {roles}"
        )
