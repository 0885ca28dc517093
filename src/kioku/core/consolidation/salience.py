"""Spec 003 §7's salience (記憶の重要度判定): which events deserve long-term memory, pure.

A weighted sum of four parts, each in [0, 1]: emotional impact (感情的インパクト), novelty
(新規性), relatedness to existing memories (関連性) and repetition (繰り返し). The caller
passes the event's emotional intensity as a fraction, and the similarities of its embedding
to stored memories (the store's nearest neighbours, any number, in any order).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "LONG_TERM_SHARE",
    "NEIGHBOURS",
    "RELATED_ABOVE",
    "REPETITION_SCALE",
    "SIMILAR_ABOVE",
    "WEIGHT_EMOTION",
    "WEIGHT_NOVELTY",
    "WEIGHT_RELATEDNESS",
    "WEIGHT_REPETITION",
    "Salience",
    "long_term",
    "novelty",
    "relatedness",
    "repetition",
    "salience",
    "salience_parts",
]

#: spec 003 §7 calculate_importance (emotion_intensity * 0.4): weight of emotional impact.
WEIGHT_EMOTION: Final = 0.4
#: spec 003 §7 calculate_importance (novelty * 0.3): weight of novelty.
WEIGHT_NOVELTY: Final = 0.3
#: spec 003 §7 calculate_importance (relatedness * 0.2): weight of relatedness.
WEIGHT_RELATEDNESS: Final = 0.2
#: spec 003 §7 calculate_importance (min(recency, 1.0) * 0.1): weight of repetition.
WEIGHT_REPETITION: Final = 0.1
#: spec 003 §7 _calculate_novelty (threshold=0.8): a neighbour above this repeats the event.
SIMILAR_ABOVE: Final = 0.8
#: spec 003 §7 _calculate_novelty (top_k=5): how many nearest neighbours are looked at.
NEIGHBOURS: Final = 5
#: The least similarity for a neighbour to count as related (the spec leaves it open).
RELATED_ABOVE: Final = 0.3
#: spec 003 §7 calculate_importance (mention_count / 10.0): mentions for full repetition.
REPETITION_SCALE: Final = 10
#: spec 003 §7 prioritize_for_consolidation (上位70%のみ長期記憶へ): share kept long-term.
LONG_TERM_SHARE: Final = 0.7


@dataclass(frozen=True, slots=True)
class Salience:
    """The four parts of a salience score, each in [0, 1] before weighting, and the total."""

    emotion: float
    novelty: float
    relatedness: float
    repetition: float
    total: float


def novelty(similarities: Sequence[float]) -> float:
    """``1 − (neighbours above SIMILAR_ABOVE) / NEIGHBOURS`` over the :data:`NEIGHBOURS` nearest.

    An event with no similar memory is wholly new (1.0); one with five near-copies, 0.0.
    """
    similar = sum(1 for s in _nearest(similarities) if s > SIMILAR_ABOVE)
    return (NEIGHBOURS - similar) / NEIGHBOURS  # 1 − similar / 5, without float noise


def relatedness(similarities: Sequence[float]) -> float:
    """The share of the :data:`NEIGHBOURS` nearest memories that are related but not repeated.

    Spec 003 §7 names ``_calculate_relatedness`` (既存記憶との繋がりが多いほど重要) without
    defining it. Here a neighbour is related when its similarity is in
    [:data:`RELATED_ABOVE`, :data:`SIMILAR_ABOVE`]: close enough to connect the event to
    what is known, not so close that it repeats it, which novelty already counts. So a
    near-copy scores low on both novelty and relatedness, and relatedness is never above
    novelty.
    """
    related = sum(1 for s in _nearest(similarities) if RELATED_ABOVE <= s <= SIMILAR_ABOVE)
    return related / NEIGHBOURS


def repetition(mentions: int) -> float:
    """``min(mentions / REPETITION_SCALE, 1)``, and 0 for no mention."""
    return max(0.0, min(mentions / REPETITION_SCALE, 1.0))


def salience_parts(emotion: float, similarities: Sequence[float], mentions: int) -> Salience:
    """Each part of the salience of an event, and their weighted sum capped to [0, 1].

    ``emotion`` is the emotional intensity as a fraction (intensity / 100), clamped to
    [0, 1]; ``similarities`` those of the event to stored memories; ``mentions`` how often
    it was mentioned.
    """
    e = max(0.0, min(1.0, emotion))
    n = novelty(similarities)
    r = relatedness(similarities)
    m = repetition(mentions)
    total = WEIGHT_EMOTION * e + WEIGHT_NOVELTY * n + WEIGHT_RELATEDNESS * r + WEIGHT_REPETITION * m
    return Salience(e, n, r, m, max(0.0, min(1.0, total)))


def salience(emotion: float, similarities: Sequence[float], mentions: int) -> float:
    """``0.4 emotion + 0.3 novelty + 0.2 relatedness + 0.1 repetition``, in [0, 1]."""
    return salience_parts(emotion, similarities, mentions).total


def long_term(
    scored: Sequence[tuple[str, float]], share: float = LONG_TERM_SHARE
) -> tuple[list[str], list[str]]:
    """Which events go to long-term memory: (kept, left in the mid-term tier), in input order.

    The ``max(1, floor(n × share))`` highest scores are kept, ties going to the earlier
    event. Spec 003 §7 takes ``int(len × 0.7)``, which keeps nothing of a thread with a
    single turn; here at least one is kept when there is any. ``share`` must be in (0, 1].
    """
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], got {share}")
    if not scored:
        return [], []
    want = max(1, math.floor(round(len(scored) * share, 9)))
    ranked = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
    keep = set(ranked[:want])
    kept = [ident for i, (ident, _) in enumerate(scored) if i in keep]
    left = [ident for i, (ident, _) in enumerate(scored) if i not in keep]
    return kept, left


def _nearest(similarities: Sequence[float]) -> list[float]:
    """The :data:`NEIGHBOURS` highest similarities."""
    return sorted(similarities, reverse=True)[:NEIGHBOURS]
