"""Analyzers found by name: ``offline`` (the default) or an LLM provider from ``[llm]``.

LLM providers are imported only when chosen, and always run behind a fallback to the offline
analyzer, so a provider failure costs a warning, never a turn.
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
    """The analyzer ``config`` names. A misconfigured provider raises ConfigError now."""
    from kioku.adapters.analyzers.offline import OfflineAnalyzer

    if config.provider == "offline":
        return OfflineAnalyzer()
    from kioku.adapters.analyzers.llm import FallbackAnalyzer, build_llm_analyzer

    primary = build_llm_analyzer(
        config, env=env, usage_sink=usage_sink, check_reachable=check_reachable
    )
    return FallbackAnalyzer(primary, OfflineAnalyzer(), warn=warn or (lambda _message: None))
