"""Analyzers found by name: ``offline`` (the default) or an LLM provider from ``[llm]``.

LLM providers are imported only when chosen, and always run behind a fallback to the offline
analyzer, so a provider failure costs a warning, never a turn. A provider that cannot serve at
all when kioku starts (nothing answers at its URL, or a hosted provider has no API key) is not
an error either: the offline analyzer takes its place for the life of the process, after one
warning that says what to fix. A configuration that names no usable provider at all (an unknown
name, a malformed URL, a model missing where there is no default) still raises ConfigError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kioku.config.schema import LlmConfig
    from kioku.ports.analyzer import Analyzer
    from kioku.ports.usage import UsageSink

__all__ = ["create_analyzer"]


def create_analyzer(
    config: LlmConfig,
    *,
    env: Mapping[str, str],
    usage_sink: UsageSink | None = None,
    warn: Callable[[str], None] | None = None,
    check_reachable: bool = True,
) -> Analyzer:
    """The analyzer ``config`` names, or the offline analyzer (with one call of ``warn``)
    when the provider is unreachable or has no key. A malformed ``[llm]`` raises ConfigError."""
    from kioku.adapters.analyzers.offline import OfflineAnalyzer

    if config.provider == "offline":
        return OfflineAnalyzer()
    from kioku.adapters.analyzers.llm import (
        FallbackAnalyzer,
        ProviderUnreachableError,
        build_llm_analyzer,
    )
    from kioku.adapters.provider_config import MissingKeyError

    say = warn or (lambda _message: None)
    try:
        primary = build_llm_analyzer(
            config, env=env, usage_sink=usage_sink, check_reachable=check_reachable
        )
    except ProviderUnreachableError as exc:
        say(
            f"the {config.provider} provider is unreachable ({exc.hint}); the offline analyzer "
            "analyses the turns of this run instead"
        )
        return OfflineAnalyzer()
    except MissingKeyError as exc:
        say(
            f"the {config.provider} provider has no API key ({exc.hint}); the offline analyzer "
            "analyses the turns of this run instead"
        )
        return OfflineAnalyzer()
    return FallbackAnalyzer(primary, OfflineAnalyzer(), warn=say)
