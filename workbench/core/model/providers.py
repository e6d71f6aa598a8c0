"""The inference providers a Hermes config may name in `model.provider`, as facts.

hermes-tui speaks the OpenAI chat-completions protocol, so a provider is usable when it
serves that protocol with a plain API key: then it has a base URL, the variables that may
hold its key (checked in order), and a variable that may override its base URL. Hermes
also knows providers that need another protocol or a sign-in of its own; naming one of
those gets the reason and what to use instead, never a silent stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    base_url: str  # empty: the user must give one (model.base_url)
    key_vars: tuple[str, ...] = ()  # where its API key may be, in priority order
    base_url_var: str = ""  # a variable that overrides base_url
    key_optional: bool = False  # a local server that needs no key
    aliases: tuple[str, ...] = ()


CUSTOM = "custom"

PROVIDERS = (
    Provider("openrouter", "OpenRouter", "https://openrouter.ai/api/v1",
             ("OPENROUTER_API_KEY", "OPENAI_API_KEY"), "OPENROUTER_BASE_URL", aliases=("or",)),
    Provider("openai-api", "OpenAI", "https://api.openai.com/v1", ("OPENAI_API_KEY",),
             "OPENAI_BASE_URL", aliases=("openai_api",)),
    Provider(CUSTOM, "a custom endpoint", "", (), "CUSTOM_BASE_URL", key_optional=True,
             aliases=("ollama", "local", "vllm", "llamacpp", "llama.cpp", "llama-cpp")),
    Provider("lmstudio", "LM Studio", "http://127.0.0.1:1234/v1", ("LM_API_KEY",),
             "LM_BASE_URL", key_optional=True, aliases=("lm-studio", "lm_studio")),
    Provider("gemini", "Google AI Studio",
             "https://generativelanguage.googleapis.com/v1beta/openai",
             ("GOOGLE_API_KEY", "GEMINI_API_KEY"), "GEMINI_BASE_URL",
             aliases=("google", "google-gemini", "google-ai-studio")),
    Provider("zai", "Z.AI / GLM", "https://api.z.ai/api/paas/v4",
             ("GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY"), "GLM_BASE_URL",
             aliases=("glm", "z-ai", "z.ai", "zhipu")),
    Provider("kimi-coding", "Kimi / Moonshot", "https://api.moonshot.ai/v1",
             ("KIMI_API_KEY", "KIMI_CODING_API_KEY"), "KIMI_BASE_URL",
             aliases=("kimi", "moonshot", "kimi-for-coding")),
    Provider("kimi-coding-cn", "Kimi / Moonshot (China)", "https://api.moonshot.cn/v1",
             ("KIMI_CN_API_KEY",), aliases=("kimi-cn", "moonshot-cn")),
    Provider("stepfun", "StepFun Step Plan", "https://api.stepfun.ai/step_plan/v1",
             ("STEPFUN_API_KEY",), "STEPFUN_BASE_URL", aliases=("step", "stepfun-coding-plan")),
    Provider("arcee", "Arcee AI", "https://api.arcee.ai/api/v1", ("ARCEEAI_API_KEY",),
             "ARCEE_BASE_URL", aliases=("arcee-ai", "arceeai")),
    Provider("gmi", "GMI Cloud", "https://api.gmi-serving.com/v1", ("GMI_API_KEY",),
             "GMI_BASE_URL", aliases=("gmi-cloud", "gmicloud")),
    Provider("alibaba", "Qwen Cloud (DashScope)",
             "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", ("DASHSCOPE_API_KEY",),
             "DASHSCOPE_BASE_URL", aliases=("dashscope", "alibaba-cloud", "qwen-dashscope")),
    Provider("alibaba-coding-plan", "Alibaba Cloud (Coding Plan)",
             "https://coding-intl.dashscope.aliyuncs.com/v1",
             ("ALIBABA_CODING_PLAN_API_KEY", "DASHSCOPE_API_KEY"), "ALIBABA_CODING_PLAN_BASE_URL",
             aliases=("alibaba_coding", "alibaba-coding", "alibaba_coding_plan",
                      "dashscope-coding")),
    Provider("deepseek", "DeepSeek", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",),
             "DEEPSEEK_BASE_URL", aliases=("deepseek-chat",)),
    Provider("xai", "xAI", "https://api.x.ai/v1", ("XAI_API_KEY",), "XAI_BASE_URL",
             aliases=("grok", "x-ai", "x.ai")),
    Provider("nvidia", "NVIDIA NIM", "https://integrate.api.nvidia.com/v1", ("NVIDIA_API_KEY",),
             "NVIDIA_BASE_URL", aliases=("nvidia-nim", "nim")),
    Provider("opencode-zen", "OpenCode Zen", "https://opencode.ai/zen/v1",
             ("OPENCODE_ZEN_API_KEY",), "OPENCODE_ZEN_BASE_URL",
             aliases=("opencode", "opencode_zen", "zen")),
    Provider("opencode-go", "OpenCode Go", "https://opencode.ai/zen/go/v1",
             ("OPENCODE_GO_API_KEY",), "OPENCODE_GO_BASE_URL",
             aliases=("opencode_go", "go", "opencode-go-sub")),
    Provider("kilocode", "Kilo Code", "https://api.kilo.ai/api/gateway", ("KILOCODE_API_KEY",),
             "KILOCODE_BASE_URL", aliases=("kilo-code", "kilo", "kilo-gateway")),
    Provider("huggingface", "Hugging Face", "https://router.huggingface.co/v1", ("HF_TOKEN",),
             "HF_BASE_URL", aliases=("hf", "hugging-face", "huggingface-hub")),
    Provider("xiaomi", "Xiaomi MiMo", "https://api.xiaomimimo.com/v1", ("XIAOMI_API_KEY",),
             "XIAOMI_BASE_URL", aliases=("mimo", "xiaomi-mimo")),
    Provider("tencent-tokenhub", "Tencent TokenHub", "https://tokenhub.tencentmaas.com/v1",
             ("TOKENHUB_API_KEY",), "TOKENHUB_BASE_URL",
             aliases=("tencent", "tokenhub", "tencent-cloud", "tencentmaas")),
    Provider("ollama-cloud", "Ollama Cloud", "https://ollama.com/v1", ("OLLAMA_API_KEY",),
             "OLLAMA_BASE_URL", aliases=("ollama_cloud",)),
    Provider("deepinfra", "DeepInfra", "https://api.deepinfra.com/v1/openai",
             ("DEEPINFRA_API_KEY",), "DEEPINFRA_BASE_URL", aliases=("deep-infra", "deepinfra-ai")),
    Provider("fireworks", "Fireworks AI", "https://api.fireworks.ai/inference/v1",
             ("FIREWORKS_API_KEY",), aliases=("fireworks-ai", "fw")),
    Provider("novita", "NovitaAI", "https://api.novita.ai/openai/v1", ("NOVITA_API_KEY",),
             "NOVITA_BASE_URL", aliases=("novita-ai", "novitaai")),
    Provider("upstage", "Upstage Solar", "https://api.upstage.ai/v1", ("UPSTAGE_API_KEY",),
             "UPSTAGE_BASE_URL", aliases=("solar",)),
    Provider("nous", "Nous Portal", "https://inference-api.nousresearch.com/v1",
             ("NOUS_API_KEY",), aliases=("nous-portal", "nousresearch")),
)  # fmt: skip

_ANTHROPIC = "speaks Anthropic's Messages protocol, not OpenAI's"
_SIGN_IN = "signs in through Hermes's own OAuth flow, which hermes-tui does not do"
# Providers Hermes knows that hermes-tui cannot talk to, and why.
NOT_OPENAI = {
    "anthropic": (_ANTHROPIC, ("claude", "claude-oauth", "claude-code")),
    "minimax": (_ANTHROPIC + " (its /anthropic endpoint)", ("mini-max",)),
    "minimax-cn": (_ANTHROPIC + " (its /anthropic endpoint)", ("minimax-china", "minimax_cn")),
    "minimax-oauth": (_SIGN_IN, ("minimax-portal", "minimax-global", "minimax_oauth")),
    "bedrock": (
        "speaks AWS's Converse API with AWS SDK credentials",
        ("aws", "aws-bedrock", "amazon-bedrock", "amazon"),
    ),
    "vertex": (
        "needs Google Cloud service-account sign-in",
        ("google-vertex", "vertex-ai", "gcp-vertex"),
    ),
    "openai-codex": (
        "signs in with a ChatGPT account and speaks the Responses API",
        ("codex", "openai_codex"),
    ),
    "xai-oauth": (_SIGN_IN, ("x-ai-oauth", "grok-oauth", "xai-grok-oauth")),
    "qwen-oauth": (_SIGN_IN, ("qwen", "qwen-portal", "qwen-cli")),
    "copilot": (
        "exchanges a GitHub token for a Copilot session token, which hermes-tui does not do",
        ("github-copilot", "github-models", "github-model", "github"),
    ),
    "copilot-acp": (
        "runs GitHub Copilot as a subprocess (ACP), not an HTTP endpoint",
        ("github-copilot-acp", "copilot-acp-agent"),
    ),
    "azure-foundry": (
        "needs Azure's per-resource endpoint settings",
        ("azure", "azure-ai-foundry", "azure-ai"),
    ),
}

_BY_NAME = {alias: p for p in PROVIDERS for alias in (p.id, *p.aliases)}
_UNUSABLE = {alias: (pid, why) for pid, (why, aliases) in NOT_OPENAI.items()
             for alias in (pid, *aliases)}  # fmt: skip


class ProviderError(ValueError):
    """The provider named cannot be used; the message says why and what to do instead."""


def find(name: str) -> Provider:
    """The provider `name` (an id or an alias, any case) names, or why it cannot be used.

    `openai` alone means OpenAI itself here (Hermes routes it through OpenRouter; the caller
    decides that when only an OpenRouter key is at hand).
    """
    key = name.strip().lower()
    if key == "openai":
        key = "openai-api"
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key in _UNUSABLE:
        pid, why = _UNUSABLE[key]
        raise ProviderError(
            f"provider '{name}' ({pid}) {why}; hermes-tui talks to OpenAI-protocol endpoints "
            "only. Use its models through OpenRouter (provider: openrouter, default: "
            "<vendor>/<model>) or an OpenAI-compatible proxy (provider: custom, base_url: ...)"
        )
    known = ", ".join(p.id for p in PROVIDERS)
    raise ProviderError(f"unknown provider '{name}' (known: {known})")
