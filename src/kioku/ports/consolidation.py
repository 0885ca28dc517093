"""Ports of consolidation: an NLI model, and what an LLM does while the store sleeps.

Both are optional. Without an NLI model validation asks the LLM alone (spec 001's graceful
degradation); without an LLM consolidation runs its offline rules and reports each LLM step
as skipped. The LLM analyzers implement :class:`Consolidator`; the offline analyzer does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from kioku.core.consolidation.model import (
    ConflictJudgement,
    KnowledgeCandidate,
    NliScores,
    ProcedureCandidate,
    Source,
)

__all__ = ["Consolidator", "Nli", "Outcome"]

Outcome = Literal["success", "failure", "unknown"]


@runtime_checkable
class Nli(Protocol):
    """Natural language inference: does the premise entail or contradict the hypothesis?"""

    @property
    def name(self) -> str: ...

    def classify(self, premise: str, hypothesis: str) -> NliScores:
        """Entailment, contradiction and neutral probabilities of ``hypothesis`` given
        ``premise``."""
        ...


@runtime_checkable
class Consolidator(Protocol):
    """The LLM side of consolidation (spec 001 日次固定化, 知識矛盾検出・解決, 再固定化).

    Every answer is validated JSON; a reply that cannot be used twice raises
    :class:`~kioku.errors.KiokuError` (the provider layer's malformed-output error).
    """

    @property
    def name(self) -> str: ...

    def extract_knowledge(
        self, episodes: Sequence[Source], resolved: Sequence[str]
    ) -> list[KnowledgeCandidate]:
        """Facts, lessons and policies the day's semantic episodes state; ``resolved`` are
        items reported resolved since the last run, so knowledge saying they are open is
        updated. Each candidate names the episode ids it came from (ids of ``episodes``)."""
        ...

    def distil_procedures(self, episodes: Sequence[Source]) -> list[ProcedureCandidate]:
        """Procedures (description and ordered steps) the procedural episodes show."""
        ...

    def review_knowledge(self, candidate: str, sources: Sequence[str]) -> bool:
        """Does what ``sources`` say support ``candidate``? (validation after NLI)"""
        ...

    def judge_conflict(self, older: str, newer: str) -> ConflictJudgement:
        """Do two knowledge texts contradict, and if so supersede, merge or coexist?"""
        ...

    def reconsolidate(self, memory: str, episode: str) -> str | None:
        """The memory rewritten to agree with a newer episode that contradicts it, or None
        when no update is needed."""
        ...

    def merge_texts(self, texts: Sequence[str]) -> str:
        """One text that keeps everything ``texts`` (near-duplicates) say."""
        ...

    def judge_outcome(self, procedure: str, session: str) -> Outcome:
        """Did the session that used ``procedure`` succeed with it?"""
        ...
