"""Lexical search on PostgreSQL (schema version 2): kioku's own terms in ``text[]`` with GIN.

Each memory's terms are those SQLite's FTS table holds (:func:`..sqlite.search.terms_text` over
its trigger, content and keywords), lower-cased, kept in ``memory_terms`` as an array that keeps
repeats (a term's frequency in the memory) and its length (the memory's length for BM25). A
GIN index finds the memories holding any query term (``&&``). The triggers of the schema keep
``term_docs`` and ``lexical_totals`` in step, so the document counts of BM25's IDF and the
average length are index lookups; the ranking is computed in SQL with FTS5's formula and
constants (k1 = 1.2, b = 0.75, an IDF of at least 1e-6), so scores match SQLite's.

Terms are compared exactly, never parsed: nothing in a term can become query syntax. As on
SQLite, terms are taken rarest first until their documents fill a postings budget, and a query
whose rarest term is in more than :data:`..sqlite.search.MAX_TERM_DOCS` memories finds nothing.
When the rarest term alone is in more memories than the budget, only the matches in a window of
``slot`` values (a hash of the memory id, schema version 9) holding about a budget of them are
ranked: an unbiased sample, placed by a hash of the query, so the same query ranks the same
sample. As on SQLite, a sample that leaves fewer than ``limit`` matches in scope is replaced by
a ranking of every match. The IDFs and the average length are always the whole corpus's.

``originals`` (cold storage of the first text of compressed episodes) is a second corpus,
searched the same way without a budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Final, Literal, cast

from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.sqlite.search import (
    MAX_TERM_DOCS,
    POSTINGS_BUDGET,
    scaled_budget_for,
    terms_text,
)
from kioku.records import Record

__all__ = [
    "MEMORY_TERMS",
    "ORIGINALS",
    "Corpus",
    "backfill",
    "documents",
    "index_memories",
    "indexed_terms",
    "known",
    "reindex",
    "remove",
    "search",
]

#: The two corpora, named after their tables (the names are fixed SQL, never input).
Corpus = Literal["memory_terms", "originals"]
MEMORY_TERMS: Final = "memory_terms"
ORIGINALS: Final = "originals"

_MAX_TERMS: Final = 64
_K1: Final = 1.2
_B: Final = 0.75
_MIN_IDF: Final = 1e-6
_BACKFILL_BATCH: Final = 500

#: BM25 of each document of ``{table}`` holding a query term, best first. Each query term
#: finds its documents through the GIN index (``@>``) and scores only them, with its weight
#: ``(k1 + 1) * idf``: ``w * tf / (tf + k1 * (1 - b + b * length / average))``, the constants
#: filled in (``{norm_a}``, ``{norm_b}``); a document's score is the sum of its terms' shares,
#: added in the query's term order (``ORDER BY q.i``), so it is the same float as a sum over
#: every term in that order with the absent ones adding 0. ``{join}`` joins ``memories`` when
#: the ranking is limited to a scope (``{scope}``, a fixed `` AND ...`` over ``m.``),
#: ``{window}`` limits it to the slots sampled. The parameters: the average length, the
#: terms, their weights, the window's ends, the scope's parameters, the limit.
_SEARCH: Final = (
    "SELECT p.memory_id, sum(p.share ORDER BY p.i) AS score FROM ("
    "SELECT d.memory_id, q.i, q.w * d.tf / "
    "(d.tf + {norm_a!r}::float8 + {norm_b!r} / %s::float8 * d.length) AS share "
    "FROM unnest(%s::text[], %s::float8[]) WITH ORDINALITY AS q(term, w, i) "
    "CROSS JOIN LATERAL (SELECT d.memory_id, cardinality(d.terms) AS length, "
    "cardinality(array_positions(d.terms, q.term)) AS tf "
    "FROM {table} AS d{join} WHERE d.terms @> ARRAY[q.term]{window}{scope}) AS d"
    ") AS p GROUP BY p.memory_id ORDER BY score DESC, p.memory_id LIMIT %s"
)
_JOIN: Final = " JOIN memories AS m ON m.id = d.memory_id"
#: The in-scope check of the best matches ranked without a scope.
_IN_SCOPE: Final = "SELECT m.id FROM memories AS m WHERE m.id = ANY(%s::text[]){scope}"
#: How many of the best matches, per result asked, are ranked before the scope is checked.
_SCOPE_SPARE: Final = 4
_WINDOW: Final = " AND d.slot BETWEEN %s AND %s"
#: The range of ``slot`` (a signed 64-bit hash).
_SLOT_LOW: Final = -(1 << 63)
_SLOTS: Final = 1 << 64


def _unique(terms: Sequence[str]) -> list[str]:
    """The query's terms, lower-cased, once each, blank ones left out, at most 64."""
    return list(dict.fromkeys(t.lower() for t in terms if t.strip()))[:_MAX_TERMS]


def index_memories(conn: Conn, items: Sequence[tuple[str, str]]) -> None:
    """Index each ``(memory_id, terms_text)``, replacing the memory's terms if indexed, in one
    statement (so the counting trigger runs once)."""
    if not items:
        return
    conn.execute(
        "INSERT INTO memory_terms (memory_id, terms) "
        "SELECT u.id, string_to_array(u.terms, ' ') FROM unnest(%s::text[], %s::text[]) "
        "AS u(id, terms) ON CONFLICT (memory_id) DO UPDATE SET terms = excluded.terms",
        ([i for i, _ in items], [" ".join(t.lower().split()) for _, t in items]),
    )


def reindex(conn: Conn, memory_ids: Sequence[str]) -> None:
    """Index these memories again from their current rows (after their text changed)."""
    rows = conn.execute(
        "SELECT id, trigger, content, keywords FROM memories WHERE id = ANY(%s::text[])",
        (list(memory_ids),),
    ).fetchall()
    index_memories(conn, [(str(r[0]), _text(r[1], r[2], r[3])) for r in rows])


def _text(trigger: object, content: object, keywords: object) -> str:
    words = cast("list[object]", keywords or [])
    return terms_text(str(trigger), str(content), [str(k) for k in words])


def remove(conn: Conn, memory_ids: Sequence[str]) -> None:
    """Take these memories out of both corpora (before the memories themselves go)."""
    ids = list(memory_ids)
    conn.execute("DELETE FROM memory_terms WHERE memory_id = ANY(%s::text[])", (ids,))
    conn.execute("DELETE FROM originals WHERE memory_id = ANY(%s::text[])", (ids,))


def backfill(conn: Conn) -> None:
    """Migration step: index every memory already in the store, a batch at a time."""
    with conn.cursor(name="kioku_lexical_backfill") as cursor:
        cursor.execute("SELECT id, trigger, content, keywords FROM memories ORDER BY id")
        while batch := cursor.fetchmany(_BACKFILL_BATCH):
            index_memories(conn, [(str(r[0]), _text(r[1], r[2], r[3])) for r in batch])


def _totals(conn: Conn, corpus: Corpus) -> tuple[int, int]:
    row = conn.execute(
        "SELECT docs, tokens FROM lexical_totals WHERE corpus = %s", (corpus,)
    ).fetchone()
    return (0, 0) if row is None else (int(str(row[0])), int(str(row[1])))


def _counts(conn: Conn, corpus: Corpus, terms: Sequence[str]) -> dict[str, int]:
    """Documents of ``corpus`` holding each of ``terms`` (lower-cased), those that have any."""
    return {
        str(term): int(str(docs))
        for term, docs in conn.execute(
            "SELECT term, docs FROM term_docs WHERE corpus = %s AND term = ANY(%s::text[])",
            (corpus, list(terms)),
        )
    }


def documents(conn: Conn, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """How many memories are indexed, and how many hold each of ``terms`` (as given)."""
    wanted = list(dict.fromkeys(t for t in terms if t.strip()))[:_MAX_TERMS]
    memories, _ = _totals(conn, MEMORY_TERMS)
    counts = _counts(conn, MEMORY_TERMS, [t.lower() for t in wanted]) if wanted else {}
    return memories, {term: counts.get(term.lower(), 0) for term in wanted}


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class _Plan(Record):
    terms: list[str]
    idfs: list[float]
    average: float
    #: The slots ranked (both ends included) when the terms' matches exceed the budget.
    window: tuple[int, int] | None = None


def _plan(conn: Conn, corpus: Corpus, terms: Sequence[str], budget: bool) -> _Plan | None:
    """The terms to rank (rarest first within the postings budget when ``budget``), their
    IDFs, the corpus's average length and the window of slots to sample; None when nothing
    can match."""
    unique = _unique(terms)
    if not unique:
        return None
    docs, tokens = _totals(conn, corpus)
    counts = _counts(conn, corpus, unique)
    ranked = sorted((n, term) for term in unique if (n := counts.get(term, 0)) > 0)
    if docs <= 0 or not ranked:
        return None
    chosen, window = ranked, None
    if budget:
        limit = scaled_budget_for(docs, POSTINGS_BUDGET)
        chosen, used = [], 0
        for n, term in ranked:
            if chosen and used + n > limit:
                break
            chosen.append((n, term))
            used += n
        if used > MAX_TERM_DOCS:
            return None
        if used > limit:
            window = _window([t for _, t in chosen], limit, used)
    idfs = [max(_MIN_IDF, math.log((docs - n + 0.5) / (n + 0.5))) for n, _ in chosen]
    return _Plan([t for _, t in chosen], idfs, max(tokens / docs, 1e-9), window)


def _window(terms: Sequence[str], budget: int, matches: int) -> tuple[int, int]:
    """The slots holding about ``budget`` of ``matches`` matches, at a place the terms set."""
    width = _SLOTS * budget // matches
    digest = blake2b("\x1f".join(terms).encode("utf-8"), digest_size=8).digest()
    start = _SLOT_LOW + int.from_bytes(digest, "big") % (_SLOTS - width + 1)
    return start, start + width - 1


def search(
    conn: Conn,
    corpus: Corpus,
    terms: Sequence[str],
    scope: str,
    params: Sequence[object],
    limit: int,
) -> list[tuple[str, float]]:
    """``(memory id, BM25)`` of the best ``limit`` documents of ``corpus`` holding any of
    ``terms`` whose memory meets ``scope`` (a fixed `` AND ...`` over ``m.`` with ``params``).

    The matches are ranked without the scope first, and the best few times ``limit`` of them
    are checked for scope by primary key in ``memories`` (whose row security policy then
    applies too: the term tables have none): the first ``limit`` in scope are the answer when
    there are that many (any better match in scope would be among them). Otherwise, as when
    a sample leaves too few, every match is ranked joined to its memory, within the scope."""
    if limit <= 0:
        return []
    plan = _plan(conn, corpus, terms, budget=corpus == MEMORY_TERMS)
    if plan is None:
        return []
    depth = limit * _SCOPE_SPARE
    best = _ranked(conn, corpus, plan, plan.window, None, (), depth)
    wanted = [memory_id for memory_id, _ in best]
    rows = conn.execute(_IN_SCOPE.format(scope=scope), (wanted, *params), prepare=False)
    inside = {str(row[0]) for row in rows}
    found = [hit for hit in best if hit[0] in inside][:limit]
    if len(found) == limit or (plan.window is None and len(best) < depth):
        return found
    if plan.window is not None and len(best) == depth:  # more of the sample may be in scope
        found = _ranked(conn, corpus, plan, plan.window, scope, params, limit)
        if len(found) == limit:
            return found
    return _ranked(conn, corpus, plan, None, scope, params, limit)


def _ranked(
    conn: Conn,
    corpus: Corpus,
    plan: _Plan,
    window: tuple[int, int] | None,
    scope: str | None,
    params: Sequence[object],
    limit: int,
) -> list[tuple[str, float]]:
    """The best ``limit`` matches of the plan's terms (in ``window`` when given), joined to
    their memories within ``scope``, or unjoined when ``scope`` is None (for a later check)."""
    weights = [(_K1 + 1) * idf for idf in plan.idfs]
    sql = _SEARCH.format(
        norm_a=_K1 * (1 - _B),
        norm_b=_K1 * _B,
        table=corpus,
        join="" if scope is None else _JOIN,
        window="" if window is None else _WINDOW,
        scope=scope or "",
    )
    rows = conn.execute(
        sql,
        (plan.average, plan.terms, weights, *(window or ()), *params, limit),
        prepare=False,
    )
    return [(str(i), float(str(s))) for i, s in rows]


#: A term in at least this many memories is first looked for in a window of slots that holds
#: about _PROBE_MATCHES of them (a range of the ``slot`` index, the term tested on each row),
#: which finds it in scope at once when the scope holds most memories; only where the window
#: finds none is the GIN index asked, whose bitmap of a term's documents costs milliseconds
#: for a common one.
_PROBE_FROM_DOCS: Final = 2048
_PROBE_MATCHES: Final = 64
_KNOWN_IN_WINDOW: Final = (
    "SELECT q.term FROM unnest(%s::text[], %s::int8[], %s::int8[]) AS q(term, low, high) "
    "WHERE EXISTS (SELECT 1 FROM memory_terms AS d JOIN memories AS m ON m.id = d.memory_id "
    "WHERE d.slot BETWEEN q.low AND q.high AND q.term = ANY(d.terms){scope}) LIMIT %s"
)
_KNOWN: Final = (
    "SELECT q.term FROM unnest(%s::text[]) AS q(term) WHERE EXISTS ("
    "SELECT 1 FROM memory_terms AS d JOIN memories AS m ON m.id = d.memory_id "
    "WHERE d.terms @> ARRAY[q.term]{scope}) LIMIT %s"
)


def known(
    conn: Conn,
    terms: Sequence[str],
    scope: str,
    params: Sequence[object],
    limit: int | None = None,
) -> frozenset[str]:
    """Which of ``terms`` (lower-cased) a memory within ``scope`` is indexed under, stopping
    once ``limit`` are found; a term no memory holds is answered by ``term_docs`` alone.
    Common terms are looked for in a window of slots first; then the rest, rarest first (the
    cheapest bitmaps), in one statement that stops at the ``limit``-th found."""
    unique = _unique(terms)
    if not unique or limit == 0:
        return frozenset()
    counts = _counts(conn, MEMORY_TERMS, unique)
    found: set[str] = set()
    common = [term for term in counts if counts[term] >= _PROBE_FROM_DOCS]
    if common:
        # Each window holds about _PROBE_MATCHES of the term's documents (all: every slot).
        windows = [_window([t], min(_PROBE_MATCHES, counts[t]), counts[t]) for t in common]
        rows = conn.execute(
            _KNOWN_IN_WINDOW.format(scope=scope),
            (
                common,
                [low for low, _ in windows],
                [high for _, high in windows],
                *params,
                limit,
            ),
            prepare=False,
        )
        found.update(str(row[0]) for row in rows)
    left = None if limit is None else limit - len(found)
    rest = sorted((t for t in counts if t not in found), key=lambda t: (counts[t], t))
    if rest and left != 0:
        rows = conn.execute(_KNOWN.format(scope=scope), (rest, *params, left), prepare=False)
        found.update(str(row[0]) for row in rows)
    return frozenset(found)


def indexed_terms(conn: Conn, memory_ids: Sequence[str]) -> dict[str, frozenset[str]]:
    """The terms each of ``memory_ids`` is indexed under (those indexed only)."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT memory_id, terms FROM memory_terms WHERE memory_id = ANY(%s::text[])", (ids,)
    )
    return {
        str(i): frozenset(str(t) for t in cast("list[object]", terms or [])) for i, terms in rows
    }
