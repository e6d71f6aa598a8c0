"""Which model the agent talks to, read as Hermes reads it, and where each part came from.

`model:` in config.yaml is a model name or a mapping: `default` (or `model`, or our `name`),
`provider`, `base_url`, `max_tokens`, and our own keys (`api_key`, `api_key_env`,
`context_window`, `temperature`, `max_rounds` (Hermes's `agent.max_turns` wins), `local`,
`threads`). API keys come from the environment or `$HERMES_HOME/.env` (the environment
wins). The endpoint, first found wins:

1. `--base-url` (its key: `--api-key`, else OPENAI_API_KEY);
2. `model.provider`: a provider that speaks the OpenAI protocol (core.model.providers), with its
   base URL and key variables; `custom` (or `ollama`, `vllm`...) needs `model.base_url`;
3. OPENAI_BASE_URL (with OPENAI_API_KEY), then `model.base_url`;
4. a key and no endpoint: `--api-key` or `model.api_key(_env)` mean OpenAI; a model named
   in config.yaml goes to OpenRouter with OPENROUTER_API_KEY, else OpenAI with
   OPENAI_API_KEY; with no model named, OPENAI_API_KEY means OpenAI's gpt-4o-mini;
5. nothing: the bundled local model (local_model.py), also when the name is a bundled one.

A configured choice that cannot be used raises ModelConfigError saying why and how to fix
it: a user who named a provider never silently gets another model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, TypedDict
from urllib.parse import urlparse

from workbench.core import hermes_keys
from workbench.core.config import Config
from workbench.core.model import envfile, providers
from workbench.core.model.local import DEFAULT_MODEL, MODELS


class _Defaults(TypedDict):
    temperature: float
    max_tokens: int
    max_rounds: int
    turn_timeout: float


DEFAULTS: _Defaults = {
    "temperature": 0.2,
    "max_tokens": 2048,
    "max_rounds": 8,
    "turn_timeout": 900.0,
}
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
DOTENV = "$HERMES_HOME/.env"
CONFIG = "config.yaml"


class ModelConfigError(Exception):
    """The configured model cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True)
class ModelSettings:
    model: str
    base_url: str | None = None  # None: the bundled local model
    api_key: str | None = None
    context_window: int | None = None
    temperature: float = DEFAULTS["temperature"]
    max_tokens: int = DEFAULTS["max_tokens"]
    max_rounds: int = DEFAULTS["max_rounds"]
    source: str = ""  # where the choice came from, said to the user
    provider: str = ""  # the provider's id ("openrouter", "custom"); empty for the bundled one
    key_source: str = ""  # where the key came from (never the key itself)
    # a small model's profile (core.agent.guards): lean prompt, the shared tools only, nudges
    lean: bool = False
    require_tool: bool = False  # the first round of a turn must call a tool
    turn_timeout: float = DEFAULTS["turn_timeout"]  # a turn's wall time, then it must answer
    # the bundled model's threads (model.threads): reading the prompt, generating; None:
    # chosen by local.default_threads / default_batch_threads
    batch_threads: int | None = None
    threads: int | None = None

    @property
    def local(self) -> bool:
        return self.base_url is None

    def describe(self) -> str:
        """One line: the model, the endpoint, the key's origin and why they were chosen."""
        if self.local:
            where = "the bundled local model (offline)"
        else:
            key = f"key {self.key_source}" if self.key_source else "no key"
            where = f"{self.provider or 'endpoint'} ({shown_url(self.base_url or '')}), {key}"
        return f"{self.model} via {where}" + (f" — {self.source}" if self.source else "")


@dataclass(frozen=True)
class _Endpoint:
    provider: str
    base_url: str
    origin: str
    api_key: str | None = None
    key_source: str = ""


class _Keys:
    """Variables from the environment, else from $HERMES_HOME/.env, and which one it was."""

    def __init__(self, env: dict[str, str], dotenv: dict[str, str]) -> None:
        self.env, self.dotenv = env, dotenv

    def find(self, name: str) -> tuple[str, str] | None:
        for values, where in ((self.env, "the environment"), (self.dotenv, DOTENV)):
            value = (values.get(name) or "").strip()
            if value:
                return value, f"{name} from {where}"
        return None


def resolve(
    config: Config,
    env: dict[str, str] | None = None,
    dotenv: dict[str, str] | None = None,
    **flags: Any,
) -> ModelSettings:
    """The model to use. `env` defaults to os.environ, `dotenv` to $HERMES_HOME/.env's values."""
    if dotenv is None:
        dotenv = envfile.load(config.path.parent).values
    keys = _Keys(dict(os.environ if env is None else env), dotenv)
    section, plain = _section(config.get("model"))
    # --max-rounds, else agent.max_turns (Hermes's), else model.max_rounds (ours)
    rounds = flags.get("max_rounds") or hermes_keys.read(config.get, hermes_keys.MAX_TURNS).value
    name, name_from = _name(section, plain, flags)
    endpoint = _endpoint(section, keys, flags, name)
    common: dict[str, Any] = {  # the settings every endpoint shares
        "context_window": _int(section.get("context_window"))
        or _int(section.get("context_length")),
        "temperature": _number(section.get("temperature"), DEFAULTS["temperature"]),
        "max_tokens": int(_number(section.get("max_tokens"), DEFAULTS["max_tokens"])),
        "max_rounds": int(rounds or DEFAULTS["max_rounds"]),
        "lean": section.get("lean") is True,
        "require_tool": section.get("first_tool_call") == "required",
        "turn_timeout": _number(section.get("turn_timeout"), DEFAULTS["turn_timeout"]),
    }
    if endpoint is None:
        return _bundled(section, name, name_from, common, rounds is not None)
    if not name and endpoint.provider not in ("openai-api", providers.CUSTOM):
        raise ModelConfigError(
            f"{endpoint.provider} is chosen ({endpoint.origin}) but no model is named: set "
            f"model.default in {CONFIG} (for example `default: openai/gpt-4o-mini`) or pass --model"
        )
    if not name:
        name, name_from = OPENAI_DEFAULT_MODEL, "the default"
    _check(endpoint)
    return ModelSettings(
        model=name,
        base_url=endpoint.base_url.rstrip("/"),
        api_key=endpoint.api_key,
        source=f"model from {name_from}, endpoint from {endpoint.origin}",
        provider=endpoint.provider,
        key_source=endpoint.key_source,
        **common,
    )


def _check(endpoint: _Endpoint) -> None:
    """Fail closed on an endpoint the client could only misuse (said without the secret)."""
    url = urlparse(endpoint.base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ModelConfigError(
            f"the endpoint from {endpoint.origin} is not an http(s) URL: give one like "
            "https://host/v1"
        )
    key = endpoint.api_key
    if key is not None and not (key.isascii() and key.isprintable() and " " not in key):
        raise ModelConfigError(
            f"the API key ({endpoint.key_source}) holds spaces, line breaks or characters no "
            "key has: check how it is written"
        )


def shown_url(url: str) -> str:
    """A URL as it may be printed: without a user name, password or query."""
    parts = urlparse(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc, query="", fragment="").geturl()


def _section(value: Any) -> tuple[dict[str, Any], bool]:
    """The `model` mapping (a plain string is the model's name), and whether it was a string."""
    if value is None:
        return {}, False
    if isinstance(value, str):
        return ({"default": value.strip()} if value.strip() else {}), True
    if isinstance(value, dict):
        return value, False
    raise ModelConfigError(
        f"`model` in {CONFIG} must be a model name or a mapping (default, provider, base_url, "
        f"...), not a {type(value).__name__}"
    )


def _name(section: dict[str, Any], plain: bool, flags: dict[str, Any]) -> tuple[str, str]:
    if flags.get("model"):
        return str(flags["model"]), "--model"
    for key in ("default", "model", "name"):
        value = section.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise ModelConfigError(f"model.{key} in {CONFIG} must be a model name (text)")
        return value.strip(), f"{CONFIG} model" + ("" if plain else f".{key}")
    return "", ""


def _text(section: dict[str, Any], key: str) -> str:
    value = section.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ModelConfigError(f"model.{key} in {CONFIG} must be text")
    return value.strip()


def _endpoint(
    section: dict[str, Any], keys: _Keys, flags: dict[str, Any], name: str
) -> _Endpoint | None:
    mode = _text(section, "api_mode")
    if mode and mode != "chat_completions":
        raise ModelConfigError(
            f"model.api_mode is {mode!r}: hermes-tui speaks chat_completions (the OpenAI "
            "protocol) only; remove api_mode or use an OpenAI-compatible endpoint"
        )
    if flags.get("base_url"):
        key = _flag_key(flags) or keys.find("OPENAI_API_KEY")
        return _with_key(_Endpoint(providers.CUSTOM, flags["base_url"], "--base-url"), key)
    provider = _text(section, "provider")
    if provider and provider.lower() != "auto":
        return _named(provider, section, keys, flags)
    found = keys.find("OPENAI_BASE_URL")
    if found:
        url, origin = found
        key = _flag_key(flags) or keys.find("OPENAI_API_KEY") or _config_key(section, keys)
        return _with_key(_Endpoint(providers.CUSTOM, url, origin), key)
    if _text(section, "base_url"):
        url = _text(section, "base_url")
        key = _flag_key(flags) or _config_key(section, keys) or _host_key(url, keys)
        return _with_key(_Endpoint(providers.CUSTOM, url, f"{CONFIG} model.base_url"), key)
    if name in MODELS or section.get("local"):
        return None  # the bundled model was asked for by name
    return _by_key(section, keys, flags, name)


def _by_key(
    section: dict[str, Any], keys: _Keys, flags: dict[str, Any], name: str
) -> _Endpoint | None:
    """No endpoint configured: the keys at hand choose one, as Hermes's `auto` does."""
    openai = providers.find("openai-api")
    explicit = _flag_key(flags) or _config_key(section, keys)
    if explicit:
        return _with_key(_Endpoint(openai.id, openai.base_url, "an API key given"), explicit)
    if name:
        for pid, var in (("openrouter", "OPENROUTER_API_KEY"), ("openai-api", "OPENAI_API_KEY")):
            if keys.find(var):
                return _named(pid, section, keys, flags, origin=f"{var} (no model.provider)")
        raise ModelConfigError(
            f"{CONFIG} names the model {name!r} but no endpoint serves it: set model.provider "
            f"(for example openrouter) and its key in the environment or {DOTENV} (for example "
            f"OPENROUTER_API_KEY=...), or model.base_url; remove `model` to use the bundled "
            "local model"
        )
    if keys.find("OPENAI_API_KEY"):
        return _named("openai-api", section, keys, flags, origin="OPENAI_API_KEY")
    return None


def _named(
    name: str,
    section: dict[str, Any],
    keys: _Keys,
    flags: dict[str, Any],
    origin: str = f"{CONFIG} model.provider",
) -> _Endpoint:
    try:
        provider = providers.find(name)
    except providers.ProviderError as exc:
        raise ModelConfigError(f"model.provider in {CONFIG}: {exc}") from None
    bare_openai = name.strip().lower() == "openai"
    if bare_openai and not keys.find("OPENAI_API_KEY") and keys.find("OPENROUTER_API_KEY"):
        provider = providers.find("openrouter")  # Hermes sends a bare `openai` through OpenRouter
    url, url_origin = _provider_url(provider, section, keys)
    if url_origin:
        origin = f"{origin} ({url_origin})"
    key = _flag_key(flags) or _config_key(section, keys)
    for var in provider.key_vars:
        key = key or keys.find(var)
    if provider.id == providers.CUSTOM:
        key = key or _host_key(url, keys)
    if key is None and not provider.key_optional:
        first, *others = provider.key_vars
        also = f" (or {', '.join(others)})" if others else ""
        raise ModelConfigError(
            f"model.provider is {provider.id} ({provider.name}) but its API key is missing: "
            f"set {first}{also} in the environment or in {DOTENV} ({first}=...), "
            "or model.api_key_env to the variable that holds it"
        )
    return _with_key(_Endpoint(provider.id, url, origin), key)


def _provider_url(
    provider: providers.Provider, section: dict[str, Any], keys: _Keys
) -> tuple[str, str]:
    """The provider's base URL and, when it is not its usual one, where it came from."""
    if _text(section, "base_url"):
        return _text(section, "base_url"), f"{CONFIG} model.base_url"
    found = keys.find(provider.base_url_var) if provider.base_url_var else None
    if found:
        return found
    if provider.base_url:
        return provider.base_url, ""
    raise ModelConfigError(
        f"model.provider is {provider.id} but model.base_url is not set: give the endpoint's "
        "OpenAI-compatible URL (for example `base_url: http://127.0.0.1:8080/v1`)"
    )


def _flag_key(flags: dict[str, Any]) -> tuple[str, str] | None:
    return (str(flags["api_key"]), "--api-key") if flags.get("api_key") else None


def _config_key(section: dict[str, Any], keys: _Keys) -> tuple[str, str] | None:
    """model.api_key, else the variable model.api_key_env names (which must then exist)."""
    if _text(section, "api_key"):
        return _text(section, "api_key"), f"{CONFIG} model.api_key"
    var = _text(section, "api_key_env")
    if not var:
        return None
    found = keys.find(var)
    if found is None:
        raise ModelConfigError(
            f"model.api_key_env names {var}, which is set neither in the environment nor in "
            f"{DOTENV}: set it there ({var}=...) or fix the name"
        )
    return found


def _host_key(url: str, keys: _Keys) -> tuple[str, str] | None:
    """A well-known key only for its own host: a custom endpoint must not receive it."""
    host = (urlparse(url).hostname or "").lower()
    for domain, var in (("openai.com", "OPENAI_API_KEY"), ("openrouter.ai", "OPENROUTER_API_KEY")):
        if host == domain or host.endswith("." + domain):
            return keys.find(var)
    return None


def _with_key(endpoint: _Endpoint, key: tuple[str, str] | None) -> _Endpoint:
    if key is None:
        return endpoint
    return replace(endpoint, api_key=key[0], key_source=key[1])


def _bundled(
    section: dict[str, Any],
    name: str,
    name_from: str,
    common: dict[str, Any],
    rounds_given: bool = False,
) -> ModelSettings:
    local = section.get("local")
    if local and str(local) not in MODELS:
        raise ModelConfigError(
            f"model.local is {local!r}, not a bundled model (choices: {', '.join(MODELS)})"
        )
    key, origin = (
        (str(local), f"{CONFIG} model.local")
        if local
        else (name, name_from)
        if name in MODELS
        else (DEFAULT_MODEL, "no model endpoint configured")
    )
    # the bundled model's tuned defaults (bench/bench_local_tasks.py); config still wins
    spec = MODELS[key]
    configured = isinstance(section.get("max_tokens"), int | float)
    return ModelSettings(
        model=key,
        source=origin,
        **{
            **common,
            "context_window": common["context_window"] or spec.context,  # the server's n_ctx too
            "max_tokens": common["max_tokens"] if configured else spec.reply,
            "max_rounds": common["max_rounds"] if rounds_given else spec.rounds,
            "lean": section.get("lean") is not False,
        },
        **_threads(section.get("threads")),
    )


def _threads(value: Any) -> dict[str, Any]:  # ModelSettings' thread fields, by name
    """model.threads: one number for both phases, or `{batch: N, generate: M}`."""
    if value is None:
        return {}
    if isinstance(value, dict) and set(value) <= {"batch", "generate"}:
        batch, generate = value.get("batch"), value.get("generate")
    else:
        batch = generate = value
    for given in (batch, generate):
        if given is not None and _int(given) is None:
            raise ModelConfigError(
                f"model.threads is {value!r}: give a number of threads (for example `threads: "
                "2`), or one for each phase (`threads: {batch: 2, generate: 1}`)"
            )
    return {"batch_threads": _int(batch), "threads": _int(generate)}


def _int(value: Any) -> int | None:
    return (
        int(value)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        else None
    )


def _number(value: Any, default: float) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )
