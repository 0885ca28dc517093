"""Cold storage of original texts (schema version 8, spec 003 §8.1 policy B).

When compression first rewrites an episode, its original trigger and content are kept here,
zlib-compressed, and their terms indexed in ``originals_fts``, which only deliberate search
reads: forgetting changes what priming shows, never what a search on purpose can find. The
row goes with its memory (``ON DELETE CASCADE``; the index row is removed by
:func:`remove`, called from every delete), and the scrub after an erasure merges this index
as it merges the main one.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from kioku.adapters.store.sqlite import erasure
from kioku.adapters.store.sqlite.search import terms_text
from kioku.core.timefmt import format_ts
from kioku.errors import StoreCorruptError
from kioku.ports.store import Original

__all__ = ["get_many", "merge_index", "put_many", "remove", "search"]

_MAX_TERMS: Final = 64
_LEVEL: Final = 6


def _pack(trigger: str, content: str) -> bytes:
    return zlib.compress(json.dumps([trigger, content], ensure_ascii=False).encode(), _LEVEL)


def _unpack(memory_id: str, blob: bytes) -> tuple[str, str]:
    try:
        trigger, content = json.loads(zlib.decompress(bytes(blob)).decode())
    except (zlib.error, ValueError, TypeError) as exc:
        raise StoreCorruptError(
            f"the original text of memory {memory_id!r} is unreadable ({exc})",
            hint="run `kioku doctor`; restore a backup to get the original back",
        ) from exc
    return str(trigger), str(content)


def put_many(conn: sqlite3.Connection, items: Sequence[Original], at: datetime) -> int:
    """Keep each original unless one is already kept (the first text is the original)."""
    saved = 0
    for item in items:
        cursor = conn.execute(
            "INSERT OR IGNORE INTO originals (memory_id, saved_at, text_z) VALUES (?, ?, ?)",
            (item.memory_id, format_ts(at), _pack(item.trigger, item.content)),
        )
        if cursor.rowcount:
            rid = int(cursor.lastrowid or 0)
            conn.execute(
                "INSERT INTO originals_fts (rowid, memory_id, terms) VALUES (?, ?, ?)",
                (rid, item.memory_id, terms_text(item.trigger, item.content, ())),
            )
            saved += 1
    return saved


def get_many(conn: sqlite3.Connection, memory_ids: Sequence[str]) -> dict[str, Original]:
    out: dict[str, Original] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = list(memory_ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        for memory_id, blob in conn.execute(
            f"SELECT memory_id, text_z FROM originals WHERE memory_id IN ({marks})", chunk
        ):
            trigger, content = _unpack(str(memory_id), blob)
            out[str(memory_id)] = Original(str(memory_id), trigger, content)
    return out


def remove(conn: sqlite3.Connection, memory_id: str) -> None:
    """Delete a memory's original and its index row (before or after the memory itself)."""
    row = conn.execute("SELECT rid FROM originals WHERE memory_id = ?", (memory_id,)).fetchone()
    if row is None:
        return
    conn.execute("DELETE FROM originals_fts WHERE rowid = ?", (int(row[0]),))
    conn.execute("DELETE FROM originals WHERE rid = ?", (int(row[0]),))


def search(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    scope: str,
    params: Sequence[object],
    limit: int,
) -> list[tuple[str, float]]:
    """``(memory id, -bm25)`` of the best matches among originals whose memory is in scope."""
    wanted = [t for t in dict.fromkeys(terms) if t][:_MAX_TERMS]
    if not wanted or limit <= 0:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
    rows = conn.execute(
        "SELECT f.memory_id, bm25(originals_fts) AS score FROM originals_fts AS f "
        "JOIN memories AS m ON m.id = f.memory_id "
        f"WHERE originals_fts MATCH ?{scope} ORDER BY score LIMIT ?",
        (match, *params, limit),
    ).fetchall()
    return [(str(r[0]), -float(r[1])) for r in rows]


def merge_index(conn: sqlite3.Connection) -> None:
    """As :func:`.erasure.merge_index` for the originals' index."""
    if erasure.FTS_SECURE_DELETE:
        conn.execute("INSERT INTO originals_fts (originals_fts, rank) VALUES ('secure-delete', 1)")
    conn.execute("INSERT INTO originals_fts (originals_fts) VALUES ('optimize')")
