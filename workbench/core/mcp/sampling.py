"""An approved sampling request, sent to the session's model (an OpenAI-protocol endpoint)."""

from __future__ import annotations

from workbench.core.mcp.asks import Sampler, SamplingRequest

TIMEOUT = 120.0


def endpoint_sampler(base_url: str, api_key: str, model: str) -> Sampler:
    """A sampler for one endpoint: one request, no tools, the server's limits kept."""

    async def sample(request: SamplingRequest) -> tuple[str, str]:
        import openai

        messages = [{"role": "system", "content": request.system_prompt}] * bool(
            request.system_prompt
        )
        messages += [
            {
                "role": m["role"] if m["role"] in ("user", "assistant") else "user",
                "content": m["text"],
            }
            for m in request.messages
        ]
        extra = {} if request.temperature is None else {"temperature": request.temperature}
        async with openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", max_retries=1, timeout=TIMEOUT
        ) as client:
            response = await client.chat.completions.create(
                model=model,
                messages=messages,
                max_tokens=request.max_tokens,
                stream=False,
                **extra,
            )
        choice = response.choices[0] if response.choices else None
        return (choice.message.content or "") if choice else "", response.model or model

    return sample
