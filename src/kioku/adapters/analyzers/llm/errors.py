"""Errors of the LLM analyzers.

Every failure of a provider — an HTTP error after the retries, a timeout, a refused connection,
output that is not the JSON we asked for — is a :class:`ProviderError`. :class:`FallbackAnalyzer`
catches exactly this class and lets the offline analyzer stand in; anything else (a programming
error) propagates. Messages never contain an API key: the HTTP client redacts every secret it was
given before it builds one.
"""

from __future__ import annotations

from kioku.errors import ConfigError, KiokuError

__all__ = [
    "MalformedOutputError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderTimeoutError",
    "ProviderUnreachableError",
]


class ProviderError(KiokuError):
    """A call to an LLM provider failed; ``reason`` is a short phrase for warnings."""

    def __init__(self, provider: str, reason: str, *, hint: str | None = None) -> None:
        self.provider = provider
        self.reason = reason
        super().__init__(f"{provider} failed: {reason}", hint=hint)


class ProviderHTTPError(ProviderError):
    """The provider answered with an HTTP error status (after the retries, if it was retryable)."""

    def __init__(
        self,
        provider: str,
        reason: str,
        *,
        status: int,
        body: str = "",
        hint: str | None = None,
    ) -> None:
        self.status = status
        #: The start of the error body, redacted: providers say there what was wrong.
        self.body = body
        super().__init__(provider, reason, hint=hint)


class ProviderTimeoutError(ProviderError):
    """No complete answer arrived within ``llm.timeout_seconds`` (after the retries)."""


class ProviderConnectionError(ProviderError):
    """The connection could not be made or was dropped (after the retries)."""


class MalformedOutputError(ProviderError):
    """The model's answer was not the JSON object asked for, even after one more request."""


class ProviderUnreachableError(ConfigError):
    """Nothing answers at a provider's URL when kioku starts (connection refused, unknown host,
    no answer in time). A configuration error for commands that only talk to the provider; the
    analyzer registry degrades to the offline analyzer instead, so no turn is lost."""
