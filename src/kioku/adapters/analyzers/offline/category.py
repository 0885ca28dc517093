"""Context category (casual / work / decision / emotional) from topic cues and feeling.

The order follows the subject of the turn: a decision (design or life choice) first; then the
user's personal life or inner state; then tasks; everything else is casual. A task stays ``work``
even when the feeling is strong; a non-task turn with strong feeling is ``emotional``.

Personal topics follow spec 000's 「感情的核心、個人的な話題」: calm facts about oneself (name,
home, origin, lasting likes and dislikes, health conditions, owning a pet), plans for one's life
(a move, a trip, a family visit) and events of loss or achievement are ``emotional`` even when
no feeling is voiced. Small talk (greetings, thanks, weather, what one ate today) is ``casual``.
"""

from __future__ import annotations

from typing import Final

from .topics import STORY, TopicScores

__all__ = ["choose_category"]

_EMOTIONAL_INTENSITY: Final = 61


def choose_category(topics: TopicScores, intensity: int, strength: float, request: bool) -> str:
    topic = topics.scores.get  # topic(name, 0.0) is topics[name]
    facts = topic("fact", 0.0) + topic("health", 0.0)
    events = topic("life", 0.0) + topic("loss", 0.0) + topic("trauma", 0.0)
    personal = topic("personal", 0.0) + topic("self", 0.0) + events + topic("plan", 0.0) + facts
    personal += topic("milestone", 0.0) * 0.8
    work = topic("work", 0.0)
    decision = topic("decision", 0.0)
    if decision >= 1.2 and decision >= personal * 0.5:
        return "decision"
    if decision >= 1 and work < 3 and personal < 1.5:
        return "decision"
    if topic("loss", 0.0) >= 2 or topic("trauma", 0.0) >= 2:
        return "emotional"
    # A fact about oneself stays personal inside a request ("I'm allergic to nuts, suggest…").
    stated = facts >= 1.5 and facts >= work
    if personal >= 1.2 and personal >= work and (stated or not (request and strength < 1)):
        return "emotional"
    if topic("story", 0.0) >= STORY and not request and work < 1.2 + personal:
        return "emotional"
    if work >= 1.2:
        return "work"
    if intensity >= _EMOTIONAL_INTENSITY:
        return "emotional"
    if topic("decision", 0.0) >= 1:
        return "decision"
    return "casual"
