"""Token counting for working memory: kept in :mod:`kioku.core.tokens` (priming counts tokens
too, without loading the pruning rules of this package); re-exported here."""

from __future__ import annotations

from kioku.core.tokens import (
    MESSAGE_OVERHEAD,
    EstimateCounter,
    HFCounter,
    TiktokenCounter,
    TokenCounter,
    make_counter,
    message_tokens,
)

__all__ = [
    "MESSAGE_OVERHEAD",
    "EstimateCounter",
    "HFCounter",
    "TiktokenCounter",
    "TokenCounter",
    "make_counter",
    "message_tokens",
]
