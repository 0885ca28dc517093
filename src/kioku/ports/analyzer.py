"""The Analyzer port: turning a conversation turn into the fields of a memory, and compressing.

Spec 000 (記憶生成, 三段階圧縮モデル › 圧縮方法) asks an LLM for these; kioku's default is an
offline analyzer with the same contract. Every implementation returns only values the memory
record accepts: intensity and arousal 0–100, the spec's tag set, one of the four categories.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from kioku.core.model import Valence
from kioku.core.profiles import ProfileClaim

__all__ = ["Analysis", "Analyzer", "Compressed", "Language", "ProfileExtractor", "Turn"]

Language = Literal["ja", "en", "mixed", "other"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn: the user's input and the assistant's reply (生成単位)."""

    user: str
    assistant: str = ""
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Analysis:
    """What an analyzer understood of a turn.

    The LLM output format of spec 000, plus protection and the language.
    """

    intensity: int
    valence: Valence
    arousal: int
    tags: tuple[str, ...]
    category: str
    keywords: tuple[str, ...]
    trigger: str
    content: str
    protected: bool
    language: Language
    #: Which analyzer produced it, e.g. ``offline`` or ``anthropic:claude-haiku-4-5``.
    analyzer: str
    #: Warnings for the user, e.g. that a provider failed and the offline analyzer stood in.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Compressed:
    """A compressed trigger/content pair (Level 1→2 summary, or Level 2→3 keywords)."""

    trigger: str
    content: str


@runtime_checkable
class Analyzer(Protocol):
    """Analyze turns and compress memories."""

    @property
    def name(self) -> str: ...

    def analyze(self, turn: Turn) -> Analysis:
        """Emotion, category, keywords, trigger/content and protection for one turn."""
        ...

    def summarize(self, trigger: str, content: str) -> Compressed:
        """Level 1 → 2: trigger in 1–2 sentences, content in 2–3; names, terms and feeling kept."""
        ...

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        """Level 2 → 3: 2–3 keywords from each field, comma-separated."""
        ...


@runtime_checkable
class ProfileExtractor(Protocol):
    """Read what a speaker says about themselves (spec 003 §6, ユーザープロファイル管理).

    An optional capability of an analyzer: the LLM analyzers have it, and the service falls
    back to the offline :func:`kioku.core.profiles.extract_profile_claims` when the analyzer
    in use does not. The same contract as that function: explicit, present, first-person
    preferences and facts only, each with its evidence, a verbatim span of ``text``.
    """

    def extract_profile(self, text: str, speaker: str | None) -> list[ProfileClaim]:
        """The profile claims ``speaker`` makes about themselves in ``text``, in text order."""
        ...
