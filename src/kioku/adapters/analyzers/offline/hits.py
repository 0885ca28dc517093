"""The unit of emotional evidence: one matched word, emoji or cue, after negation and degree."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hit"]


@dataclass(frozen=True, slots=True)
class Hit:
    """A matched cue with its final contribution.

    ``score`` is signed valence evidence after negation, degree words and clause weighting;
    ``arousal`` the word's arousal hint (-2 … 2); ``tags`` the emotion tags it supports.
    """

    term: str
    start: int
    score: float
    arousal: int
    tags: tuple[str, ...]
    negated: bool = False
    #: The strongest degree factor that applied (1.0 when none).
    degree: float = 1.0
