"""Lexical search for the SQLite store: an FTS5 index of kioku's own terms (schema version 4).

``memories_fts`` holds one row per memory: its id (unindexed) and ``terms``, the
space-separated output of :func:`~kioku.adapters.text.lexical.index_terms` over the memory's
trigger, content and keywords. SQLite's ``unicode61`` tokenizer only splits those terms again
at spaces and punctuation, so Japanese words segmented by kioku (寿司) stay whole.

The FTS rows sit at slots derived from a hash of each memory's id, and every write runs
inside the caller's transaction (:mod:`.fts_rows`, whose writers this module re-exports).

Because slots are hashes, a range of rowids is a uniform sample of the memories: the search
of a large store uses one to estimate a common term's memories cheaply and to rank a sample of
its matches (:func:`plan`). In a store of at most :data:`POSTINGS_BUDGET` memories neither can
happen, and the budget shrinks, and very common terms are left out, only in far larger stores,
so a small store ranks every match of its rarest terms within the full budget.

FTS5 ranks a match at about 4 µs a row and counts a term's memories by reading its whole
posting list. A process that searches more than twice keeps a copy of the index instead, in
stores of up to :data:`~.lexical_cache.MAX_MEMORIES` memories (:mod:`.lexical_cache`), and
plans and ranks from it with the same counts, the same BM25 scores to the last bit and the
same order; every write here logs the slots it changed so the copy follows them.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kioku.adapters.store.sqlite import lexical_cache
from kioku.adapters.store.sqlite.fts_rows import (
    BACKFILL_BATCH,
    PROBE,
    backfill,
    create_index,
    home_slot,
    put_many,
    reindex,
    remove,
    terms_text,
)
from kioku.adapters.store.sqlite.lexical_tokens import is_safe
from kioku.logs import LazyLogger
from kioku.records import Record

if TYPE_CHECKING:
    from kioku.adapters.store.sqlite.lexical_snapshot import Snapshot

__all__ = [
    "BACKFILL_BATCH",
    "FULL_BUDGET_MEMORIES",
    "MAX_TERM_DOCS",
    "POSTINGS_BUDGET",
    "PROBE_FROM_MEMORIES",
    "LexicalQuery",
    "backfill",
    "consistency_problems",
    "create_index",
    "documents",
    "indexed_terms",
    "known",
    "match_for",
    "plan",
    "put_many",
    "reindex",
    "remove",
    "scaled_budget",
    "scaled_budget_for",
    "search",
    "terms_text",
]

_log = LazyLogger(__name__)

_SQLITE_ERROR: Final = 1  # the generic "SQL error" code: a malformed MATCH expression

#: Matches ranked by the FTS index alone, then checked for scope by primary key. Ranking
#: reads only the index; the scope check costs one lookup per ranked row, not per match.
_SEARCH_TOP: Final = (
    "SELECT top.memory_id, top.score FROM ("
    "SELECT memory_id, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH ?{window} ORDER BY score LIMIT ?"
    ") AS top CROSS JOIN memories AS m ON m.id = top.memory_id "
    "WHERE 1 = 1{scope} ORDER BY top.score LIMIT ?"
)
#: Every match checked for scope, for scopes too small for the ranked prefix to fill.
_SEARCH_ALL: Final = (
    "SELECT memories_fts.memory_id, bm25(memories_fts) AS score "
    "FROM memories_fts CROSS JOIN memories AS m ON m.id = memories_fts.memory_id "
    "WHERE memories_fts MATCH ?{window}{scope} ORDER BY score LIMIT ?"
)
_COUNT: Final = "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?{window}"
_WINDOW: Final = " AND memories_fts.rowid BETWEEN ? AND ?"
#: How many ranked matches the first attempt checks, per result wanted (and at least).
_OVERFETCH: Final = 8
_MIN_DEPTH: Final = 100
_DEEPER: Final = 32
#: Rows checked for scope beyond what the share of the scope so far says is needed.
_SCOPE_SLACK: Final = 8


#: Most postings BM25 may score for one query. Terms are taken rarest first until their
#: document counts add up to this; the rarest term is always kept (up to MAX_TERM_DOCS). A term
#: found in tens of thousands of memories tells little (its IDF is low) and would cost a
#: second to score: past this budget, only a sample of its matches is ranked.
POSTINGS_BUDGET: Final = 10_000
#: Ranking costs about 4 µs a posting, whatever the store's size, and a larger store gives
#: each term more postings: past this many memories the budget shrinks with the square root
#: of the store (8,276 postings at 36,500; 2,000 at a million), never below _MIN_BUDGET.
FULL_BUDGET_MEMORIES: Final = 25_000
_MIN_BUDGET: Final = 2_000
#: bm25() reads the whole posting list of every term it ranks, to count the term's documents
#: for its IDF, before it ranks a single row (about 0.1-0.3 µs a posting): a term in more
#: memories than this (5% of a million) is left out, sample or not.
MAX_TERM_DOCS: Final = 50_000
_MAX_TERMS: Final = 64
_VOCAB: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_vocab "
    "USING fts5vocab(main, memories_fts, 'row')"
)
#: The slots (rowids) of the lexical index: 62-bit hashes plus the probing distance.
_SLOTS: Final = (1 << 62) + PROBE
#: Counting a term's matches among 1/2**_PROBE_SHIFT of the slots estimates its documents, in
#: stores of more than PROBE_FROM_MEMORIES memories; in smaller ones the vocabulary's exact
#: count costs at most a few milliseconds, less than probing every term of a long query.
_PROBE_SHIFT: Final = 8
PROBE_FROM_MEMORIES: Final = 50_000
#: Matches in the probe that make the estimate trustworthy (±18%) and the term surely common.
_PROBE_MIN: Final = 32
#: Terms FTS5 indexes as one token exactly as written (letters and digits only), for which
#: a MATCH count and the vocabulary's count agree.
_ONE_TOKEN: Final = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LexicalQuery(Record):
    """What :func:`search` runs: a MATCH expression and, for a common term in a large store,
    the window of rowids (an unbiased sample of the matches) that is ranked. With ``terms``,
    :func:`search` may rank from the process's copy of the index (:mod:`.lexical_cache`),
    with the same scores and order."""

    match: str
    window: tuple[int, int] | None = None
    #: The terms of ``match``, in its order (empty: a MATCH expression made elsewhere).
    terms: tuple[str, ...] = ()

    def unwindowed(self) -> LexicalQuery:
        """The same query over every match."""
        return LexicalQuery(self.match, None, self.terms)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _documents(
    conn: sqlite3.Connection,
    term: str,
    budget: int,
    probe: bool = True,
    snapshot: Snapshot | None = None,
) -> int:
    """How many memories hold ``term``: counted by the vocabulary, whose count reads the
    term's whole posting list, unless a ``probe`` of 1/256 of the slots already finds it in
    clearly more than ``budget`` memories; then the probe's estimate. A ``snapshot`` of the
    index gives the same counts without reading posting lists."""
    if probe and _ONE_TOKEN.fullmatch(term):
        if snapshot is not None and is_safe(term):
            probed = snapshot.documents_within(term, 0, (_SLOTS >> _PROBE_SHIFT) - 1)
        else:
            probed = int(
                conn.execute(
                    _COUNT.format(window=_WINDOW),
                    (_quote(term), 0, (_SLOTS >> _PROBE_SHIFT) - 1),
                ).fetchone()[0]
            )
        estimate = probed << _PROBE_SHIFT
        if probed >= _PROBE_MIN and estimate > 2 * budget:
            return estimate
    if snapshot is not None:
        return snapshot.documents(term.lower())
    row = conn.execute(
        "SELECT doc FROM temp.memories_fts_vocab WHERE term = ?", (term.lower(),)
    ).fetchone()
    return 0 if row is None else int(row[0])


def _memories(conn: sqlite3.Connection) -> int:
    """About how many memories the store holds: its largest rowid (one index lookup)."""
    return int(conn.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0)


def scaled_budget(
    conn: sqlite3.Connection, budget: int = POSTINGS_BUDGET, memories: int | None = None
) -> int:
    """``budget`` for this store: whole up to FULL_BUDGET_MEMORIES memories, then shrinking
    with the square root of their number."""
    return scaled_budget_for(_memories(conn) if memories is None else memories, budget)


def scaled_budget_for(memories: int, budget: int = POSTINGS_BUDGET) -> int:
    """:func:`scaled_budget` for a store of ``memories`` memories."""
    if memories <= FULL_BUDGET_MEMORIES:
        return budget
    return max(min(budget, _MIN_BUDGET), int(budget * math.sqrt(FULL_BUDGET_MEMORIES / memories)))


def plan(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    budget: int = POSTINGS_BUDGET,
    counted: tuple[int, Mapping[str, int]] | None = None,
) -> LexicalQuery | None:
    """The search for ``terms`` (any of them): rarest first within the store's share of
    ``budget`` postings (:func:`scaled_budget`), a sample of the rarest alone when it exceeds
    that, nothing when no term is indexed or the rarest is in more than MAX_TERM_DOCS
    memories. Terms are quoted: nothing becomes FTS5 syntax. ``counted`` is what
    :func:`documents` returned for the same terms in the same state, to count them once."""
    unique = list(dict.fromkeys(t for t in terms if t.strip()))[:_MAX_TERMS]
    if not unique:
        return None
    if counted is not None and budget == POSTINGS_BUDGET:
        memories, known = counted
        budget = scaled_budget(conn, budget, memories)
        counts = [(docs, term) for term in unique if (docs := known.get(term, 0)) > 0]
    else:
        memories = _memories(conn)
        budget = scaled_budget(conn, budget, memories)
        probe = memories > PROBE_FROM_MEMORIES
        snapshot = lexical_cache.current(conn, memories, build_after=None)
        if snapshot is None:
            conn.execute(_VOCAB)
        counts = [
            (docs, term)
            for term in unique
            if (docs := _documents(conn, term, budget, probe, snapshot)) > 0
        ]
    if not counts:
        return None
    counts.sort()
    chosen: list[str] = []
    used = 0
    for docs, term in counts:
        if chosen and used + docs > budget:
            break
        chosen.append(term)
        used += docs
    if used > MAX_TERM_DOCS:
        _log.debug("lexical search: every term is in more than %d memories", MAX_TERM_DOCS)
        return None
    match = " OR ".join(_quote(t) for t in chosen)
    if used <= budget:
        return LexicalQuery(match, terms=tuple(chosen))
    # A window of slots holding about `budget` of the matches, placed by the query's hash:
    # the same query ranks the same sample, different queries sample different memories.
    width = _SLOTS * budget // used
    start = home_slot(match) % (_SLOTS - width + 1)
    return LexicalQuery(match, (start, start + width - 1), tuple(chosen))


def documents(conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """About how many memories the store holds (its largest rowid) and how many hold each
    of ``terms`` (the first of them, as :func:`plan` takes), counted as :func:`plan` counts."""
    unique = list(dict.fromkeys(t for t in terms if t.strip()))[:_MAX_TERMS]
    memories = _memories(conn)
    if not unique:
        return memories, {}
    budget = scaled_budget(conn, POSTINGS_BUDGET, memories)
    probe = memories > PROBE_FROM_MEMORIES
    snapshot = lexical_cache.current(conn, memories, build_after=None)
    if snapshot is None:
        conn.execute(_VOCAB)
    return memories, {term: _documents(conn, term, budget, probe, snapshot) for term in unique}


_KNOWN: Final = (
    "SELECT 1 FROM memories_fts CROSS JOIN memories AS m ON m.id = memories_fts.memory_id "
    "WHERE memories_fts MATCH ?{scope} LIMIT 1"
)


def known(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    scope: str,
    params: Sequence[object],
    limit: int | None = None,
) -> frozenset[str]:
    """Which of ``terms`` a memory within ``scope`` (a condition on ``memories``) is indexed
    under, stopping once ``limit`` are found: one MATCH a term, stopped at its first match in
    scope. (The vocabulary is not asked first: its row for a term counts the term's whole
    posting list, about a millisecond for a common term in a million memories, while a MATCH
    that finds nothing costs as little.)"""
    unique = list(dict.fromkeys(t.lower() for t in terms if t.strip()))[:_MAX_TERMS]
    sql = _KNOWN.format(scope=scope)
    found: set[str] = set()
    for term in unique:
        if limit is not None and len(found) >= limit:
            break
        if conn.execute(sql, (_quote(term), *params)).fetchone() is not None:
            found.add(term)
    return frozenset(found)


#: Memories whose slots one query of :func:`indexed_terms` reads.
_TERMS_CHUNK: Final = 200


def indexed_terms(conn: sqlite3.Connection, memory_ids: Iterable[str]) -> dict[str, frozenset[str]]:
    """The terms each memory is indexed under, read from its slots (a few rows each), for
    many memories in one query; from the process's copy of the index when it has one."""
    found: dict[str, frozenset[str]] = {}
    wanted = list(dict.fromkeys(memory_ids))
    snapshot = lexical_cache.current(conn, _memories(conn), build_after=None) if wanted else None
    if snapshot is not None:
        indexed = snapshot.rows
        for memory_id in wanted:
            home = home_slot(memory_id)
            for slot in range(home, home + PROBE):
                row = indexed.get(slot)
                if row is not None and row[0] == memory_id:
                    found[memory_id] = frozenset(row[1].lower().split())
                    break  # a memory has one row
        return found
    for start in range(0, len(wanted), _TERMS_CHUNK):
        chunk = wanted[start : start + _TERMS_CHUNK]
        params: list[object] = []
        for memory_id in chunk:
            home = home_slot(memory_id)
            params += [memory_id, home, home + PROBE - 1]
        rows = ", ".join(["(?, ?, ?)"] * len(chunk))
        sql = (
            f"WITH wanted (id, low, high) AS (VALUES {rows}) "
            "SELECT f.memory_id, f.terms FROM wanted CROSS JOIN memories_fts AS f "
            "ON f.rowid BETWEEN wanted.low AND wanted.high AND f.memory_id = wanted.id"
        )
        for memory_id, terms in conn.execute(sql, params):
            found[str(memory_id)] = frozenset(str(terms).lower().split())
    return found


def match_for(
    conn: sqlite3.Connection, terms: Sequence[str], budget: int = POSTINGS_BUDGET
) -> str | None:
    """The MATCH expression of :func:`plan` (None when it finds nothing to search)."""
    query = plan(conn, terms, budget)
    return None if query is None else query.match


def search(
    conn: sqlite3.Connection,
    query: LexicalQuery | str,
    scope: str,
    params: Sequence[object],
    limit: int,
) -> list[tuple[str, float]]:
    """``(id, -bm25)`` of the best matches of ``query`` whose memory meets ``scope``.

    ``scope`` is a fixed SQL fragment (`` AND ...``) over the ``memories`` columns with
    ``params``; the MATCH expression only ever travels as a parameter. A malformed one finds
    nothing rather than raising. A sample that holds fewer than ``limit`` matches in the
    scope (a small scope in a large store) gives way to ranking every match. A query of
    :func:`plan` whose terms are each one token is ranked from the process's copy of the
    index when there is one, with the same result.
    """
    if isinstance(query, str):
        query = LexicalQuery(query)
    if limit <= 0 or not query.match.strip():
        return []
    if query.terms and all(is_safe(term) for term in query.terms):
        snapshot = lexical_cache.current(conn, _memories(conn), _FTS5_SEARCHES)
        if snapshot is not None:
            hits = _from_snapshot(conn, snapshot, query, scope, params, limit)
            if query.window is not None and len(hits) < limit:
                hits = _from_snapshot(conn, snapshot, query.unwindowed(), scope, params, limit)
            return hits
    try:
        found = _ranked(conn, query, scope, params, limit)
        if query.window is not None and len(found) < limit:
            found = _ranked(conn, query.unwindowed(), scope, params, limit)
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) != _SQLITE_ERROR:
            raise
        _log.debug("lexical search: unusable MATCH expression %r (%s)", query.match, exc)
        return []
    # bm25() is lower for better matches; the port wants higher is better.
    return [(str(row[0]), -float(row[1])) for row in found]


#: Searches a process makes with FTS5 alone before it copies the index (:mod:`.lexical_cache`).
_FTS5_SEARCHES: Final = 2
#: The memories among some ids that meet a scope.
_IN_SCOPE: Final = (
    "SELECT m.id FROM json_each(?) AS wanted CROSS JOIN memories AS m "
    "ON m.id = wanted.value WHERE 1 = 1{scope}"
)


def _from_snapshot(
    conn: sqlite3.Connection,
    snapshot: Snapshot,
    query: LexicalQuery,
    scope: str,
    params: Sequence[object],
    limit: int,
) -> list[tuple[str, float]]:
    """What :func:`_ranked` finds, ranked from ``snapshot``: the best matches in order,
    checked for scope a batch at a time (one lookup a row, so each batch is about as large
    as the share of the scope among the rows checked so far says is needed)."""
    slots, scores = snapshot.rank(query.terms, query.window)
    sql = _IN_SCOPE.format(scope=scope)
    found: list[tuple[str, float]] = []
    checked = 0
    while checked < slots.size and len(found) < limit:
        missing = limit - len(found)
        if not checked:
            size = limit + _SCOPE_SLACK
        elif found:
            size = math.ceil(missing * checked / len(found) * 1.25) + _SCOPE_SLACK
        else:
            size = checked * _DEEPER
        batch = [
            (snapshot.memory_id(slot), score)
            for slot, score in zip(
                slots[checked : checked + size].tolist(),
                scores[checked : checked + size].tolist(),
                strict=True,
            )
        ]
        checked += size
        ids = json.dumps([memory_id for memory_id, _ in batch])
        kept = {str(row[0]) for row in conn.execute(sql, (ids, *params))}
        found += [item for item in batch if item[0] in kept]
    return found[:limit]


def _ranked(
    conn: sqlite3.Connection, query: LexicalQuery, scope: str, params: Sequence[object], limit: int
) -> list[sqlite3.Row]:
    """The best ``limit`` matches in scope: from the top-ranked matches when they hold
    enough rows of the scope (the usual case), else from every match."""
    window = _WINDOW if query.window is not None else ""
    matched = (query.match, *(query.window or ()))
    depth = max(limit * _OVERFETCH, _MIN_DEPTH)
    matches: int | None = None
    for _ in range(2):
        found = conn.execute(
            _SEARCH_TOP.format(window=window, scope=scope), (*matched, depth, *params, limit)
        ).fetchall()
        if len(found) >= limit:
            return found
        if matches is None:
            matches = int(conn.execute(_COUNT.format(window=window), matched).fetchone()[0])
        if matches <= depth:
            return found  # every match was ranked and checked
        depth *= _DEEPER
    return conn.execute(
        _SEARCH_ALL.format(window=window, scope=scope), (*matched, *params, limit)
    ).fetchall()


def consistency_problems(conn: sqlite3.Connection) -> tuple[list[str], dict[str, object]]:
    """Whether every memory has exactly one row in the lexical index (by counting both)."""
    memories = int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    indexed = int(conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0])
    details: dict[str, object] = {"lexical_index_rows": indexed, "memories": memories}
    if memories == indexed:
        return [], details
    return [
        f"the lexical index has {indexed} rows for {memories} memories, so keyword search "
        "misses or repeats some; fix: restore from backup (a future `kioku doctor --repair` "
        "will rebuild the index)"
    ], details
