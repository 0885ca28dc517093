"""From weighted hits to valence, tags and emotional strength."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Final

from kioku.core.model import NEGATIVE_TAGS, OTHER_TAGS, POSITIVE_TAGS, Valence

from .hits import Hit

__all__ = ["EmotionResult", "context_tags", "score_emotion"]

#: Net evidence needed for a non-neutral valence.
VALENCE_THRESHOLD: Final = 0.6
#: …in a told experience of one's own life that asks for nothing, where a weak word is
#: seldom idle ("… my parents pretended not to be impressed. They were impressed.").
TOLD_THRESHOLD: Final = 0.3
#: A tag is kept when its weight reaches this share of the strongest tag's weight.
TAG_SHARE: Final = 0.35
#: …and this absolute weight.
TAG_MIN: Final = 0.5
MAX_TAGS: Final = 3
#: Weight of a cue that names a tag without any valence (score 0).
TAG_CUE_WEIGHT: Final = 1.0
_RANK_WEIGHT: Final = (1.0, 0.75, 0.55)
_ALLOWED: Final = {
    Valence.POSITIVE: frozenset(POSITIVE_TAGS + OTHER_TAGS),
    Valence.NEGATIVE: frozenset(NEGATIVE_TAGS + OTHER_TAGS),
    Valence.NEUTRAL: frozenset(OTHER_TAGS),
}


@dataclass(frozen=True, slots=True)
class EmotionResult:
    """The emotional reading of a text."""

    valence: Valence
    positive: float
    negative: float
    tags: tuple[str, ...]
    hits: tuple[Hit, ...]

    @property
    def net(self) -> float:
        return self.positive - self.negative

    @property
    def strength(self) -> float:
        """How much feeling there is, whichever way it points (0 …)."""
        return max(self.positive, self.negative) + 0.3 * min(self.positive, self.negative)


def _valence(positive: float, negative: float, threshold: float = VALENCE_THRESHOLD) -> Valence:
    net = positive - negative
    if net >= threshold:
        return Valence.POSITIVE
    if net <= -threshold:
        return Valence.NEGATIVE
    return Valence.NEUTRAL


def score_emotion(hits: list[Hit], *, told: bool = False) -> EmotionResult:
    """Valence and tags from ``hits``.

    ``told`` marks a told experience of one's own life that asks for nothing: there the
    evidence needed to leave neutral is :data:`TOLD_THRESHOLD` instead of
    :data:`VALENCE_THRESHOLD`.
    """
    positive = sum(h.score for h in hits if h.score > 0)
    negative = -sum(h.score for h in hits if h.score < 0)
    valence = _valence(positive, negative, TOLD_THRESHOLD if told else VALENCE_THRESHOLD)
    weights: dict[str, float] = defaultdict(float)
    first_seen: dict[str, int] = {}
    for h in hits:
        if not h.tags:
            continue
        # A cue that only names a tag (score 0: "out of the blue", 「子供の頃」) weighs like a
        # plain feeling word, so it can stand next to the turn's main feeling.
        magnitude = max(abs(h.score), 0.6) if h.score else TAG_CUE_WEIGHT
        for rank, tag in enumerate(h.tags[:3]):
            weights[tag] += magnitude * _RANK_WEIGHT[rank]
            first_seen.setdefault(tag, h.start)
    allowed = _ALLOWED[valence]
    ranked = sorted(
        (t for t in weights if t in allowed),
        key=lambda t: (-weights[t], first_seen[t], t),
    )
    tags: list[str] = []
    if ranked:
        top = weights[ranked[0]]
        floor = max(top * TAG_SHARE, TAG_MIN if valence != Valence.NEUTRAL else 1.2)
        tags = [t for t in ranked if weights[t] >= floor][:MAX_TAGS]
    return EmotionResult(valence, positive, negative, tuple(tags), tuple(hits))


def context_tags(
    tags: tuple[str, ...],
    valence: Valence,
    *,
    affection: bool,
    resolve: bool,
    surprise: bool,
) -> tuple[str, ...]:
    """Tags the situation implies beyond the words.

    A pleasant turn about family, a partner or a pet carries ``love``, unless it is pride in
    one's own achievement, where they are only named in passing (「合格…母に電話した」); a felt
    decision (「決めた」, "I decided") carries ``determination``; 「！？」 carries ``surprise``.
    Feeling alone is a way of feeling low: ``loneliness`` carries ``sadness``.
    """
    extra: list[str] = []
    if "loneliness" in tags:
        extra.append("sadness")
    if affection and valence is Valence.POSITIVE and "pride" not in tags:
        extra.append("love")
    if resolve and valence is not Valence.NEUTRAL:
        extra.append("determination")
    if surprise:
        extra.append("surprise")
    out = list(tags)
    for tag in extra:
        if tag not in out and len(out) < MAX_TAGS:
            out.append(tag)
    return tuple(out)
