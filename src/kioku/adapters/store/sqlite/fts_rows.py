"""The rows of the SQLite store's FTS5 index of kioku's own terms: the table, and writing,
replacing and removing one memory's row (the search over them is :mod:`.search`).

``memories_fts`` holds one row per memory: its id (unindexed) and ``terms``, the
space-separated output of :func:`~kioku.adapters.text.lexical.index_terms` over the memory's
trigger, content and keywords. The rows do not use the rowids of ``memories`` (``VACUUM`` may
renumber those). Each memory's row sits in a slot derived from a hash of its id, probing a few
slots further on the astronomically rare collision, so replacing or deleting one memory's row
reads a handful of rows instead of scanning the whole index. Every write runs inside the
caller's transaction and logs the slots it changed, so a process's copy of the index
(:mod:`.lexical_cache`) follows them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final

from kioku.adapters.store.sqlite import lexical_cache
from kioku.adapters.text.lexical import index_terms
from kioku.digests import blake2b
from kioku.errors import StoreError
from kioku.logs import LazyLogger

__all__ = [
    "BACKFILL_BATCH",
    "CREATE_FTS",
    "PROBE",
    "backfill",
    "create_index",
    "home_slot",
    "put_many",
    "reindex",
    "remove",
    "terms_text",
]

_log = LazyLogger(__name__)

CREATE_FTS: Final = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5("
    'memory_id UNINDEXED, terms, tokenize = "unicode61 remove_diacritics 2")'
)
BACKFILL_BATCH: Final = 500
#: Slots probed after a memory's home slot; a collision needs two 62-bit hashes within it.
PROBE: Final = 16


def terms_text(trigger: str, content: str, keywords: Iterable[str]) -> str:
    """The ``terms`` column of one memory."""
    return " ".join(index_terms(trigger + "\n" + content + "\n" + " ".join(keywords)))


def home_slot(memory_id: str) -> int:
    """The first slot of ``memory_id``'s row (62 bits of a hash of the id)."""
    digest = blake2b(memory_id.encode("utf-8"), digest_size=8).digest()
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
    written: set[int] = set()
    for memory_id, terms in items:
        home = home_slot(memory_id)
        taken: set[int] = set()
        for rowid, owner in conn.execute(
            "SELECT rowid, memory_id FROM memories_fts WHERE rowid BETWEEN ? AND ?",
            (home, home + PROBE - 1),
        ):
            if owner == memory_id:
                conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
                written.add(int(rowid))
            else:
                taken.add(int(rowid))
        slot = next((s for s in range(home, home + PROBE) if s not in taken), None)
        if slot is None:  # pragma: no cover - needs 16 colliding 62-bit hashes
            raise StoreError(
                f"the lexical index has no free slot for memory {memory_id!r}",
                hint="give the memory another id",
            )
        conn.execute(
            "INSERT INTO memories_fts (rowid, memory_id, terms) VALUES (?, ?, ?)",
            (slot, memory_id, terms),
        )
        written.add(slot)
    if written:
        lexical_cache.bump_version(conn, written)


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
    home = home_slot(memory_id)
    slots = [
        int(row[0])
        for row in conn.execute(
            "SELECT rowid FROM memories_fts WHERE rowid BETWEEN ? AND ? AND memory_id = ?",
            (home, home + PROBE - 1, memory_id),
        )
    ]
    for slot in slots:
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (slot,))
    if slots:
        lexical_cache.bump_version(conn, slots)
