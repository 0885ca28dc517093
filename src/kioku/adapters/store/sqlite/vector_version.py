"""The version that invalidates vector caches (see :mod:`.vectors`), without numpy.

Every write that changes what vector search can see sets ``vectors_version`` in the ``state``
table to a fresh random 62-bit number in its own transaction; a cache built at one version is
used only while the store is still at it. Writers and the numpy-free search of
:mod:`.vector_lite` need only this, not the numpy cache itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

__all__ = ["VECTORS_VERSION", "bump_version", "embedding_models", "read_version"]

#: The ``state`` key of the version that invalidates vector caches.
VECTORS_VERSION: Final = "vectors_version"
#: Versions are drawn from 1 .. 2**62 - 1 (0 means "never written", -1 "unreadable").
_VERSION_BITS: Final = 62


def read_version(conn: sqlite3.Connection) -> int:
    """The current version: compare it for equality only (0: never written; -1: unreadable,
    which matches no cache)."""
    row = conn.execute("SELECT value FROM state WHERE key = ?", (VECTORS_VERSION,)).fetchone()
    try:
        version = 0 if row is None else int(row[0])
    except (TypeError, ValueError):
        return -1  # never a cached version: always reload
    return version if version >= 0 else -1


def bump_version(conn: sqlite3.Connection) -> int:
    """Set a fresh random version and return it; call inside the transaction of the write
    it announces."""
    import secrets  # only writers need it (and it costs a hook a few milliseconds)

    version = secrets.randbelow((1 << _VERSION_BITS) - 1) + 1
    conn.execute(
        "INSERT INTO state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (VECTORS_VERSION, str(version)),
    )
    return version


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
