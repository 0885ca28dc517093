"""Context category (casual / work / decision / emotional) from topic cues and feeling.

The order follows the subject of the turn: a decision (design or life choice) first; then the
user's personal life or inner state; then tasks; everything else is casual. A task stays ``work``
even when the feeling is strong; a non-task turn with strong feeling is ``emotional``.
"""

from __future__ import annotations

from typing import Final

from .topics import TopicScores

__all__ = ["choose_category"]

_EMOTIONAL_INTENSITY: Final = 61


def choose_category(topics: TopicScores, intensity: int, strength: float, request: bool) -> str:
    personal = topics["personal"] + topics["health"] + topics["loss"] + topics["trauma"]
    personal += topics["milestone"] * 0.8
    work = topics["work"]
    decision = topics["decision"]
    if decision >= 1.2 and decision >= personal * 0.5:
        return "decision"
    if decision >= 1 and work < 3 and personal < 1.5:
        return "decision"
    if topics["loss"] >= 2 or topics["trauma"] >= 2:
        return "emotional"
    if personal >= 1.2 and personal >= work and not (request and strength < 1):
        return "emotional"
    if work >= 1.2:
        return "work"
    if intensity >= _EMOTIONAL_INTENSITY:
        return "emotional"
    if topics["decision"] >= 1:
        return "decision"
    return "casual"
