"""Embedders found by name: ``offline`` (the default), ``wordllama``, ``sentence-transformers``,
and the OpenAI embeddings API (``openai``, ``ollama``, ``vllm``, ``tei``, ``openai-compatible``).

Every adapter is imported only when chosen, so the offline default never imports torch, an HTTP
client or model weights. ``docs/embedders.md`` compares them and says why ``offline`` is the
default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from kioku.adapters.provider_config import provider_name, resolve_key
from kioku.config.schema import EmbeddingConfig
from kioku.errors import ConfigError
from kioku.ports.embedder import Embedder

if TYPE_CHECKING:
    from kioku.ports.usage import UsageSink

__all__ = ["KNOWN_PROVIDERS", "create_embedder"]

#: ``embedding.provider`` values.
KNOWN_PROVIDERS: Final = (
    "offline",
    "wordllama",
    "sentence-transformers",
    "openai",
    "ollama",
    "vllm",
    "tei",
    "openai-compatible",
)
_ALIASES: Final = {
    "sentence_transformers": "sentence-transformers",
    "sentence-transformer": "sentence-transformers",
    "openai_compatible": "openai-compatible",
}
_HTTP_PROVIDERS: Final = frozenset({"openai", "ollama", "vllm", "tei", "openai-compatible"})
#: Hosted providers need a key, read from this variable unless ``embedding.api_key_env`` names one.
_KEY_VARIABLES: Final = {"openai": "OPENAI_API_KEY"}
_REACH_TIMEOUT: Final = 5.0
_OFFLINE_MODELS: Final = ("default", "hash-v1", "")


def _provider_of(config: EmbeddingConfig) -> str:
    listed = ", ".join(KNOWN_PROVIDERS)
    return provider_name("embedding", config.provider, _ALIASES, KNOWN_PROVIDERS, listed)


def _api_key(config: EmbeddingConfig, env: Mapping[str, str], provider: str) -> str | None:
    return resolve_key(
        "embedding", config.api_key, config.api_key_env, env, provider, _KEY_VARIABLES, provider
    )


def _http_embedder(
    config: EmbeddingConfig,
    provider: str,
    env: Mapping[str, str],
    usage_sink: UsageSink | None,
    check_reachable: bool,
) -> Embedder:
    from kioku.adapters.analyzers.llm.http import check_reachable as check_url

    from .openai_compat import EMBEDDING_BASE_URLS, EMBEDDING_DEFAULT_MODELS, OpenAICompatEmbedder

    model = config.model.strip()
    if not model or model == "default":
        if provider not in EMBEDDING_DEFAULT_MODELS:
            raise ConfigError(
                "embedding.model",
                config.model,
                f"the name of the embedding model the {provider} server serves",
                hint=f"set embedding.model; {provider} has no default model",
            )
        model = EMBEDDING_DEFAULT_MODELS[provider]
    base_url = config.base_url.strip() or EMBEDDING_BASE_URLS.get(provider, "")
    if not base_url:
        raise ConfigError(
            "embedding.base_url",
            config.base_url,
            "the URL of the server's OpenAI-compatible API (e.g. http://localhost:8080/v1)",
            hint=f"set embedding.base_url; {provider} has no default",
        )
    api_key = _api_key(config, env, provider)
    hosted_default = provider in _KEY_VARIABLES and not config.base_url.strip()
    if check_reachable and not hosted_default:
        check_url(base_url, _REACH_TIMEOUT, setting="embedding.base_url")
    elif not hosted_default:
        from kioku.adapters.analyzers.llm.http import parse_target

        try:
            parse_target(base_url)
        except ValueError as exc:
            raise ConfigError(
                "embedding.base_url",
                base_url,
                "an http:// or https:// URL",
                hint=f"{exc}; fix embedding.base_url",
            ) from None
    return OpenAICompatEmbedder(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=api_key,
        dimensions=config.dimensions,
        usage_sink=usage_sink,
    )


def create_embedder(
    config: EmbeddingConfig,
    *,
    env: Mapping[str, str],
    usage_sink: UsageSink | None = None,
    check_reachable: bool = True,
) -> Embedder:
    """The embedder ``config`` names; a misconfiguration raises :class:`ConfigError` now.

    ``offline`` uses ``embedding.dimensions`` as its number of hash buckets. ``wordllama`` takes
    64, 128 or 256 dimensions. ``sentence-transformers`` loads ``embedding.model`` from disk.
    HTTP providers need a key when hosted (``embedding.api_key_env``) and, when
    ``check_reachable``, something listening at a local or configured ``embedding.base_url``.
    """
    provider = _provider_of(config)
    if provider == "offline":
        from .offline import HashEmbedder

        if config.model.strip() not in _OFFLINE_MODELS:
            raise ConfigError(
                "embedding.model",
                config.model,
                "default (the built-in hashed embedder, hash-v1)",
            )
        try:
            return HashEmbedder(config.dimensions)
        except ValueError as exc:
            raise ConfigError(
                "embedding.dimensions", config.dimensions, "16 to 65536", hint=str(exc)
            ) from None
    if provider == "wordllama":
        from .wordllama import WordLlamaEmbedder

        return WordLlamaEmbedder(config.dimensions)
    if provider == "sentence-transformers":
        from .sentence_transformers import SentenceTransformersEmbedder

        return SentenceTransformersEmbedder(config.model)
    assert provider in _HTTP_PROVIDERS
    return _http_embedder(config, provider, env, usage_sink, check_reachable)
