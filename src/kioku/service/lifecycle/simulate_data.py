"""The synthetic memories of a simulation and its analyzer, which compresses by keeping the
first words instead of summarising (see :mod:`.simulate`)."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Final

from kioku.core.model import POSITIVE_TAGS
from kioku.ports.analyzer import Analysis, Compressed, Turn
from kioku.service.remember.drafts import MemoryDraft

__all__ = ["CATEGORY_MIX", "INTENSITY_MODE", "QuickAnalyzer", "synthetic_draft"]

#: The synthetic mix: share of each category, and the most likely intensity in it.
CATEGORY_MIX: Final = {"casual": 0.35, "work": 0.35, "decision": 0.15, "emotional": 0.15}
INTENSITY_MODE: Final = {"casual": 25, "work": 35, "decision": 45, "emotional": 60}

_WORDS: Final = {
    "casual": "coffee lunch weather rain train movie novel weekend walk park cat dog bakery "
    "ramen music concert garden bicycle beach sunset market festival tea picnic game".split(),
    "work": "deploy database migration review release pipeline server latency index query "
    "cache schema container volume backup monitoring alert sprint ticket refactor api "
    "logging timeout cluster".split(),
    "decision": "chose adopt postgres sqlite json vendor budget roadmap hiring framework "
    "license pricing contract architecture rewrite policy rollout deadline".split(),
    "emotional": "birthday mother father friend wedding hospital graduation farewell "
    "promotion apology reunion letter memory childhood hometown anniversary".split(),
}
_COMMON: Final = (
    "today yesterday again finally slowly together alone early late small long quiet "
    "busy strange simple careful honest second first last new old"
).split()
_SYLLABLES: Final = (
    "ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no "
    "ha hi fu he ho ma mi mu me mo ya yu yo ra ri ru re ro wa"
).split()
_NEGATIVE_TAGS: Final = ("sadness", "anxiety", "frustration", "regret", "loneliness")
_OTHER_TAGS: Final = ("nostalgia", "surprise", "confusion", "determination")


class QuickAnalyzer:
    """The simulation's analyzer: the offline one, except that compression keeps the first
    words of each field (Level 2) and then its first three words (Level 3)."""

    def __init__(self) -> None:
        from kioku.adapters.analyzers.offline import OfflineAnalyzer

        self._offline = OfflineAnalyzer()

    @property
    def name(self) -> str:
        return "offline-simulation"  # "offline…": the batch makes no texts ahead of time

    def analyze(self, turn: Turn) -> Analysis:
        return self._offline.analyze(turn)

    def summarize(self, trigger: str, content: str) -> Compressed:
        return Compressed(_first_words(trigger, 8), _first_words(content, 12))

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return Compressed(", ".join(trigger.split()[:3])[:40], ", ".join(content.split()[:3])[:40])


def _name(rng: random.Random) -> str:
    """A made-up proper name, so synthetic memories are not all alike (a few share a topic)."""
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _first_words(text: str, n: int) -> str:
    words = text.split()
    short = " ".join(words[:n])
    return short[: 6 * n] if short else text[: 6 * n]


def synthetic_draft(
    rng: random.Random, category: str, created: datetime, protect: bool
) -> MemoryDraft:
    """A made-up memory of ``category`` made at ``created`` (the spec-like mix of the module)."""
    mode = INTENSITY_MODE.get(category, 35)
    intensity = max(5, min(100, round(rng.triangular(5, 100, mode))))
    words = _WORDS.get(category, _WORDS["casual"])
    topic = rng.sample(words, 2)
    name, place, thing = (_name(rng) for _ in range(3))
    trigger = f"Talked with {name} about {topic[0]} at {place}"
    content = (
        f"We went over the {topic[1]} and the {thing}; it felt {rng.choice(_COMMON)} and "
        f"{rng.choice(_COMMON)}, {rng.choice(_COMMON)} {rng.choice(words)} next."
    )
    valence = rng.choices(["positive", "negative", "neutral"], [0.4, 0.25, 0.35])[0]
    pool = {
        "positive": POSITIVE_TAGS,
        "negative": _NEGATIVE_TAGS,
        "neutral": _OTHER_TAGS,
    }[valence]
    return MemoryDraft(
        trigger=trigger,
        content=content,
        intensity=intensity,
        category=category,
        valence=valence,
        arousal=max(0, min(100, round(rng.gauss(intensity, 15)))),
        tags=rng.sample(list(pool), rng.randint(0, 2)),
        keywords=[*topic, name],
        protected=protect,
        created=created,
    )
