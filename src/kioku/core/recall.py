"""Recall scoring of spec 000 (参照方法, 感情共鳴, 参照優先度の計算). Pure functions.

``priority = retention × relevance × (1 + w·recall_count) + α × resonance × retention``

Every part of the score is kept in :class:`Priority`, so ``kioku recall --explain`` can show
each component and they add up to the final score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime, timedelta

from kioku.config.schema import ResonanceConfig
from kioku.core.model import Valence
from kioku.records import Record

__all__ = [
    "Candidate",
    "ContextSeed",
    "EmotionState",
    "Priority",
    "choose",
    "context_bonus",
    "conversation_neighbours",
    "coverage",
    "mentions_the_past",
    "priority",
    "reciprocal_rank_fusion",
    "resonance",
    "select_results",
    "term_weight",
]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EmotionState(Record):
    """The current emotion carried through a session (現在の感情の取得): the emotion of the
    memory generated or recalled last; none at the start of a session."""

    valence: Valence
    arousal: int
    tags: tuple[str, ...]


def resonance(current: EmotionState | None, memory: EmotionState, cfg: ResonanceConfig) -> float:
    """感情共鳴スコア = valence bonus + arousal proximity bonus + tag overlap (0 without a
    current emotion)."""
    if current is None:
        return 0.0
    score = cfg.valence_match_bonus if current.valence == memory.valence else 0.0
    gap = abs(current.arousal - memory.arousal) / 100.0
    score += max(0.0, cfg.arousal_proximity_bonus * (1.0 - gap))
    if current.tags and memory.tags:
        shared = len(set(current.tags) & set(memory.tags))
        score += (
            shared / max(len(set(current.tags)), len(set(memory.tags))) * (cfg.tags_overlap_weight)
        )
    return score


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Priority(Record):
    """The parts of a recall priority. ``base + resonance_term == final``."""

    relevance: float
    retention: float
    recall_weight: float
    base: float
    resonance: float
    resonance_term: float
    final: float


def priority(
    relevance: float,
    retention: float,
    recall_count: int,
    resonance_score: float,
    *,
    recall_count_weight: float,
    alpha: float,
) -> Priority:
    """参照優先度: ``retention × relevance × (1 + w·recall_count) + α × resonance × retention``.

    ``relevance`` is the query match in [0, 1] (the spec's キーワード一致度); negative
    similarities count as no match.
    """
    rel = max(0.0, relevance)
    weight = 1.0 + recall_count_weight * max(0, recall_count)
    base = retention * rel * weight
    term = alpha * resonance_score * retention
    return Priority(rel, retention, weight, base, resonance_score, term, base + term)


_PAST_JA = re.compile(
    r"前回|以前|この前|こないだ|この間|先日|昨日|きのう|前に|さっき|最近|先週|先月"
)
_PAST_EN = re.compile(
    r"\b(last time|before|previously|earlier|yesterday|the other day|recently|last week|"
    r"last month|we talked|you said|i told you|remember when)\b",
    re.IGNORECASE,
)


def mentions_the_past(query: str) -> bool:
    """Whether the query refers back in time (時系列参照).

    「前回」「以前」「この前」 and the like, "last time", "before", "yesterday"."""
    return bool(_PAST_JA.search(query) or _PAST_EN.search(query))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> dict[str, float]:
    """RRF: each id scores ``Σ 1 / (k + rank)`` over the rankings it appears in (rank from 1)."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ContextSeed(Record):
    """A strongly matching memory and its conversation around it: the ids of the memories of
    its session just before it and just after it, nearest first."""

    relevance: float
    before: tuple[str, ...]
    after: tuple[str, ...]


def conversation_neighbours(
    at: datetime, others: Sequence[tuple[str, datetime]], turns: int, span: timedelta
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ids of ``others`` (of one session) just before and just after the moment ``at``:
    at most ``turns`` on each side, nearest first, none more than ``span`` away. Memories of
    the very same moment have no order, so they are neither."""
    before = sorted(
        ((when, key) for key, when in others if at - span <= when < at),
        reverse=True,
    )
    after = sorted((when, key) for key, when in others if at < when <= at + span)
    return (
        tuple(key for _, key in before[: max(0, turns)]),
        tuple(key for _, key in after[: max(0, turns)]),
    )


def context_bonus(
    seeds: Sequence[ContextSeed], weight: float, falloff: float = 0.5
) -> dict[str, float]:
    """Relevance lent by strong matches to the turns around them (会話の文脈).

    A question and its answer, or a remark and what it refers to, are often separate turns, so
    the turn next to a strong match is likely relevant too. A turn ``d`` steps from a seed gets
    ``weight × falloff^(d-1) × relevance``; a turn near several seeds keeps the largest.
    """
    bonus: dict[str, float] = {}
    for seed in seeds:
        lent = weight * max(0.0, seed.relevance)
        if lent <= 0:
            continue
        for side in (seed.before, seed.after):
            for steps, memory_id in enumerate(side):
                value = lent * falloff**steps
                if value > bonus.get(memory_id, 0.0):
                    bonus[memory_id] = value
    return bonus


def select_results(scores: Sequence[tuple[str, float]], top_k: int, threshold: float) -> list[str]:
    """The spec's selection (memory_retrieval.py): the top ``top_k`` at or above ``threshold``
    when there are that many; otherwise the top ``top_k`` of everything with a positive score
    (the fallback when too few pass the threshold)."""
    ranked = sorted(scores, key=lambda item: (-item[1], item[0]))
    above = [item for item in ranked if item[1] >= threshold]
    pool = above if len(above) >= top_k else [item for item in ranked if item[1] > 0]
    return [item_id for item_id, _ in pool[:top_k]]


def term_weight(documents: int, memories: int) -> float:
    """How much a query term tells, from the store: ``ln(1 + (N - n + 0.5) / (n + 0.5))`` for
    a term held by ``n`` of ``N`` memories (the always-positive IDF of BM25). A term no
    memory holds weighs as much as one held by a single memory: the store cannot tell an
    unseen word from a rare one."""
    n = max(1, documents)
    total = max(memories, n)
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def coverage(weights: Mapping[str, float], held: AbstractSet[str]) -> float:
    """How much of the query a memory holds, in [0, 1]: the weight of the query terms among
    the memory's terms over the weight of all of them (``weights``, see :func:`term_weight`).

    1 means every term of the query is there; a memory that shares only a common word, or
    lacks the query's rare words (a name, a topic the store has never heard of), scores low.
    Unlike a match divided by the best candidate's, it does not rise because nothing better
    was found: it is what lets an off-topic query match nothing."""
    total = math.fsum(weights.values())
    if total <= 0:
        return 0.0
    return min(1.0, math.fsum(w for term, w in weights.items() if term in held) / total)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Candidate(Record):
    """A scored candidate of a recall: its relevance to the query alone (``coverage``), its
    final priority (which mood, recency, retention and recall count raise), and whether it
    came as the conversation context of a qualified memory."""

    id: str
    coverage: float
    final: float
    companion: bool = False


def choose(
    candidates: Sequence[Candidate], top_k: int, threshold: float, floor: float
) -> list[str]:
    """Which candidates a recall returns, best first.

    Only a memory relevant to the query qualifies: its ``coverage`` is at least ``floor``,
    or it is a ``companion`` (the context lent by a qualified memory). Among those, the
    spec's selection (:func:`select_results`) orders by ``final``. The final priority can
    reorder qualified memories but never qualify one: an off-topic query returns nothing,
    whatever the mood, recency, retention or recall count of the memories."""
    eligible = [(c.id, c.final) for c in candidates if c.companion or c.coverage >= floor]
    return select_results(eligible, top_k, threshold)
