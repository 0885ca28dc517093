"""記憶のバリデーション (spec 001): every knowledge candidate checked against its sources.

The cascade of the spec: an NLI model first (entailment ≥ 0.6 accepts with confidence 0.9,
contradiction ≥ 0.7 rejects), the LLM for what it leaves open (accepts with 0.7, or rejects).
Without an NLI model the LLM decides alone; without an LLM (the offline default) the lexical
entailment check decides: a candidate is accepted only when its sources state every one of
its content terms, with the same polarity and numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import NliScores, Terms, Verdict

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator, Nli

__all__ = [
    "LEXICAL_CONFIDENCE",
    "LEXICAL_ENTAILMENT",
    "LLM_CONFIDENCE",
    "NLI_CONFIDENCE",
    "NLI_CONTRADICTION",
    "NLI_ENTAILMENT",
    "best_scores",
    "validate",
]

#: Spec 001 カスケードフロー: NLI entailment ≥ 0.6 → accepted with confidence 0.9.
NLI_ENTAILMENT: Final = 0.6
NLI_CONFIDENCE: Final = 0.9
#: Spec 001: NLI contradiction ≥ 0.7 → rejected without asking the LLM.
NLI_CONTRADICTION: Final = 0.7
#: Spec 001: the LLM's acceptance → confidence 0.7.
LLM_CONFIDENCE: Final = 0.7
#: The offline check: every content term of the candidate is in its sources.
LEXICAL_ENTAILMENT: Final = 0.99
#: An item lifted verbatim and checked lexically is as sure as the LLM's acceptance, no more.
LEXICAL_CONFIDENCE: Final = 0.7


def best_scores(nli: Nli, sources: Sequence[str], hypothesis: str) -> NliScores:
    """The judgement against the single source (or all of them joined) that entails most."""
    premises = [*sources, "\n".join(sources)] if len(sources) > 1 else list(sources)
    judged = [nli.classify(premise, hypothesis) for premise in premises if premise.strip()]
    if not judged:
        return NliScores(0.0, 0.0, 1.0)
    return max(judged, key=lambda s: (s.entailment, -s.contradiction))


def validate(
    candidate: str,
    sources: Sequence[str],
    *,
    nli: Nli | None,
    llm: Consolidator | None,
    terms: Terms,
) -> Verdict:
    """Accept or reject ``candidate`` by the cascade, with the confidence it earns."""
    if nli is not None:
        scores = best_scores(nli, sources, candidate)
        if scores.entailment >= NLI_ENTAILMENT:
            return Verdict(
                True, NLI_CONFIDENCE, "nli", f"{nli.name} entailment {scores.entailment:.2f}"
            )
        if scores.contradiction >= NLI_CONTRADICTION:
            return Verdict(
                False,
                None,
                "nli",
                f"{nli.name} contradiction {scores.contradiction:.2f}: the sources say otherwise",
            )
    if llm is not None:
        if llm.review_knowledge(candidate, sources):
            return Verdict(True, LLM_CONFIDENCE, "llm", f"{llm.name} found it supported")
        return Verdict(False, None, "llm", f"{llm.name} found it unsupported by the sources")
    from kioku.core.consolidation.entail import entailment

    scores = entailment(sources, candidate, terms)
    if scores.entailment >= LEXICAL_ENTAILMENT and scores.contradiction < NLI_CONTRADICTION:
        return Verdict(True, LEXICAL_CONFIDENCE, "lexical", "every content term is in the sources")
    return Verdict(
        False,
        None,
        "lexical",
        f"the sources state {scores.entailment:.0%} of its content terms"
        + (" and contradict it" if scores.contradiction >= NLI_CONTRADICTION else ""),
    )
