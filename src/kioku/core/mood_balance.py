"""Mood balance safeguards (spec 000, 感情価による想起非対称性): the arithmetic only.

Resonance favours memories that match the session's mood, so a session in a low mood is
reminded of negative memories, which keeps the mood low. Spec 000 names three safeguards;
this module holds what they compute, with no store and no clock:

* the monitor (感情バランスのモニタリング): per day, how many of the memories primed or
  recalled were positive, neutral or negative, how many negative with a high intensity, and
  the negative share (:class:`DayBalance`, :func:`tally`);
* the limiter (negative想起頻度の上限リミッター): of the last ``window`` memories primed or
  recalled for an owner, at most ``floor(share × window)`` may be negative and of high
  intensity; a candidate that would go past that is ranked down (:func:`limit`);
* the mood shift (気分転換モード): when the session's mood is negative, resonance rewards a
  positive memory instead of a negative one (:func:`shifted_resonance`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kioku.core.model import Valence
from kioku.core.recall import EmotionState
from kioku.records import Record

__all__ = [
    "DayBalance",
    "Limited",
    "heavy_cap",
    "is_heavy",
    "limit",
    "shifted_resonance",
    "tally",
]


def is_heavy(valence: Valence, intensity: int, high_intensity: int) -> bool:
    """A negative memory whose emotional intensity is at least ``high_intensity``."""
    return valence is Valence.NEGATIVE and intensity >= high_intensity


def heavy_cap(window: int, share: float) -> int:
    """How many negative high-intensity memories ``window`` memories in a row may hold."""
    # The small tolerance keeps 0.3 × 10 at 3, not 2 (0.3 × 10 is 2.9999… in binary).
    return max(0, math.floor(share * window + 1e-9))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Limited(Record):
    """The limiter's answer: the candidates in their new order, and those ranked down."""

    order: tuple[str, ...]
    demoted: tuple[str, ...]


def limit(
    history: Sequence[bool],
    ranked: Sequence[tuple[str, bool]],
    *,
    window: int,
    share: float,
    spared: AbstractSet[str] = frozenset(),
) -> Limited:
    """Rank down the heavy candidates that would put more than ``heavy_cap(window, share)``
    heavy memories in any ``window`` memories in a row.

    ``history`` says, oldest first, which of the memories primed or recalled before were
    heavy; ``ranked`` holds the candidates best first, each with whether it is heavy. They
    are taken in that order: a heavy one is kept when, with it, the last ``window`` memories
    (history and the candidates kept so far) hold at most the cap; otherwise it is ranked
    down. Kept candidates keep their order, followed by the ranked-down ones in theirs.
    Light candidates are never ranked down, nor those in ``spared`` (what the prompt asks
    for by name), which count in the window all the same."""
    if window < 1:
        raise ValueError("window must be at least 1")
    cap = heavy_cap(window, share)
    recent = list(history[-window:])
    kept: list[str] = []
    demoted: list[str] = []
    for key, heavy in ranked:
        if (
            heavy
            and key not in spared
            and sum(recent[-(window - 1) :] if window > 1 else []) + 1 > cap
        ):
            demoted.append(key)
            continue
        kept.append(key)
        recent.append(heavy)
        del recent[:-window]
    return Limited(tuple(kept + demoted), tuple(demoted))


def shifted_resonance(
    current: EmotionState | None,
    memory: EmotionState,
    *,
    valence_bonus: float,
    arousal_bonus: float,
    strength: float,
) -> float | None:
    """Resonance in the mood shift (気分転換モード), or None when the mood is not negative
    (the ordinary resonance applies then).

    With a negative mood, a positive memory receives ``strength × valence_bonus`` where a
    matching (negative) one would have received the valence bonus; a negative memory receives
    none. Arousal proximity counts as usual; shared emotion tags do not (a negative mood's
    tags are negative feelings, and rewarding them would favour negative memories again)."""
    if current is None or current.valence is not Valence.NEGATIVE:
        return None
    score = strength * valence_bonus if memory.valence is Valence.POSITIVE else 0.0
    gap = abs(current.arousal - memory.arousal) / 100.0
    return score + max(0.0, arousal_bonus * (1.0 - gap))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class DayBalance(Record):
    """What was primed or recalled on one day, by valence. ``heavy`` counts the negative
    memories of high intensity (a part of ``negative``)."""

    day: str
    positive: int = 0
    neutral: int = 0
    negative: int = 0
    heavy: int = 0

    @property
    def total(self) -> int:
        return self.positive + self.neutral + self.negative

    @property
    def negative_share(self) -> float | None:
        """Negative memories over all; None on a day with nothing primed."""
        return self.negative / self.total if self.total else None

    @property
    def heavy_share(self) -> float | None:
        return self.heavy / self.total if self.total else None

    def as_dict(self) -> dict[str, object]:
        share, heavy = self.negative_share, self.heavy_share
        return {
            "day": self.day,
            "positive": self.positive,
            "neutral": self.neutral,
            "negative": self.negative,
            "negative_high_intensity": self.heavy,
            "total": self.total,
            "negative_share": None if share is None else round(share, 4),
            "high_intensity_share": None if heavy is None else round(heavy, 4),
        }


def tally(day: str, emotions: Iterable[tuple[Valence, int]], high_intensity: int) -> DayBalance:
    """The balance of one day from the (valence, intensity) of each memory primed."""
    counts = dict.fromkeys(Valence, 0)
    heavy = 0
    for valence, intensity in emotions:
        counts[valence] += 1
        heavy += is_heavy(valence, intensity, high_intensity)
    return DayBalance(
        day, counts[Valence.POSITIVE], counts[Valence.NEUTRAL], counts[Valence.NEGATIVE], heavy
    )
