"""The lexical entailment check: validation of candidates when no NLI model or LLM is set.

Spec 001 (日次固定化) validates each knowledge candidate against its source episodes before it
is stored. Without a model the check is lexical: entailment is the share of the hypothesis's
content terms the premise contains; contradiction is raised when the premise's sentence that
best matches a sentence of the hypothesis says the opposite (one is negated, the other not) or
gives other numbers for the same terms. The scores are three probabilities that sum to 1.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from kioku.core.consolidation.classify import split_sentences
from kioku.core.consolidation.model import NliScores, Terms

__all__ = ["entailment", "lexical_nli", "negated", "numbers_of"]

_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot)\b|n't\b|n’t\b"
    r"|ない|ません|なかった|(?<![ま必は])ず(?=[にとも、。,\s]|$)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
#: How much of a hypothesis sentence's terms its best premise sentence must share before a
#: difference in polarity or numbers counts as a contradiction (else they speak of other things).
_SAME_TERMS: Final = 0.5


def negated(text: str) -> bool:
    """Whether ``text`` is negated: an odd number of negations (not, never, n't; ない, ません,
    なかった, 〜ず)."""
    return len(_NEGATION.findall(text)) % 2 == 1


def numbers_of(text: str) -> frozenset[str]:
    """The numbers written in ``text`` (full-width digits read as ASCII)."""
    return frozenset(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


def _content(text: str, terms: Terms) -> set[str]:
    return {term for term in terms(text) if term}


def _contradiction(
    premise_sentences: Sequence[tuple[str, set[str]]], sentence: str, wanted: set[str]
) -> float:
    """How strongly the premise sentence that best matches ``sentence`` contradicts it: the
    share of its terms (numbers aside) that the two have in common, when that is at least half
    and one is negated and the other not, or they give other numbers."""
    words = {term for term in wanted if not term.isdigit()} or wanted
    flipped = negated(sentence)
    numbers = numbers_of(sentence)
    best = (0.0, 0.0)  # (share, contradiction); of equally good matches, the one that agrees
    for text, found in premise_sentences:
        share = len(words & found) / len(words)
        if share == 0.0:
            continue
        other = numbers_of(text)
        numbers_differ = bool(numbers and other) and other != numbers
        clash = share >= _SAME_TERMS and (negated(text) != flipped or numbers_differ)
        strength = share if clash else 0.0
        if share > best[0] or (share == best[0] and strength < best[1]):
            best = (share, strength)
    return best[1]


def _judge(premise: str, hypothesis: str, terms: Terms) -> tuple[float, NliScores]:
    """The share of the hypothesis's terms the premise has, and the judgement."""
    wanted = _content(hypothesis, terms)
    if not wanted:
        return 0.0, NliScores(entailment=0.0, contradiction=0.0, neutral=1.0)
    sentences = [(text, _content(text, terms)) for text in split_sentences(premise)]
    found = _content(premise, terms).union(*(terms_ for _, terms_ in sentences))
    covered = len(wanted & found) / len(wanted)
    contradiction = 0.0
    for sentence in split_sentences(hypothesis):
        own = _content(sentence, terms)
        if own:
            contradiction = max(contradiction, _contradiction(sentences, sentence, own))
    contradiction = min(1.0, contradiction)
    entailed = covered * (1.0 - contradiction)
    neutral = max(0.0, 1.0 - entailed - contradiction)
    return covered, NliScores(entailment=entailed, contradiction=contradiction, neutral=neutral)


def lexical_nli(premise: str, hypothesis: str, terms: Terms) -> NliScores:
    """The lexical judgement of ``hypothesis`` given ``premise``.

    Entailment is the share of the hypothesis's distinct content terms found in the premise,
    contradiction the strongest clash of a hypothesis sentence with its best premise sentence
    (entailment then keeps its share of what the contradiction leaves), neutral the rest. A
    hypothesis without content terms is neutral.
    """
    return _judge(premise, hypothesis, terms)[1]


def entailment(sources: Sequence[str], hypothesis: str, terms: Terms) -> NliScores:
    """The judgement of ``hypothesis`` against its best single source (the one that has most
    of its terms, the first of equals) and against all sources joined, whichever entails it
    more (the single source on a tie). A source that contradicts the hypothesis is thus not
    hidden by another one that merely says less."""
    best: tuple[float, NliScores] | None = None
    for source in sources:
        judged = _judge(source, hypothesis, terms)
        if best is None or (judged[0], judged[1].entailment) > (best[0], best[1].entailment):
            best = judged
    if best is None:
        return lexical_nli("", hypothesis, terms)
    if len(sources) > 1:
        joined = lexical_nli("\n".join(sources), hypothesis, terms)
        if joined.entailment > best[1].entailment:
            return joined
    return best[1]
