"""Neighbour terms: a turn is also found by the words of the turns around it (会話の文脈の語).

A reply often lacks the words of what it answers: "They were stoked!" answers "How did the
kids like the dinosaur exhibit?", and a question about the kids and the exhibit finds the
question, not the reply. So recall reads, around its best :data:`SEEDS` lexical matches,
the turns recorded just before and after them in their session (at most :data:`TURNS` on
each side, none more than :data:`SPAN` away, as
:func:`~kioku.core.recall.conversation_neighbours` finds them) and scores those turns and
the matches again (:func:`neighbour_bm25`): BM25 over the turn's own terms with its
neighbours' terms lent at :data:`WEIGHT`. The best :data:`VECTOR_SEEDS` vector matches are
scored so too (a turn found by the embedder's features alone borrows the words around it),
but not the turns around them. The turns around all the seeds are read in one store call
(:meth:`~kioku.ports.store.Store.session_windows`), however many sessions they are in.

Only the lexical match changes: what qualifies a memory (its own coverage of the query) does
not, so a turn found by its neighbours' words alone is never injected for an off-topic
prompt. Recall does this when conversation context is on (``context_weight`` > 0).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final

from kioku.core.recall import term_weight
from kioku.ports.store import MemoryFilter, ScoringFields, Store

__all__ = ["SEEDS", "SPAN", "TURNS", "VECTOR_SEEDS", "WEIGHT", "neighbour_bm25", "widen"]

#: How many of the best lexical matches have the turns around them scored again, and how
#: many of the best vector matches borrow the words of the turns around them (a turn that
#: resembles the query only by the embedder's features rarely holds its words to lend).
SEEDS: Final = 15
VECTOR_SEEDS: Final = 10
#: Turns on each side whose terms a turn borrows, and how far apart in time they may be.
TURNS: Final = 2
SPAN: Final = timedelta(hours=1)
#: What a neighbour's holding a query term counts for, against 1 for the turn's own.
WEIGHT: Final = 0.5
#: Most turns read around each seed (a span of a session around several seeds: as many
#: times as many).
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
    size = {key: len(value) for key, value in terms.items()}
    length = {
        key: size.get(key, 0) + sum(size.get(n, 0) for n in around)
        for key, around in neighbours.items()
    }
    mean = math.fsum(length.values()) / len(length)
    # The query terms each memory holds (a long prompt has dozens of terms, a memory few),
    # summed in the query's order whatever the memory holds.
    place = {term: i for i, term in enumerate(wanted)}
    asked = frozenset(wanted)
    held = {key: value & asked for key, value in terms.items()}
    scores: dict[str, float] = {}
    for key, around in neighbours.items():
        own = held.get(key, empty)
        lent: dict[str, int] = {}
        for n in around:
            for term in held.get(n, empty):
                lent[term] = lent.get(term, 0) + 1
        if not own and not lent:
            scores[key] = 0.0  # holds none of the query, itself or around it
            continue
        norm = 1.0 - _B + (_B * length[key] / mean if mean > 0 else 0.0)
        total = 0.0
        for term in sorted(own | lent.keys(), key=place.__getitem__):
            count = float(term in own) + weight * lent.get(term, 0)
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


def _best(scores: Mapping[str, float], count: int) -> list[str]:
    """The ``count`` keys of highest score (ties: the smaller key first)."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [key for key, _ in ranked[:count]]


def _windows(seeds: Sequence[tuple[datetime, timedelta]]) -> list[tuple[datetime, datetime, int]]:
    """The spans of one session to read around seeds ``(made at, reach)``, with how many
    seeds each holds: ``reach`` on each side of each seed, seeds closer than that sharing
    one span."""
    spans: list[tuple[datetime, datetime, int]] = []
    for at, reach in sorted(seeds):
        start, end = at - reach, at + reach + timedelta(microseconds=1)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]), spans[-1][2] + 1)
        else:
            spans.append((start, end, 1))
    return spans


def widen(
    store: Store,
    flt: MemoryFilter,
    query: Sequence[str],
    lexical: Mapping[str, float],
    similar: Mapping[str, float] | None = None,
    limit: int | None = None,
    fields: Mapping[str, ScoringFields] | None = None,
    on_days: Sequence[str] = (),
) -> tuple[dict[str, float], dict[str, frozenset[str]]]:
    """``lexical`` (BM25 scores by memory id) with the seeds, and the turns around the
    lexical ones, scored by :func:`neighbour_bm25` instead, and the indexed terms read for
    that (of those and of the turns around them). The seeds: the best :data:`SEEDS` of
    ``lexical`` and the best :data:`VECTOR_SEEDS` of ``similar`` (cosine similarities by
    memory id), and the memories ``on_days`` (made on a day the query names), which join the
    candidates when they hold a query term, themselves or around them. Other matches keep
    their scores. A turn around the lexical seeds that was no candidate joins when it holds
    a query term, itself or around it, and scores at least as high as the last of
    ``lexical`` when the lexical search stopped at ``limit`` candidates. Reads the seeds'
    sessions within ``flt`` (the recall's scope) around the seeds, all in one store call;
    ``fields``: the seeds' scoring fields if read already."""
    spreading = _best(lexical, SEEDS)
    seeds = list(dict.fromkeys([*spreading, *_best(similar or {}, VECTOR_SEEDS), *on_days]))
    # A seed whose neighbours are scored too needs theirs read: twice the span.
    reach = {key: 2 * SPAN if key in spreading else SPAN for key in seeds}
    if not seeds or not query:
        return dict(lexical), {}
    given = fields or {}
    read = [given[key] for key in seeds if key in given]
    read += store.scoring_fields([key for key in seeds if key not in given])
    by_session: dict[str, list[str]] = defaultdict(list)
    created = {}
    for f in read:
        created[f.id] = f.created
        if f.session_id is not None:
            by_session[f.session_id].append(f.id)
    sessions = sorted(by_session)
    spans = {
        session: _windows([(created[key], reach[key]) for key in by_session[session]])
        for session in sessions
    }
    asked = [(session, start, end) for session in sessions for start, end, _ in spans[session]]
    # Seeds close together in a long session share a span: it may hold their turns each.
    most = max((count for found in spans.values() for _, _, count in found), default=1)
    windows = store.session_windows(replace(flt, limit=_WINDOW_ROWS * most, offset=0), asked)
    rows: dict[str, set[tuple[datetime, str]]] = defaultdict(set)
    for (session, _, _), found in zip(asked, windows, strict=True):
        rows[session].update((at, key) for key, at in found)
    neighbours: dict[str, tuple[str, ...]] = {}
    for session in sessions:
        keys = by_session[session]
        turns = sorted(rows[session])
        when = {key: at for at, key in turns}
        beside = {seed: _beside(turns, when.get(seed, created[seed])) for seed in keys}
        around = {key for seed in keys if seed in spreading for key in beside[seed]}
        for key in sorted(around | set(keys)):
            neighbours[key] = beside[key] if key in beside else _beside(turns, when[key])
    if not neighbours:
        return dict(lexical), {}
    held = store.indexed_terms(
        sorted(set(neighbours) | {n for around in neighbours.values() for n in around})
    )
    memories, documents = store.term_documents(query)
    idf = {term: term_weight(count, memories) for term, count in documents.items()}
    rescored = neighbour_bm25(query, held, neighbours, idf)
    bar = min(lexical.values()) if limit is not None and len(lexical) >= limit else 0.0
    candidates = (similar or {}).keys() | set(on_days)
    out = dict(lexical)
    out.update(
        {
            key: score
            for key, score in rescored.items()
            if key in lexical or (score > 0 and (score >= bar or key in candidates))
        }
    )
    return out, held
