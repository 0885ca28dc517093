"""Scoring one recall candidate: how well it matches the query, how much of the query it
covers, and every component of the spec's priority (see :mod:`.pipeline`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from kioku.config.schema import Config
from kioku.core.model import Memory
from kioku.core.mood_balance import shifted_resonance
from kioku.core.presets import RecallWeights
from kioku.core.recall import EmotionState, Priority, coverage, priority, resonance, term_weight
from kioku.ports.store import ScoringFields, Store
from kioku.service.recall.mood import SessionMood
from kioku.service.recall.periods import DAY_WEIGHT
from kioku.service.recall.periods import WEIGHT as PERIOD_WEIGHT
from kioku.service.recall.results import Recalled

__all__ = [
    "COVERAGE_FACTOR",
    "COVERAGE_SHARE",
    "coverage_of",
    "match_of",
    "score_of",
    "to_recalled",
]

_SECONDS_PER_DAY = 86_400.0
#: The share of a memory's lexical match that is its coverage of the query (the IDF-weighted
#: share of the query's terms it holds) rather than its BM25 over the best candidate's: of
#: two memories as strong by BM25, the one holding more of the query comes first.
COVERAGE_SHARE = 0.15
#: How much more a memory's priority counts when it holds all of the query itself than when
#: it holds none of it (``1 + COVERAGE_FACTOR × coverage``): of two memories as relevant,
#: the one that holds the query's words comes before the one lifted by its neighbours
#: (their words lent to its lexical match, their relevance lent as conversation context).
COVERAGE_FACTOR = 0.2


def score_of(
    fields: ScoringFields,
    similarity: float,
    lexical: float,
    context: float,
    *,
    weights: RecallWeights,
    config: Config,
    mood: SessionMood | None,
    past: bool,
    now: datetime,
    shift: float | None = None,
    dated: bool = False,
    day: bool = False,
    coverage: float | None = None,
) -> dict[str, float]:
    """Every component of one candidate's priority (the numeric fields of Recalled).

    ``shift`` is the mood shift's strength when it is on (see
    :func:`~kioku.core.mood_balance.shifted_resonance`), None when it is off. ``dated``: the
    memory was made in a period the query names (see :mod:`.periods`); its time factor
    (``recency``) is then raised by :data:`~.periods.WEIGHT`, unless time plays no part in
    the ranking (both recency weights 0); ``day``: made on a day the query names, raised by
    :data:`~.periods.DAY_WEIGHT` more. ``coverage``: the memory's coverage of the query,
    :data:`COVERAGE_SHARE` of the lexical match (see :func:`match_of`) and a factor
    ``1 + COVERAGE_FACTOR × coverage`` of the adjusted relevance (None: not counted, factor
    1)."""
    relevance = min(1.0, match_of(similarity, lexical, weights, coverage) + context)
    age_days = max(0.0, (now - fields.created).total_seconds() / _SECONDS_PER_DAY)
    fresh = 0.5 ** (age_days / weights.recency_half_life_days)
    recency = 1.0 + (weights.recency + (weights.temporal_recency if past else 0.0)) * fresh
    if weights.recency > 0 or weights.temporal_recency > 0:
        if dated:
            recency *= 1.0 + PERIOD_WEIGHT
        if day:
            recency *= 1.0 + DAY_WEIGHT
    category_factor = 1.0 + (
        weights.category if mood is not None and mood.category == fields.category else 0.0
    )
    coverage_factor = 1.0 + COVERAGE_FACTOR * max(0.0, coverage or 0.0)
    adjusted = relevance * recency * category_factor * coverage_factor
    score = max(0.0, fields.retention_score)
    retention = 100.0 * (score / 100.0) ** weights.retention_exponent if score > 0 else 0.0
    current = mood.emotion if mood else None
    emotion = EmotionState(fields.valence, fields.arousal, fields.tags)
    shifted = (
        None
        if shift is None
        else shifted_resonance(
            current,
            emotion,
            valence_bonus=config.resonance.valence_match_bonus,
            arousal_bonus=config.resonance.arousal_proximity_bonus,
            strength=shift,
        )
    )
    res = resonance(current, emotion, config.resonance) if shifted is None else shifted
    parts: Priority = priority(
        adjusted,
        retention,
        fields.recall_count,
        res,
        recall_count_weight=config.recall.recall_count_weight,
        alpha=config.resonance.priority_weight_alpha,
    )
    return {
        "similarity": similarity,
        "lexical": lexical,
        "context": context,
        "relevance": relevance,
        "recency": recency,
        "category_factor": category_factor,
        "coverage_factor": coverage_factor,
        "adjusted_relevance": adjusted,
        "retention": retention,
        "recall_weight": parts.recall_weight,
        "base": parts.base,
        "resonance": res,
        "resonance_term": parts.resonance_term,
        "final": parts.final,
    }


def coverage_of(
    store: Store,
    terms: Sequence[str],
    keys: Iterable[str],
    known: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, float]:
    """Each candidate's coverage of the query's terms (what qualifies it). ``known``: the
    indexed terms of some of them, read already (a memory not indexed is left out of it)."""
    wanted = sorted(keys)
    if not terms or not wanted:
        return {}
    memories, documents = store.term_documents(terms)
    weights = {term: term_weight(count, memories) for term, count in documents.items()}
    known = known or {}
    held = {key: known[key] for key in wanted if key in known}
    held.update(store.indexed_terms([key for key in wanted if key not in known]))
    return {key: coverage(weights, held.get(key, frozenset())) for key in wanted}


def match_of(
    similarity: float, lexical: float, weights: RecallWeights, coverage: float | None = None
) -> float:
    """How well a memory matches the query, in [0, 1]: cosine and the lexical match, weighted.
    The lexical match is the normalised BM25 (``lexical``, in [0, 1]); with the memory's
    ``coverage`` of the query (in [0, 1]) given, :data:`COVERAGE_SHARE` of it is that."""
    total = weights.vector + weights.lexical
    if total <= 0:
        return 0.0
    words = (
        lexical
        if coverage is None
        else (1.0 - COVERAGE_SHARE) * lexical + COVERAGE_SHARE * coverage
    )
    return (weights.vector * max(0.0, similarity) + weights.lexical * words) / total


def to_recalled(memory: Memory, s: dict[str, float], floor: float) -> Recalled:
    companion = s["coverage"] < floor
    return Recalled(
        memory=memory,
        archived=memory.archived,
        similarity=s["similarity"],
        lexical=s["lexical"],
        relevance=s["relevance"],
        recency=s["recency"],
        category_factor=s["category_factor"],
        coverage_factor=s["coverage_factor"],
        adjusted_relevance=s["adjusted_relevance"],
        retention=s["retention"],
        recall_weight=s["recall_weight"],
        base=s["base"],
        resonance=s["resonance"],
        resonance_term=s["resonance_term"],
        final=s["final"],
        via="context" if companion else None,
        context=s["context"],
        coverage=s["coverage"],
    )
