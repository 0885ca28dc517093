"""Recall weights as data, with named presets (``[retrieval] preset``).

The spec's priority multiplies relevance by the retention score. How strongly retention and
recency weigh against the match itself is a choice, so it is data: ``spec`` follows spec 000
to the letter, ``balanced`` (the default) lets relevance lead and retention shade it, as
measured on LoCoMo (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from kioku.config.schema import RetrievalConfig
from kioku.records import Record

__all__ = ["PRESETS", "RecallWeights", "effective_weights"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RecallWeights(Record):
    """The weights recall mixes its signals with."""

    #: Share of cosine similarity and of lexical (BM25) match in relevance; they sum to 1.
    vector: float
    lexical: float
    #: Retention enters the priority as ``100 × (score/100) ^ exponent``: 1 is the spec's
    #: formula, 0 ignores retention.
    retention_exponent: float
    #: Recency bonus ``1 + w × 0.5 ^ (age_days / half_life)``, always, and more when the query
    #: refers back in time (「前回」, "last time").
    recency: float
    temporal_recency: float
    recency_half_life_days: float
    #: Bonus factor for memories in the category of the session's last memory.
    category: float
    #: Candidates taken from each of lexical and vector search before ranking.
    candidates: int
    #: Relevance the strongest matches lend to the turns said just before and after them in
    #: the same session (conversation context); 0 turns it off.
    context: float


PRESETS: Final = MappingProxyType(
    {
        "balanced": RecallWeights(
            vector=0.3,
            lexical=0.7,
            retention_exponent=0.25,
            recency=0.05,
            temporal_recency=0.3,
            recency_half_life_days=30.0,
            category=0.05,
            candidates=100,
            context=0.25,
        ),
        "spec": RecallWeights(
            vector=1.0,
            lexical=0.0,
            retention_exponent=1.0,
            recency=0.0,
            temporal_recency=0.3,
            recency_half_life_days=30.0,
            category=0.1,
            candidates=100,
            context=0.0,
        ),
        "lexical": RecallWeights(
            vector=0.0,
            lexical=1.0,
            retention_exponent=0.25,
            recency=0.05,
            temporal_recency=0.3,
            recency_half_life_days=30.0,
            category=0.05,
            candidates=100,
            context=0.25,
        ),
    }
)

#: Which ``[retrieval]`` key overrides each weight.
_CONFIG_KEYS: Final = MappingProxyType(
    {
        "vector": "vector_weight",
        "lexical": "lexical_weight",
        "retention_exponent": "retention_exponent",
        "recency": "recency_weight",
        "temporal_recency": "temporal_recency_weight",
        "recency_half_life_days": "recency_half_life_days",
        "category": "category_weight",
        "candidates": "candidates",
        "context": "context_weight",
    }
)


def effective_weights(cfg: RetrievalConfig) -> RecallWeights:
    """The preset's weights, overridden by every weight key set to a non-default value."""
    defaults = RetrievalConfig()
    changed = {
        weight: getattr(cfg, key)
        for weight, key in _CONFIG_KEYS.items()
        if getattr(cfg, key) != getattr(defaults, key)
    }
    return replace(PRESETS[cfg.preset], **changed)
