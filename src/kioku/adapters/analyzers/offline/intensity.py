"""Emotional intensity (感情強度), anchored to the spec's situation guide.

The spec's appendix gives typical scores per situation: typo fix 15–25, technical discussion
30–40, design decision 40–50, personal topic 50–65, deep emotional exchange 70–85, trauma 85–100.
The topic of the turn sets such an anchor; the strength of the feeling expressed sets another;
the higher one leads and the other adds a little. Arousal and speaking about oneself add more.
"""

from __future__ import annotations

from typing import Final

from .emotion import EmotionResult
from .topics import STORY, TopicScores

__all__ = ["score_intensity"]

_ACK: Final = 6
_DEFAULT: Final = 14
_CORRECTION: Final = 20
_WORK: Final = 32
_DECISION: Final = 45
_PERSONAL: Final = 45
#: Calm facts about oneself (name, home, lasting likes): the amendment's 30–45 band.
_FACT: Final = 38
#: Plans for one's life, owning a pet: 40–55.
_PLAN: Final = 45
_HEALTH: Final = 52
_MILESTONE: Final = 50
_LOSS: Final = 80
_LOSS_MAX: Final = 92
#: Big relationship events (a proposal, a breakup, a divorce, a birth).
_LIFE: Final = 68
#: Loss or trauma named inside a request (「法事の準備を教えて」) is a topic, not an experience.
_EVENT_IN_REQUEST: Final = 50
_TRAUMA: Final = 86
#: A told experience of one's own life (a short personal episode) starts here and rises with
#: how clearly it is told as one (from topics.STORY), up to _STORY_MAX.
_STORY_BASE: Final = 44
_STORY_STEP: Final = 8
_STORY_MAX: Final = 62
_FELT_BASE: Final = 10
_FELT_PER_STRENGTH: Final = 7
_SELF: Final = 5
_NEGATIVITY: Final = 10
#: How much the lower of the topic anchor and the felt strength adds to the higher one.
_MIX: Final = 0.5


def _anchor(topics: TopicScores, request: bool) -> int:
    topic = topics.scores.get  # topic(name, 0.0) is topics[name]
    anchor = _DEFAULT
    if topic("trauma", 0.0) >= 2:
        anchor = _EVENT_IN_REQUEST if request else _TRAUMA
    elif topic("loss", 0.0) >= 2:
        anchor = _EVENT_IN_REQUEST if request else _LOSS
    elif topic("life", 0.0) >= 1.5:
        anchor = _EVENT_IN_REQUEST if request else _LIFE
    elif topic("health", 0.0) >= 1.5:
        anchor = _HEALTH
    elif topic("milestone", 0.0) >= 1.5:
        anchor = _MILESTONE
    elif topic("personal", 0.0) + topic("self", 0.0) >= 1.2:
        anchor = _PERSONAL - (10 if request else 0)
    elif topic("plan", 0.0) >= 1.2 or (topic("fact", 0.0) >= 1.2 and topic("pet", 0.0) >= 1):
        anchor = _PLAN - (10 if request else 0)
    elif topic("decision", 0.0) >= 1:
        anchor = _DECISION
    elif topic("fact", 0.0) >= 1.2:
        anchor = _FACT - (10 if request else 0)
    elif topic("work", 0.0) >= 1.2:
        anchor = _WORK
    elif topic("correction", 0.0) >= 1.5:
        anchor = _CORRECTION
    elif topic("ack", 0.0) >= 1 or topic("casual", 0.0) + topic("pet", 0.0) >= 1.5:
        anchor = _ACK if topic("ack", 0.0) >= 1 else 10
    story = topic("story", 0.0)
    if story >= STORY and not request:
        anchor = max(anchor, min(_STORY_MAX, round(_STORY_BASE + _STORY_STEP * story)))
    return anchor


def score_intensity(
    emotion: EmotionResult,
    arousal: int,
    topics: TopicScores,
    *,
    self_reference: bool,
    request: bool,
    length: int,
) -> int:
    """0–100."""
    topic = topics.scores.get  # topic(name, 0.0) is topics[name]
    anchor = _anchor(topics, request)
    strength = min(emotion.strength, 5.0)
    felt = _FELT_BASE + _FELT_PER_STRENGTH * strength
    if strength > 0.3:
        felt += (arousal - 40) * 0.2
        if self_reference:
            felt += _SELF
        if emotion.negative > emotion.positive:
            felt += _NEGATIVITY  # unpleasant experiences weigh more in memory
    high, low = max(anchor, felt), min(anchor, felt)
    value = high + _MIX * low - 2
    # A very short turn is an acknowledgement (「はい」, "ok") unless it names something that
    # matters: 「妊娠した」 and 「卒業した」 are four characters.
    if length <= 4 and strength < 1 and anchor < _FACT:
        value = min(value, 10)
    if topic("correction", 0.0) >= 1.5 and strength < 1.5:
        value = min(value, 25)
    if anchor == _LOSS:
        # Bereavement is 85-90 by the spec's anchors; the band above is trauma's.
        value = min(value, _LOSS_MAX)
    return max(0, min(100, round(value)))
