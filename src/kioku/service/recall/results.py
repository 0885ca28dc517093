"""What a recall returns: each recalled memory with every component of its score, and the
``<memories>`` block to inject (注入形式)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kioku.core.inject import Injected, format_memories
from kioku.core.model import Memory
from kioku.records import Record

__all__ = ["RecallResult", "Recalled", "memories_block"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Recalled(Record):
    """One recalled memory and every component of its score.

    ``relevance`` is the query match (``similarity`` and ``lexical`` weighted) plus ``context``,
    at most 1; ``relevance × recency × category_factor × coverage_factor =
    adjusted_relevance``, where ``recency`` is the time factor (how new the memory is, and
    whether it was made in a period the query names, see :mod:`.periods`) and
    ``coverage_factor`` favours a memory holding the query's words itself (see
    :data:`~.scoring.COVERAGE_FACTOR`; 1 with conversation context off);
    ``retention × adjusted_relevance × recall_weight = base``; ``base + resonance_term = final``.
    ``coverage`` is how much of the query the memory matches (what qualifies it, against the
    floor ``retrieval.min_relevance``); a memory below the floor comes only as a companion:
    ``via`` "context" (a turn next to a qualified one) or "relation".
    """

    memory: Memory
    archived: bool
    similarity: float
    lexical: float
    relevance: float
    recency: float
    category_factor: float
    adjusted_relevance: float
    retention: float
    recall_weight: float
    base: float
    resonance: float
    resonance_term: float
    final: float
    via: str | None = None
    #: Relevance lent by strong matches recorded just before or after this memory in its
    #: session (a part of ``relevance``).
    context: float = 0.0
    #: The share of the query the memory matches, in [0, 1]: what qualifies it.
    coverage: float = 0.0
    #: ``1 + COVERAGE_FACTOR × coverage`` with conversation context on, else 1 (a part of
    #: ``adjusted_relevance``).
    coverage_factor: float = 1.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RecallResult(Record):
    """What a recall returns: the memories chosen and the block to inject."""

    query: str
    items: tuple[Recalled, ...]
    block: str
    #: The relevance floor the recall qualified memories with (``retrieval.min_relevance``).
    floor: float = 0.0
    #: The names the prompt mentions when no memory knows any of them: why nothing was
    #: recalled (``retrieval.require_known_names``); empty otherwise.
    unknown_names: tuple[str, ...] = ()
    #: The qualified memories the mood limiter ranked below the selection (``[mood]``):
    #: negative, of high intensity, past their share of the owner's last memories primed.
    limited: tuple[str, ...] = ()
    #: Whether the mood shift applied: it was on and the session's mood was negative, so
    #: resonance favoured positive memories instead of negative ones.
    mood_shifted: bool = False


def memories_block(items: Sequence[Recalled], budget_chars: int) -> str:
    """The ``<memories>`` block of recalled memories within ``budget_chars`` (注入形式)."""
    return format_memories(
        [
            Injected(
                i.memory.created,
                i.memory.current_level,
                i.archived,
                i.memory.trigger,
                i.memory.content,
            )
            for i in items
        ],
        budget_chars,
    )
