"""Which model a session uses: Hermes's `model` key, keys from the environment and
$HERMES_HOME/.env, the providers that speak the OpenAI protocol, and refusals that say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.config import load_config
from workbench.core.model import providers
from workbench.core.model.local import DEFAULT_MODEL, MODELS
from workbench.core.model.settings import ModelConfigError, ModelSettings, resolve

SECRET = "sk-or-secret-value"


@pytest.fixture
def setup(tmp_path: Path):
    """Write config.yaml (and .env) in a fresh home; resolve with exactly the given env."""

    def make(config: str = "", dotenv: str | None = None, env: dict | None = None, **flags):
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        (home / "config.yaml").write_text(config)
        if dotenv is not None:
            (home / ".env").write_text(dotenv)
        return resolve(load_config(home / "config.yaml"), env=env or {}, **flags)

    return make


HERMES_OPENROUTER = "model:\n  default: openai/gpt-4o-mini\n  provider: openrouter\n"


def test_a_hermes_openrouter_config_with_its_key_in_dotenv(setup) -> None:
    settings = setup(HERMES_OPENROUTER, dotenv=f"OPENROUTER_API_KEY={SECRET}\n")
    assert (settings.model, settings.base_url, settings.api_key, settings.provider) == (
        "openai/gpt-4o-mini",
        "https://openrouter.ai/api/v1",
        SECRET,
        "openrouter",
    )
    assert settings.describe() == (
        "openai/gpt-4o-mini via openrouter (https://openrouter.ai/api/v1), key "
        "OPENROUTER_API_KEY from $HERMES_HOME/.env — model from config.yaml model.default, "
        "endpoint from config.yaml model.provider"
    )
    assert SECRET not in settings.describe()


def test_the_environment_wins_over_dotenv_and_a_base_url_override(setup) -> None:
    settings = setup(
        HERMES_OPENROUTER,
        dotenv="OPENROUTER_API_KEY=from-file\nOPENROUTER_BASE_URL=https://proxy.example/v1\n",
        env={"OPENROUTER_API_KEY": "from-env"},
    )
    assert settings.api_key == "from-env"
    assert settings.key_source == "OPENROUTER_API_KEY from the environment"
    assert settings.base_url == "https://proxy.example/v1"
    assert "OPENROUTER_BASE_URL from $HERMES_HOME/.env" in settings.source


def test_a_missing_key_is_named_not_replaced_by_the_bundled_model(setup) -> None:
    with pytest.raises(ModelConfigError) as caught:
        setup(HERMES_OPENROUTER, dotenv="OTHER=1\n")
    message = str(caught.value)
    assert "OPENROUTER_API_KEY" in message and "$HERMES_HOME/.env" in message


@pytest.mark.parametrize(
    ("provider", "env", "url", "key_var"),
    [
        ("openai", "OPENAI_API_KEY", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ("openai-api", "OPENAI_API_KEY", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        ("glm", "ZAI_API_KEY", "https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
        ("Google", "GEMINI_API_KEY",
         "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
        ("hf", "HF_TOKEN", "https://router.huggingface.co/v1", "HF_TOKEN"),
        ("kimi", "KIMI_API_KEY", "https://api.moonshot.ai/v1", "KIMI_API_KEY"),
        ("xai", "XAI_API_KEY", "https://api.x.ai/v1", "XAI_API_KEY"),
        # Hermes routes a bare `openai` through OpenRouter when that is the key at hand
        ("openai", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    ],
)  # fmt: skip
def test_named_providers_resolve_to_their_url_and_key(setup, provider, env, url, key_var) -> None:
    config = f"model:\n  default: some-model\n  provider: {provider}\n"
    settings = setup(config, env={env: "k-123"})
    assert (settings.base_url, settings.api_key) == (url, "k-123")
    assert settings.key_source == f"{key_var} from the environment"


def test_a_local_server_provider_needs_no_key(setup) -> None:
    settings = setup("model:\n  default: qwen3\n  provider: lmstudio\n")
    assert settings.base_url == "http://127.0.0.1:1234/v1" and settings.api_key is None
    assert "no key" in settings.describe()


@pytest.mark.parametrize("name", ["anthropic", "claude", "bedrock", "openai-codex", "copilot"])
def test_providers_that_do_not_speak_openai_are_refused_with_the_reason(setup, name) -> None:
    with pytest.raises(ModelConfigError, match="OpenAI-protocol endpoints only") as caught:
        setup(f"model:\n  default: m\n  provider: {name}\n", env={"ANTHROPIC_API_KEY": "k"})
    assert "provider: openrouter" in str(caught.value)  # and what to use instead


def test_an_unknown_provider_lists_the_known_ones(setup) -> None:
    with pytest.raises(ModelConfigError, match=r"unknown provider 'nope'.*openrouter"):
        setup("model:\n  default: m\n  provider: nope\n")


def test_custom_needs_a_base_url(setup) -> None:
    with pytest.raises(ModelConfigError, match=r"model\.base_url is not set"):
        setup("model:\n  default: m\n  provider: custom\n")


def test_a_custom_endpoint_never_receives_the_well_known_keys(setup) -> None:
    env = {"OPENAI_API_KEY": "openai-secret", "OPENROUTER_API_KEY": "or-secret"}
    elsewhere = setup(
        "model:\n  default: m\n  provider: custom\n  base_url: http://10.0.0.5:8000/v1\n", env=env
    )
    assert elsewhere.api_key is None
    openai_host = setup("model:\n  default: m\n  base_url: https://api.openai.com/v1\n", env=env)
    assert openai_host.api_key == "openai-secret"


def test_api_key_env_names_a_variable_that_must_exist(setup) -> None:
    config = "model:\n  default: m\n  provider: custom\n  base_url: http://x/v1\n"
    settings = setup(config + "  api_key_env: MY_KEY\n", dotenv="MY_KEY=abc\n")
    assert settings.api_key == "abc" and settings.key_source == "MY_KEY from $HERMES_HOME/.env"
    with pytest.raises(ModelConfigError, match="api_key_env names MISSING_KEY"):
        setup(config + "  api_key_env: MISSING_KEY\n")


def test_a_model_named_with_nowhere_to_send_it_is_refused(setup) -> None:
    with pytest.raises(ModelConfigError, match="no endpoint serves it"):
        setup("model: anthropic/claude-sonnet-4\n")


def test_with_a_key_but_no_provider_hermes_auto_choice(setup) -> None:
    routed = setup("model: anthropic/claude-sonnet-4\n", dotenv="OPENROUTER_API_KEY=k\n")
    assert routed.provider == "openrouter" and routed.model == "anthropic/claude-sonnet-4"
    assert (
        routed.source
        == "model from config.yaml model, endpoint from OPENROUTER_API_KEY (no model.provider)"
    )
    plain = setup("", env={"OPENAI_API_KEY": "k"})
    assert (plain.model, plain.base_url) == ("gpt-4o-mini", "https://api.openai.com/v1")


def test_a_provider_without_a_model_name_asks_for_one(setup) -> None:
    with pytest.raises(ModelConfigError, match=r"no model is named: set model\.default"):
        setup("model:\n  provider: openrouter\n", env={"OPENROUTER_API_KEY": "k"})


def test_the_model_key_forms(setup) -> None:
    env = {"OPENROUTER_API_KEY": "k"}
    base = "model:\n  provider: openrouter\n"
    assert setup(base + "  model: a/b\n", env=env).model == "a/b"
    assert setup(base + "  name: c/d\n", env=env).model == "c/d"
    assert setup(base + "  default: e/f\n  name: c/d\n", env=env).model == "e/f"
    assert setup(base + "  default: e/f\n", env=env, model="g/h").model == "g/h"


def test_flags_win(setup) -> None:
    settings = setup(
        HERMES_OPENROUTER, env={"OPENROUTER_API_KEY": "k"},
        base_url="http://127.0.0.1:9/v1", api_key="flag-key", model="x",
    )  # fmt: skip
    assert (settings.base_url, settings.api_key, settings.model) == (
        "http://127.0.0.1:9/v1", "flag-key", "x"
    )  # fmt: skip
    assert settings.key_source == "--api-key" and "--base-url" in settings.source


def test_our_own_keys_keep_working(setup) -> None:
    settings = setup(
        "model:\n  provider: custom\n  base_url: http://x/v1/\n  name: n\n  api_key: inline\n"
        "  context_window: 64000\n  temperature: 0\n  max_tokens: 512\n  max_rounds: 3\n"
    )
    assert settings == ModelSettings(
        model="n", base_url="http://x/v1", api_key="inline", context_window=64000,
        temperature=0.0, max_tokens=512, max_rounds=3, provider="custom",
        key_source="config.yaml model.api_key",
        source="model from config.yaml model.name, endpoint from config.yaml model.provider "
        "(config.yaml model.base_url)",
    )  # fmt: skip
    hermes_window = setup("model:\n  base_url: http://x/v1\n  context_length: 32000\n")
    assert hermes_window.context_window == 32000


def test_the_bundled_model(setup) -> None:
    nothing = setup("")
    assert nothing.local and nothing.model == DEFAULT_MODEL
    spec = MODELS[DEFAULT_MODEL]
    assert nothing.context_window == spec.context  # the number the server runs with
    assert nothing.max_tokens == spec.reply and nothing.lean
    assert nothing.describe().endswith("— no model endpoint configured")
    by_name = setup("model: qwen2.5-coder-1.5b\n", env={"OPENROUTER_API_KEY": "k"})
    assert by_name.local and by_name.model == "qwen2.5-coder-1.5b"
    by_key = setup("model:\n  local: qwen2.5-coder-1.5b\n  temperature: 0\n")
    assert by_key.local and by_key.source == "config.yaml model.local"
    with pytest.raises(ModelConfigError, match="not a bundled model"):
        setup("model:\n  local: gpt-9\n")


def test_the_bundled_models_round_cap_is_its_own_unless_one_is_given(setup) -> None:
    spec = MODELS[DEFAULT_MODEL]
    assert setup("").max_rounds == spec.rounds < ModelSettings.max_rounds  # measured, smaller
    assert setup("model:\n  max_rounds: 9\n").max_rounds == 9  # config.yaml wins
    assert setup("", max_rounds=11).max_rounds == 11  # and the flag
    endpoint = setup("model:\n  provider: custom\n  base_url: http://h/v1\n  default: m\n")
    assert endpoint.max_rounds == ModelSettings.max_rounds  # other models keep the default


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("model: [a, b]\n", "not a list"),
        ("model:\n  default: 5\n", "model.default in config.yaml must be a model name"),
        ("model:\n  provider: [x]\n", "model.provider in config.yaml must be text"),
        ("model:\n  default: m\n  api_mode: anthropic_messages\n", "chat_completions"),
    ],
)
def test_garbage_is_refused_with_the_key_named(setup, config: str, said: str) -> None:
    with pytest.raises(ModelConfigError, match=said):
        setup(config, env={"OPENROUTER_API_KEY": "k"})


def test_every_provider_is_complete_and_its_names_unique() -> None:
    names = [n for p in providers.PROVIDERS for n in (p.id, *p.aliases)]
    names += [n for pid, (_, aliases) in providers.NOT_OPENAI.items() for n in (pid, *aliases)]
    assert len(names) == len(set(names))
    for provider in providers.PROVIDERS:
        assert provider.id == providers.CUSTOM or provider.base_url.startswith(
            ("https://", "http://127.")
        )
        assert provider.key_vars or provider.key_optional


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "not a url", "javascript:alert(1)", "http://", "ftp://x/v1"]
)
def test_an_endpoint_that_is_not_http_is_refused(setup, url: str) -> None:
    with pytest.raises(ModelConfigError, match=r"not an http\(s\) URL"):
        setup(f"model:\n  default: m\n  provider: custom\n  base_url: '{url}'\n")


@pytest.mark.parametrize("key", ["two words", "line\nbreak", "tab\there", "nul\x00", "ключ"])
def test_a_key_no_server_could_take_is_refused_without_printing_it(setup, key: str) -> None:
    with pytest.raises(ModelConfigError, match="MY_KEY from the environment") as caught:
        setup(
            "model:\n  default: m\n  provider: custom\n  base_url: http://x/v1\n"
            "  api_key_env: MY_KEY\n",
            env={"MY_KEY": key},
        )
    assert key not in str(caught.value)


def test_credentials_in_a_url_are_never_shown(setup) -> None:
    settings = setup(
        "model:\n  default: m\n  provider: custom\n"
        "  base_url: https://user:hunter2@proxy.example:8443/v1?token=abc\n"
    )
    assert "(https://proxy.example:8443/v1)" in settings.describe()
    assert "hunter2" not in settings.describe() and "abc" not in settings.describe()


@pytest.mark.parametrize(
    ("value", "batch", "generate"),
    [("", None, None), ("2", 2, 2), ("{batch: 2, generate: 1}", 2, 1), ("{generate: 1}", None, 1)],
)
def test_model_threads_sets_both_phases_or_each(setup, value, batch, generate) -> None:
    line = f"  threads: {value}\n" if value else ""
    settings = setup(f"model:\n  local: qwen2.5-coder-0.5b\n{line}")
    assert (settings.batch_threads, settings.threads) == (batch, generate)


@pytest.mark.parametrize("value", ["0", "many", "{batch: -1}", "{read: 2}", "true"])
def test_model_threads_that_is_not_a_count_is_refused(setup, value) -> None:
    with pytest.raises(ModelConfigError, match=r"model\.threads"):
        setup(f"model:\n  local: qwen2.5-coder-0.5b\n  threads: {value}\n")


def test_agent_max_turns_is_hermes_name_for_max_rounds_and_wins(setup) -> None:
    hosted = "model:\n  default: m\n  base_url: http://127.0.0.1:9/v1\n"
    env = {"OPENAI_API_KEY": "k"}
    assert setup(hosted + "agent:\n  max_turns: 90\n", env=env).max_rounds == 90
    both = hosted + "  max_rounds: 5\nagent:\n  max_turns: 2\n"
    assert setup(both, env=env).max_rounds == 2  # Hermes's name wins
    assert setup(both, env=env, max_rounds=7).max_rounds == 7  # the flag over both
    bad = hosted + "  max_rounds: 5\nagent:\n  max_turns: many\n"
    assert setup(bad, env=env).max_rounds == ModelSettings.max_rounds  # said by doctor
    spec = MODELS[DEFAULT_MODEL]
    assert setup("agent:\n  max_turns: 4\n").max_rounds == 4 != spec.rounds  # the bundled too
