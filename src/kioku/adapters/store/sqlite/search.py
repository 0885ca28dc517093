"""Lexical search for the SQLite store: an FTS5 index of kioku's own terms (schema version 4).

``memories_fts`` holds one row per memory: its id (unindexed) and ``terms``, the
space-separated output of :func:`~kioku.adapters.text.lexical.index_terms` over the memory's
trigger, content and keywords. SQLite's ``unicode61`` tokenizer only splits those terms again
at spaces and punctuation, so Japanese words segmented by kioku (寿司) stay whole.

The FTS rows do not use the rowids of ``memories`` (``VACUUM`` may renumber those). Each
memory's row sits in a slot derived from a hash of its id, probing a few slots further on the
astronomically rare collision, so replacing or deleting one memory's row reads a handful of
rows instead of scanning the whole index. Every write runs inside the caller's transaction.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final

from kioku.adapters.text.lexical import index_terms
from kioku.errors import StoreError

__all__ = [
    "BACKFILL_BATCH",
    "backfill",
    "consistency_problems",
    "create_index",
    "match_for",
    "put_many",
    "reindex",
    "remove",
    "search",
    "terms_text",
]

_log = logging.getLogger(__name__)

CREATE_FTS: Final = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5("
    'memory_id UNINDEXED, terms, tokenize = "unicode61 remove_diacritics 2")'
)
BACKFILL_BATCH: Final = 500
#: Slots probed after a memory's home slot; a collision needs two 62-bit hashes within it.
_PROBE: Final = 16
_SQLITE_ERROR: Final = 1  # the generic "SQL error" code: a malformed MATCH expression

#: Matches ranked by the FTS index alone, then checked for scope by primary key. Ranking
#: reads only the index; the scope check costs one lookup per ranked row, not per match.
_SEARCH_TOP: Final = (
    "SELECT top.memory_id, top.score FROM ("
    "SELECT memory_id, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH ? ORDER BY score LIMIT ?"
    ") AS top CROSS JOIN memories AS m ON m.id = top.memory_id "
    "WHERE 1 = 1{scope} ORDER BY top.score LIMIT ?"
)
#: Every match checked for scope, for scopes too small for the ranked prefix to fill.
_SEARCH_ALL: Final = (
    "SELECT memories_fts.memory_id, bm25(memories_fts) AS score "
    "FROM memories_fts CROSS JOIN memories AS m ON m.id = memories_fts.memory_id "
    "WHERE memories_fts MATCH ?{scope} ORDER BY score LIMIT ?"
)
#: How many ranked matches the first attempt checks, per result wanted (and at least).
_OVERFETCH: Final = 8
_MIN_DEPTH: Final = 100
_DEEPER: Final = 32


def terms_text(trigger: str, content: str, keywords: Iterable[str]) -> str:
    """The ``terms`` column of one memory."""
    return " ".join(index_terms(trigger + "\n" + content + "\n" + " ".join(keywords)))


def _home_slot(memory_id: str) -> int:
    digest = hashlib.blake2b(memory_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2  # 62 bits: probing never passes 2**63 - 1


def create_index(conn: sqlite3.Connection) -> None:
    """Migration step: the FTS5 table, or a clear error when this SQLite lacks FTS5."""
    try:
        conn.execute(CREATE_FTS)
    except sqlite3.OperationalError as exc:
        if "no such module" not in str(exc).lower():
            raise
        raise StoreError(
            f"this Python's SQLite ({sqlite3.sqlite_version}) was built without FTS5, "
            "which kioku's lexical search needs",
            hint=(
                "use a Python whose sqlite3 module includes FTS5 (python.org and most "
                "distribution builds do); the database was left unchanged"
            ),
        ) from exc


def _keywords(text: object) -> list[str]:
    """Keywords from their JSON column, tolerating values older code may have left."""
    if text is None or text == "":
        return []
    try:
        value = json.loads(str(text))
    except ValueError:
        return [str(text)]
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


def backfill(conn: sqlite3.Connection) -> None:
    """Migration step: index every existing memory, a batch at a time."""
    cursor = conn.execute("SELECT id, trigger, content, keywords FROM memories ORDER BY rowid")
    done = 0
    while batch := cursor.fetchmany(BACKFILL_BATCH):
        put_many(
            conn,
            [
                (str(row[0]), terms_text(str(row[1]), str(row[2]), _keywords(row[3])))
                for row in batch
            ],
        )
        done += len(batch)
        if done % (BACKFILL_BATCH * 20) == 0:
            _log.info("lexical index: %d memories indexed", done)
    cursor.close()
    if done:
        _log.info("lexical index: indexed %d memories", done)


def put_many(conn: sqlite3.Connection, items: Sequence[tuple[str, str]]) -> None:
    """Index each ``(memory_id, terms)``, replacing the memory's previous row if any."""
    for memory_id, terms in items:
        home = _home_slot(memory_id)
        taken: set[int] = set()
        for rowid, owner in conn.execute(
            "SELECT rowid, memory_id FROM memories_fts WHERE rowid BETWEEN ? AND ?",
            (home, home + _PROBE - 1),
        ):
            if owner == memory_id:
                conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
            else:
                taken.add(int(rowid))
        slot = next((s for s in range(home, home + _PROBE) if s not in taken), None)
        if slot is None:  # pragma: no cover - needs 16 colliding 62-bit hashes
            raise StoreError(
                f"the lexical index has no free slot for memory {memory_id!r}",
                hint="give the memory another id",
            )
        conn.execute(
            "INSERT INTO memories_fts (rowid, memory_id, terms) VALUES (?, ?, ?)",
            (slot, memory_id, terms),
        )


def reindex(conn: sqlite3.Connection, memory_id: str) -> None:
    """Index ``memory_id`` again from its current row (after its text changed)."""
    row = conn.execute(
        "SELECT trigger, content, keywords FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    if row is None:
        remove(conn, memory_id)
        return
    put_many(conn, [(memory_id, terms_text(str(row[0]), str(row[1]), _keywords(row[2])))])


def remove(conn: sqlite3.Connection, memory_id: str) -> None:
    home = _home_slot(memory_id)
    conn.execute(
        "DELETE FROM memories_fts WHERE rowid BETWEEN ? AND ? AND memory_id = ?",
        (home, home + _PROBE - 1, memory_id),
    )


#: Most postings BM25 may score for one query. Terms are taken rarest first until their
#: document counts add up to this; the rarest term is always kept. A term found in tens of
#: thousands of memories tells little (its IDF is low) and would cost a second to score.
POSTINGS_BUDGET: Final = 10_000
_MAX_TERMS: Final = 64
_VOCAB: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_vocab "
    "USING fts5vocab(main, memories_fts, 'row')"
)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_for(
    conn: sqlite3.Connection, terms: Sequence[str], budget: int = POSTINGS_BUDGET
) -> str | None:
    """An FTS5 MATCH expression for ``terms`` (any of them), rarest first within ``budget``
    postings; None when no term is indexed. Terms are quoted: nothing becomes FTS5 syntax."""
    unique = list(dict.fromkeys(t for t in terms if t.strip()))[:_MAX_TERMS]
    if not unique:
        return None
    conn.execute(_VOCAB)
    counts: list[tuple[int, str]] = []
    for term in unique:
        row = conn.execute(
            "SELECT doc FROM temp.memories_fts_vocab WHERE term = ?", (term.lower(),)
        ).fetchone()
        if row is not None and int(row[0]) > 0:
            counts.append((int(row[0]), term))
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
    return " OR ".join(_quote(t) for t in chosen)


def search(
    conn: sqlite3.Connection, match: str, scope: str, params: Sequence[object], limit: int
) -> list[tuple[str, float]]:
    """``(id, -bm25)`` of the best matches of ``match`` whose memory meets ``scope``.

    ``scope`` is a fixed SQL fragment (`` AND ...``) over the ``memories`` columns with
    ``params``; ``match`` only ever travels as a parameter. A malformed ``match`` finds
    nothing rather than raising.
    """
    if limit <= 0 or not match.strip():
        return []
    try:
        found = _ranked(conn, match, scope, params, limit)
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) != _SQLITE_ERROR:
            raise
        _log.debug("lexical search: unusable MATCH expression %r (%s)", match, exc)
        return []
    # bm25() is lower for better matches; the port wants higher is better.
    return [(str(row[0]), -float(row[1])) for row in found]


def _ranked(
    conn: sqlite3.Connection, match: str, scope: str, params: Sequence[object], limit: int
) -> list[sqlite3.Row]:
    """The best ``limit`` matches in scope: from the top-ranked matches when they hold
    enough rows of the scope (the usual case), else from every match."""
    depth = max(limit * _OVERFETCH, _MIN_DEPTH)
    matches: int | None = None
    for _ in range(2):
        found = conn.execute(
            _SEARCH_TOP.format(scope=scope), (match, depth, *params, limit)
        ).fetchall()
        if len(found) >= limit:
            return found
        if matches is None:
            matches = int(
                conn.execute(
                    "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?", (match,)
                ).fetchone()[0]
            )
        if matches <= depth:
            return found  # every match was ranked and checked
        depth *= _DEEPER
    return conn.execute(_SEARCH_ALL.format(scope=scope), (match, *params, limit)).fetchall()


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
