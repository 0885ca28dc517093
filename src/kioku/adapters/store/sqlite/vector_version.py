"""The version that invalidates vector caches (see :mod:`.vectors`), and the change log that
lets a cache catch up instead (see :mod:`.vector_log`), without numpy.

Every write that changes what vector search can see sets ``vectors_version`` in the ``state``
table to a fresh random 62-bit number in its own transaction, and in the same transaction
records in ``vector_log`` (schema version 11) the version it set with the ids of the memories
whose vector, model, dimension, scope, archived flag or existence it changed: one row per id,
or one row with the ``reload`` flag when the write cannot list them (a salvage) or lists more
than :data:`MAX_LOGGED_IDS`. The log holds ids only, never text or vectors. It keeps the
newest :data:`KEEP_ROWS` rows: each write deletes the rows that fall out of that window, in
its own transaction (one range delete on the primary key). Writers and the numpy-free search
of :mod:`.vector_lite` need only this, not the numpy cache itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import Final

__all__ = [
    "KEEP_ROWS",
    "MAX_LOGGED_IDS",
    "VECTORS_VERSION",
    "VECTOR_LOG_SCHEMA",
    "bump_version",
    "changes_since",
    "embedding_models",
    "read_version",
]

#: The ``state`` key of the version that invalidates vector caches.
VECTORS_VERSION: Final = "vectors_version"
#: Versions are drawn from 1 .. 2**62 - 1 (0 means "never written", -1 "unreadable").
_VERSION_BITS: Final = 62
#: A write that changes more memories than this logs a reload marker instead of their ids.
MAX_LOGGED_IDS: Final = 10_000
#: Rows of ``vector_log`` kept; older ones are deleted by the write that adds new ones.
KEEP_ROWS: Final = 20_000

#: Schema version 11: the change log of vector-visible writes.
VECTOR_LOG_SCHEMA: Final = (
    """CREATE TABLE vector_log (
    seq INTEGER PRIMARY KEY,
    version INTEGER NOT NULL,
    memory_id TEXT,
    reload INTEGER NOT NULL DEFAULT 0 CHECK (reload IN (0, 1))
)""",
    "CREATE INDEX idx_vector_log_version ON vector_log(version)",
)


def read_version(conn: sqlite3.Connection) -> int:
    """The current version: compare it for equality only (0: never written; -1: unreadable,
    which matches no cache)."""
    row = conn.execute("SELECT value FROM state WHERE key = ?", (VECTORS_VERSION,)).fetchone()
    try:
        version = 0 if row is None else int(row[0])
    except (TypeError, ValueError):
        return -1  # never a cached version: always reload
    return version if version >= 0 else -1


def bump_version(conn: sqlite3.Connection, memory_ids: Collection[str] | None) -> int:
    """Set a fresh random version, log it with the ids of the memories whose vector-search
    state the write changed (None: it cannot say, so caches must reload), and return it; call
    inside the transaction of the write it announces."""
    import secrets  # only writers need it (and it costs a hook a few milliseconds)

    version = secrets.randbelow((1 << _VERSION_BITS) - 1) + 1
    conn.execute(
        "INSERT INTO state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (VECTORS_VERSION, str(version)),
    )
    last = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_log").fetchone()[0])
    if memory_ids is None or len(memory_ids) > MAX_LOGGED_IDS:
        entries: list[tuple[int, int, str | None, int]] = [(last + 1, version, None, 1)]
    elif not memory_ids:
        entries = [(last + 1, version, None, 0)]
    else:
        entries = [
            (last + 1 + i, version, memory_id, 0)
            for i, memory_id in enumerate(dict.fromkeys(memory_ids))
        ]
    conn.executemany(
        "INSERT INTO vector_log (seq, version, memory_id, reload) VALUES (?, ?, ?, ?)", entries
    )
    conn.execute("DELETE FROM vector_log WHERE seq <= ?", (entries[-1][0] - KEEP_ROWS,))
    return version


def changes_since(
    conn: sqlite3.Connection, since: int, current: int, limit: int
) -> list[str] | None:
    """The ids of the memories whose vector-search state changed from version ``since`` to
    ``current`` (read in the caller's snapshot), or None when the log cannot tell: ``since``
    is not in it (pruned, or set before the log existed), the entries after it do not end at
    ``current``, one of them is a reload marker, or they name more than ``limit`` ids."""
    if since <= 0 or current <= 0:
        return None
    row = conn.execute("SELECT MAX(seq) FROM vector_log WHERE version = ?", (since,)).fetchone()
    if row is None or row[0] is None:
        return None
    entries = conn.execute(
        "SELECT version, memory_id, reload FROM vector_log WHERE seq > ? ORDER BY seq LIMIT ?",
        (int(row[0]), limit + 1),
    ).fetchall()
    if not entries or len(entries) > limit or int(entries[-1][0]) != current:
        return None
    if any(int(reload) for _, _, reload in entries):
        return None
    return list(dict.fromkeys(str(m) for _, m, _ in entries if m is not None))


def embedding_models(
    conn: sqlite3.Connection, where: str, params: Sequence[object]
) -> dict[str | None, int]:
    """How many memories of each embedding model (None: without a vector) the filter holds;
    ``where`` is a fixed SQL fragment built by the store, never from caller input."""
    return {
        None if row[0] is None else str(row[0]): int(row[1])
        for row in conn.execute(
            f"SELECT embedding_model, COUNT(*) FROM memories{where} GROUP BY embedding_model",
            params,
        )
    }
