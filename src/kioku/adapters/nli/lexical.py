"""NLI without a model: the lexical entailment check of the core, as an :class:`Nli` adapter.

Entailment is the share of the hypothesis's content terms the premise contains; contradiction
comes from negation or other numbers in the best-matching sentence (see
:mod:`kioku.core.consolidation.entail`). Terms are the store's own lexical analyzer's
(Japanese and English), so validation reads text the way search does.
"""

from __future__ import annotations

from kioku.core.consolidation.model import NliScores

__all__ = ["LexicalNli"]


class LexicalNli:
    """The :class:`~kioku.ports.consolidation.Nli` port by term overlap; no model, no download."""

    @property
    def name(self) -> str:
        return "lexical"

    def __repr__(self) -> str:
        return "LexicalNli()"

    def classify(self, premise: str, hypothesis: str) -> NliScores:
        from kioku.adapters.text.lexical import index_terms
        from kioku.core.consolidation.entail import lexical_nli

        return lexical_nli(premise, hypothesis, index_terms)
