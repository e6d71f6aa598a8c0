"""Which model the agent talks to: `model:` in config.yaml, then environment, then flags.

With no endpoint configured anywhere, the bundled local model is used (local_model.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from workbench.core.config import Config
from workbench.core.local_model import DEFAULT_MODEL, MODELS

DEFAULTS = {"temperature": 0.2, "max_tokens": 2048, "max_rounds": 8, "turn_timeout": 900.0}


@dataclass(frozen=True)
class ModelSettings:
    model: str
    base_url: str | None = None  # None: the bundled local model
    api_key: str | None = None
    context_window: int | None = None
    temperature: float = DEFAULTS["temperature"]
    max_tokens: int = DEFAULTS["max_tokens"]
    max_rounds: int = DEFAULTS["max_rounds"]
    source: str = "config"  # where the endpoint came from: config, environment, flags, local
    # a small model's profile (core.guards): lean prompt, the shared tools only, nudges
    lean: bool = False
    turn_timeout: float = DEFAULTS["turn_timeout"]  # a turn's wall time, then it must answer

    @property
    def local(self) -> bool:
        return self.base_url is None

    def describe(self) -> str:
        where = "the bundled local model (offline)" if self.local else self.base_url
        return f"{self.model} via {where}"


def resolve(config: Config, env: dict[str, str] | None = None, **flags: Any) -> ModelSettings:
    env = dict(os.environ if env is None else env)
    section = config.get("model") or {}
    section = section if isinstance(section, dict) else {}
    key_env = str(section.get("api_key_env") or "")
    base_url = flags.get("base_url") or env.get("OPENAI_BASE_URL") or section.get("base_url")
    api_key = (
        flags.get("api_key")
        or env.get("OPENAI_API_KEY")
        or section.get("api_key")
        or (env.get(key_env) if key_env else None)
    )
    source = (
        "flags"
        if flags.get("base_url")
        else "environment"
        if env.get("OPENAI_BASE_URL")
        else "config"
    )
    if not base_url and api_key:
        base_url, source = "https://api.openai.com/v1", source
    settings = ModelSettings(
        model=str(flags.get("model") or section.get("name") or section.get("model") or ""),
        base_url=str(base_url) if base_url else None,
        api_key=str(api_key) if api_key else None,
        context_window=_int(section.get("context_window")),
        temperature=_number(section.get("temperature"), DEFAULTS["temperature"]),
        max_tokens=int(_number(section.get("max_tokens"), DEFAULTS["max_tokens"])),
        max_rounds=int(
            flags.get("max_rounds") or _number(section.get("max_rounds"), DEFAULTS["max_rounds"])
        ),
        source=source,
        lean=section.get("lean") is True,
        turn_timeout=_number(section.get("turn_timeout"), DEFAULTS["turn_timeout"]),
    )
    if settings.local:
        key = str(section.get("local") or DEFAULT_MODEL)
        key = key if key in MODELS else DEFAULT_MODEL
        return _local(settings, section, key)
    if not settings.model:
        settings = replace(settings, model="gpt-4o-mini")
    return settings


def _local(settings: ModelSettings, section: dict[str, Any], key: str) -> ModelSettings:
    """The bundled model's tuned defaults (bench/bench_local_tasks.py); config still wins."""
    spec = MODELS[key]
    configured = isinstance(section.get("max_tokens"), int | float)
    return replace(
        settings,
        model=key,
        source="local",
        context_window=settings.context_window or spec.context,  # the server's n_ctx too
        max_tokens=settings.max_tokens if configured else spec.reply,
        lean=section.get("lean") is not False,
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None


def _number(value: Any, default: float) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )
