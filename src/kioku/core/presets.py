"""Recall weights as data, with named presets (``[retrieval] preset``).

The spec's priority multiplies relevance by the retention score. How strongly retention and
recency weigh against the match itself is a choice, so it is data: ``spec`` follows spec 000
to the letter, ``balanced`` (the default) lets relevance lead and retention shade it, as
measured on LoCoMo (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Final

__all__ = ["PRESETS", "RecallWeights", "weights_for"]


@dataclass(frozen=True, slots=True)
class RecallWeights:
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
            candidates=60,
        ),
        "spec": RecallWeights(
            vector=1.0,
            lexical=0.0,
            retention_exponent=1.0,
            recency=0.0,
            temporal_recency=0.3,
            recency_half_life_days=30.0,
            category=0.1,
            candidates=60,
        ),
        "lexical": RecallWeights(
            vector=0.0,
            lexical=1.0,
            retention_exponent=0.25,
            recency=0.05,
            temporal_recency=0.3,
            recency_half_life_days=30.0,
            category=0.05,
            candidates=60,
        ),
    }
)

WEIGHT_NAMES: Final = tuple(f.name for f in fields(RecallWeights))


def weights_for(preset: str, overrides: dict[str, float] | None = None) -> RecallWeights:
    """The weights of ``preset`` with any ``overrides`` applied (names as in RecallWeights)."""
    base = PRESETS[preset]
    if not overrides:
        return base
    values: dict[str, float | int] = dict(overrides)
    if "candidates" in values:
        values["candidates"] = int(values["candidates"])
    return replace(base, **values)  # type: ignore[arg-type]
