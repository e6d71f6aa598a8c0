"""A round's reply as an openai ChatCompletion and back, for llm_execution middleware.

Hermes hands an llm_execution middleware the provider's response (`next_call` returns it);
a plugin reads `response.choices[0].message.content` / `.tool_calls` or answers its own.
Here `next_call` makes our streamed call and returns a ChatCompletion built from the
assembled reply; what the chain returns (a ChatCompletion, or a dict of that shape) is read
back as the round's reply, and anything else fails the turn.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

FINISHES = ("stop", "length", "tool_calls", "content_filter", "function_call")


@dataclass
class Read:
    """A reply read back from a response: its text, calls (by index), finish and usage."""

    text: str = ""
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish: str = "stop"
    usage: tuple[int, int] | None = None


def as_completion(
    text: str,
    calls: dict[int, dict[str, Any]],
    finish: str,
    usage: tuple[int, int],
    model: str,
    request_id: str,
) -> Any:
    """The assembled reply as an `openai.types.chat.ChatCompletion`."""
    from openai.types.chat import ChatCompletion

    tool_calls = [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": c["arguments"]},
        }
        for _, c in sorted(calls.items())
    ]
    if finish not in FINISHES:  # ours (one call a round): the calls, or the text, ended it
        finish = "tool_calls" if calls else "stop"
    return ChatCompletion.model_validate(
        {
            "id": f"chatcmpl-{request_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {
                        "role": "assistant",
                        "content": text or None,
                        "tool_calls": tool_calls or None,
                    },
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": usage[0] + usage[1],
            },
        }
    )


def read_completion(answer: Any) -> Read:
    """The reply in a ChatCompletion or a dict of its shape; ValueError when it is neither."""
    dump = getattr(answer, "model_dump", None)
    if callable(dump) and not isinstance(answer, dict):
        answer = dump()
    if not isinstance(answer, dict):
        raise ValueError(f"it returned {type(answer).__name__}, not a ChatCompletion")
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("its response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("its response's first choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError("its response's content is not a string")
    read = Read(text=content or "")
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError(f"its response's tool call {index} has no function name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        read.calls[index] = {
            "id": str(call.get("id") or ""),
            "name": function["name"],
            "arguments": arguments,
        }
    finish = choices[0].get("finish_reason")
    read.finish = finish if isinstance(finish, str) and finish else read.finish
    if read.calls and read.finish == "stop":
        read.finish = "tool_calls"
    usage = answer.get("usage")
    if isinstance(usage, dict):
        read.usage = (
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
        )
    return read
