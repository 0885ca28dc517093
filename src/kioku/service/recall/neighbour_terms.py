"""Neighbour terms: a turn is also found by the words of the turns around it (会話の文脈の語).

A reply often lacks the words of what it answers: "They were stoked!" answers "How did the
kids like the dinosaur exhibit?", and a question about the kids and the exhibit finds the
question, not the reply. So recall reads, around its best lexical matches, the turns
recorded just before and after them in their session (at most :data:`TURNS` on each side,
none more than :data:`SPAN` away, as :func:`~kioku.core.recall.conversation_neighbours`
finds them) and scores those turns and the matches again (:func:`neighbour_bm25`): BM25
over the turn's own terms with its neighbours' terms lent at :data:`WEIGHT`.

Only the lexical match changes: what qualifies a memory (its own coverage of the query) does
not, so a turn found by its neighbours' words alone is never injected for an off-topic
prompt. Recall does this when conversation context is on (``context_weight`` > 0).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final

from kioku.core.recall import term_weight
from kioku.ports.store import MemoryFilter, Order, Store

__all__ = ["SEEDS", "SPAN", "TURNS", "WEIGHT", "neighbour_bm25", "widen"]

#: How many of the best lexical matches have their sessions read.
SEEDS: Final = 10
#: Turns on each side whose terms a turn borrows, and how far apart in time they may be.
TURNS: Final = 2
SPAN: Final = timedelta(hours=1)
#: What a neighbour's holding a query term counts for, against 1 for the turn's own.
WEIGHT: Final = 0.5
#: Most turns of one session read around the seeds.
_WINDOW_ROWS: Final = 1000
#: BM25's usual constants (those of SQLite's FTS5).
_K1: Final = 1.2
_B: Final = 0.75
#: Sorts after every memory id, for bisecting past all memories of one moment.
_LAST: Final = "\U0010ffff"


def neighbour_bm25(
    query: Sequence[str],
    terms: Mapping[str, frozenset[str]],
    neighbours: Mapping[str, Sequence[str]],
    idf: Mapping[str, float],
    weight: float = WEIGHT,
) -> dict[str, float]:
    """BM25 of each key of ``neighbours`` for the ``query`` terms, its neighbours' terms lent.

    A query term counts ``1`` when the memory's own ``terms`` hold it and ``weight`` more for
    each of its ``neighbours`` that holds it; that count saturates as in BM25 (``k1`` 1.2,
    ``b`` 0.75), against the memory's length: its own terms and its neighbours', over the
    mean of that length among the keys. ``idf`` weighs each term (none: 0). Memories missing
    from ``terms`` hold nothing. Scores are 0 or more; a memory holding none of the query,
    itself or around it, scores 0.
    """
    wanted = list(dict.fromkeys(query))
    if not neighbours or not wanted:
        return dict.fromkeys(neighbours, 0.0)
    empty: frozenset[str] = frozenset()
    length = {
        key: len(terms.get(key, empty)) + sum(len(terms.get(n, empty)) for n in around)
        for key, around in neighbours.items()
    }
    mean = math.fsum(length.values()) / len(length)
    # The query terms each memory holds (a long prompt has dozens of terms, a memory few).
    asked = frozenset(wanted)
    held = {key: value & asked for key, value in terms.items()}
    scores: dict[str, float] = {}
    for key, around in neighbours.items():
        norm = 1.0 - _B + (_B * length[key] / mean if mean > 0 else 0.0)
        own = held.get(key, empty)
        lent: Counter[str] = Counter()
        for n in around:
            lent.update(held.get(n, empty))
        total = 0.0
        for term in wanted:
            if term not in own and term not in lent:
                continue  # a count of 0 adds nothing
            count = float(term in own) + weight * lent[term]
            total += idf.get(term, 0.0) * count * (_K1 + 1) / (count + _K1 * norm)
        scores[key] = max(0.0, total)
    return scores


def _beside(turns: Sequence[tuple[datetime, str]], at: datetime) -> tuple[str, ...]:
    """:func:`~kioku.core.recall.conversation_neighbours` of ``at`` among ``turns`` (one
    session's ``(created, id)`` in order), before and after together, by bisection."""
    low = bisect_left(turns, (at - SPAN,))
    start = bisect_left(turns, (at,))
    end = bisect_right(turns, (at, _LAST))
    high = bisect_right(turns, (at + SPAN, _LAST))
    before = [key for _, key in reversed(turns[max(low, start - TURNS) : start])]
    after = [key for _, key in turns[end : min(high, end + TURNS)]]
    return (*before, *after)


def widen(
    store: Store, flt: MemoryFilter, query: Sequence[str], lexical: Mapping[str, float]
) -> dict[str, float]:
    """``lexical`` (BM25 scores by memory id) with the best :data:`SEEDS` matches and the
    turns around them scored by :func:`neighbour_bm25` instead; the turns around them that
    did not match join the candidates. Other matches keep their scores. Reads the seeds'
    sessions within ``flt`` (the recall's scope) around the seeds."""
    seeds = sorted(lexical.items(), key=lambda item: (-item[1], item[0]))[:SEEDS]
    if not seeds or not query:
        return dict(lexical)
    by_session: dict[str, list[str]] = defaultdict(list)
    created = {}
    for f in store.scoring_fields([key for key, _ in seeds]):
        created[f.id] = f.created
        if f.session_id is not None:
            by_session[f.session_id].append(f.id)
    neighbours: dict[str, tuple[str, ...]] = {}
    for session, keys in sorted(by_session.items()):
        times = [created[key] for key in keys]
        # Twice the span: the seeds' neighbours have neighbours of their own.
        rows = store.activity_fields(
            replace(
                flt,
                session_id=session,
                created_after=min(times) - 2 * SPAN,
                created_before=max(times) + 2 * SPAN + timedelta(microseconds=1),
                order=Order.CREATED_ASC,
                limit=_WINDOW_ROWS,
                offset=0,
            )
        )
        turns = sorted((row.created, row.id) for row in rows)
        when = {key: at for at, key in turns}
        around = {key for seed in keys for key in _beside(turns, created[seed])}
        for key in sorted(around | set(keys)):
            at = when[key] if key in when else created.get(key)
            if at is not None:
                neighbours[key] = _beside(turns, at)
    if not neighbours:
        return dict(lexical)
    held = store.indexed_terms(
        sorted(set(neighbours) | {n for around in neighbours.values() for n in around})
    )
    memories, documents = store.term_documents(query)
    idf = {term: term_weight(count, memories) for term, count in documents.items()}
    rescored = neighbour_bm25(query, held, neighbours, idf)
    out = dict(lexical)
    out.update({key: score for key, score in rescored.items() if score > 0 or key in lexical})
    return out
