"""LLM analyzers: Anthropic, OpenAI and OpenAI-compatible servers (Ollama, vLLM, llama.cpp,
LM Studio), with the offline analyzer standing in when a provider fails.

Standard library only (``http.client``): no provider SDK is imported. Build one from the
configuration with :func:`build_llm_analyzer`; wrap it in :class:`FallbackAnalyzer` so a
failing provider never loses a turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kioku.adapters.provider_config import provider_name, resolve_key
from kioku.config.schema import LlmConfig
from kioku.errors import ConfigError
from kioku.ports.analyzer import Analyzer
from kioku.ports.usage import UsageSink

from .anthropic import ANTHROPIC_DEFAULT_MODEL, AnthropicAnalyzer
from .base import ChatAnalyzer
from .errors import (
    MalformedOutputError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
    ProviderUnreachableError,
)
from .fallback import FallbackAnalyzer
from .http import check_reachable as check_base_url
from .http import parse_target, post_json
from .openai_compat import (
    OPENAI_COMPAT_BASE_URLS,
    OPENAI_COMPAT_DEFAULT_MODELS,
    OpenAICompatAnalyzer,
)

__all__ = [
    "DEFAULT_MODELS",
    "KNOWN_PROVIDERS",
    "AnthropicAnalyzer",
    "ChatAnalyzer",
    "FallbackAnalyzer",
    "MalformedOutputError",
    "OpenAICompatAnalyzer",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderTimeoutError",
    "ProviderUnreachableError",
    "build_llm_analyzer",
    "check_base_url",
    "post_json",
    "resolve_api_key",
]

#: The ``llm.provider`` values this package serves (``offline`` is served elsewhere).
KNOWN_PROVIDERS: Final = (
    "anthropic",
    "openai",
    "ollama",
    "vllm",
    "llamacpp",
    "lmstudio",
    "openai-compatible",
)
_ALIASES: Final = {
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "lm-studio": "lmstudio",
    "openai_compatible": "openai-compatible",
}
#: The model used when ``llm.model`` is ``default``.
DEFAULT_MODELS: Final = {"anthropic": ANTHROPIC_DEFAULT_MODEL, **OPENAI_COMPAT_DEFAULT_MODELS}
#: Hosted providers: they need a key, read from this variable unless ``llm.api_key_env`` names one.
_KEY_VARIABLES: Final = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_LABELS: Final = {"anthropic": "Anthropic", "openai": "OpenAI"}
#: Seconds the start-up connection check waits at most.
_REACH_TIMEOUT: Final = 5.0


def _provider_of(config: LlmConfig) -> str:
    listed = f"offline, {', '.join(KNOWN_PROVIDERS)}"
    return provider_name("llm", config.provider, _ALIASES, KNOWN_PROVIDERS, listed)


def _model_of(config: LlmConfig, provider: str) -> str:
    model = config.model.strip()
    if model and model != "default":
        return model
    if provider in DEFAULT_MODELS:
        return DEFAULT_MODELS[provider]
    raise ConfigError(
        "llm.model",
        config.model,
        f"the name of the model the {provider} server serves",
        hint=f"set llm.model; {provider} has no default model",
    )


def resolve_api_key(config: LlmConfig, env: Mapping[str, str], provider: str) -> str | None:
    """The key of ``[llm]`` (see :func:`kioku.adapters.provider_config.resolve_key`)."""
    label = _LABELS.get(provider, provider)
    return resolve_key(
        "llm", config.api_key, config.api_key_env, env, provider, _KEY_VARIABLES, label
    )


def _base_url_of(config: LlmConfig, provider: str) -> str:
    base_url = config.base_url.strip()
    if not base_url:
        if provider == "openai-compatible":
            raise ConfigError(
                "llm.base_url",
                config.base_url,
                "the URL of the server's OpenAI-compatible API (e.g. http://localhost:8000/v1)",
                hint="set llm.base_url; the openai-compatible provider has no default",
            )
        return ""
    try:
        parse_target(base_url)
    except ValueError as exc:
        raise ConfigError(
            "llm.base_url", base_url, "an http:// or https:// URL", hint=f"{exc}; fix llm.base_url"
        ) from None
    return base_url


def build_llm_analyzer(
    config: LlmConfig,
    *,
    env: Mapping[str, str],
    usage_sink: UsageSink | None,
    check_reachable: bool = True,
) -> Analyzer:
    """The analyzer ``config`` names; :class:`ConfigError` now rather than at the first turn.

    Checks, in order: the provider is known (``llm.provider``), a model is named when the
    provider has no default (``llm.model``), ``openai-compatible`` has a ``llm.base_url``, a
    hosted provider has a key (``llm.api_key_env``: :class:`MissingKeyError`), and — when
    ``check_reachable`` — something listens at the configured or local ``base_url``
    (``llm.base_url``: :class:`ProviderUnreachableError`). Hosted APIs at their
    default URL are not contacted at start-up; when they fail later, the fallback stands in.
    """
    provider = _provider_of(config)
    model = _model_of(config, provider)
    base_url = _base_url_of(config, provider)
    api_key = resolve_api_key(config, env, provider)
    local = provider not in _KEY_VARIABLES
    if check_reachable and (base_url or local):
        url = base_url or OPENAI_COMPAT_BASE_URLS[provider]
        check_base_url(url, min(config.timeout_seconds, _REACH_TIMEOUT), setting="llm.base_url")
    if provider == "anthropic":
        assert api_key is not None
        return AnthropicAnalyzer(
            model=model,
            api_key=api_key,
            base_url=base_url,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            timeout_seconds=config.timeout_seconds,
            max_retries=config.max_retries,
            usage_sink=usage_sink,
        )
    return OpenAICompatAnalyzer(
        provider=provider,
        model=model,
        api_key=api_key,
        base_url=base_url,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout_seconds=config.timeout_seconds,
        max_retries=config.max_retries,
        usage_sink=usage_sink,
    )
