"""An approved sampling request, sent to the session's model (an OpenAI-protocol endpoint)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.mcp.asks import Sampler, SamplingRequest

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

TIMEOUT = 120.0


def endpoint_sampler(base_url: str, api_key: str, model: str) -> Sampler:
    """A sampler for one endpoint: one request, no tools, the server's limits kept."""

    async def sample(request: SamplingRequest) -> tuple[str, str]:
        import openai

        async with openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", max_retries=1, timeout=TIMEOUT
        ) as client:
            response = await client.chat.completions.create(
                model=model,
                messages=_messages(request),
                max_tokens=request.max_tokens,
                stream=False,
                # No temperature of the server's: the field is left out, not sent as null.
                temperature=openai.omit if request.temperature is None else request.temperature,
            )
        choice = response.choices[0] if response.choices else None
        return (choice.message.content or "") if choice else "", response.model or model

    return sample


def _messages(request: SamplingRequest) -> list[ChatCompletionMessageParam]:
    """The request's system prompt (if any) and messages; a role but "assistant" is the
    user's, so a server cannot speak as the system."""
    messages: list[ChatCompletionMessageParam] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    for m in request.messages:
        if m["role"] == "assistant":
            messages.append({"role": "assistant", "content": m["text"]})
        else:
            messages.append({"role": "user", "content": m["text"]})
    return messages
