"""What consolidation passes between its steps: sources, candidates, verdicts and conflicts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = [
    "Conflict",
    "ConflictJudgement",
    "KnowledgeCandidate",
    "NliScores",
    "Origin",
    "ProcedureCandidate",
    "Source",
    "Strategy",
    "Terms",
    "Verdict",
]

#: How text becomes content terms (the store's lexical analyzer, Japanese and English):
#: the core never tokenizes by itself, the service passes the function in.
Terms = Callable[[str], Sequence[str]]

#: Where a candidate came from: lifted verbatim from its sources, or written by an LLM.
Origin = Literal["extractive", "llm"]

#: Spec 001 (3つの解決戦略).
Strategy = Literal["supersede", "merge", "coexist"]


@dataclass(frozen=True, slots=True)
class Source:
    """One memory as consolidation reads it: an episode of the day, or an existing item."""

    id: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class KnowledgeCandidate:
    """A fact, lesson or policy proposed for knowledge, with the sources it came from."""

    title: str
    text: str
    sources: tuple[str, ...]
    origin: Origin = "extractive"


@dataclass(frozen=True, slots=True)
class ProcedureCandidate:
    """A procedure proposed from procedural episodes: steps in order, and its sources."""

    title: str
    description: str
    steps: tuple[str, ...]
    sources: tuple[str, ...]
    origin: Origin = "extractive"


@dataclass(frozen=True, slots=True)
class NliScores:
    """An NLI judgement of (premise, hypothesis): three probabilities that sum to 1."""

    entailment: float
    contradiction: float
    neutral: float


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a candidate was accepted, with what confidence, by which stage and why."""

    accepted: bool
    confidence: float | None
    stage: Literal["nli", "llm", "lexical", "skipped"]
    reason: str


@dataclass(frozen=True, slots=True)
class ConflictJudgement:
    """What an LLM (or the offline rules) said about two knowledge texts."""

    contradicts: bool
    strategy: Strategy | None = None
    #: For ``merge``: the one text that keeps what both say.
    merged_text: str | None = None
    #: For ``coexist``: the condition under which each holds.
    condition: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two knowledge items found in conflict and how to resolve it: ``older`` and ``newer``
    are memory ids (``newer`` may be a candidate's index as text before it is stored)."""

    older: str
    newer: str
    strategy: Strategy
    reason: str
    merged_text: str | None = None
    condition: str | None = None
