"""The activity log's rows (schema version 8): one JSON line per event, in its owner's scope.

Each row keeps the event's line exactly as the activity log writes it (spec 001's JSONL
shape) with the columns a reader filters on. ``activity_memories`` says which memories an
event mentions: erasing a memory rewrites those events without their text
(:func:`redact`), so the log never keeps what was erased.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Final

from kioku.ports.store import ActivityQuery, ActivityRow, StoredActivity

__all__ = ["REDACTED_KEYS", "append", "delete_user", "read", "redact"]

#: The keys of an event line that may carry memory text.
REDACTED_KEYS: Final = ("content", "summary", "meta")


def append(conn: sqlite3.Connection, rows: Sequence[ActivityRow]) -> list[int]:
    seqs: list[int] = []
    for row in rows:
        cursor = conn.execute(
            "INSERT INTO activity (at_utc, day, type, user_id, agent_id, session_id, line) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.at.timestamp(),
                row.at.date().isoformat(),
                row.type,
                row.user_id,
                row.agent_id,
                row.session_id,
                row.line,
            ),
        )
        seq = int(cursor.lastrowid or 0)
        conn.executemany(
            "INSERT OR IGNORE INTO activity_memories (memory_id, seq) VALUES (?, ?)",
            [(memory_id, seq) for memory_id in dict.fromkeys(row.memory_ids)],
        )
        seqs.append(seq)
    return seqs


def read(conn: sqlite3.Connection, query: ActivityQuery) -> list[StoredActivity]:
    """Events of the query's scope and time window, oldest first (the newest ``limit``)."""
    parts = ["1 = 1"]
    params: list[object] = []
    for column, value in (
        ("user_id", query.user_id),
        ("agent_id", query.agent_id),
        ("session_id", query.session_id),
    ):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    if query.since is not None:
        parts.append("at_utc >= ?")
        params.append(query.since.timestamp())
    if query.until is not None:
        parts.append("at_utc < ?")
        params.append(query.until.timestamp())
    if query.types:
        parts.append(f"type IN ({', '.join('?' for _ in query.types)})")
        params.extend(query.types)
    limit = -1 if query.limit is None else int(query.limit)
    found = conn.execute(
        "SELECT seq, day, line FROM (SELECT seq, day, line FROM activity WHERE "
        + " AND ".join(parts)
        + " ORDER BY seq DESC LIMIT ?) ORDER BY seq",
        (*params, limit),
    ).fetchall()
    return [StoredActivity(seq=int(r[0]), day=str(r[1]), line=str(r[2])) for r in found]


def redact(conn: sqlite3.Connection, memory_ids: Sequence[str]) -> int:
    """Take the text out of every event that mentions one of ``memory_ids``."""
    seqs: set[int] = set()
    for memory_id in dict.fromkeys(memory_ids):
        seqs.update(
            int(r[0])
            for r in conn.execute(
                "SELECT seq FROM activity_memories WHERE memory_id = ?", (memory_id,)
            )
        )
    for seq in sorted(seqs):
        row = conn.execute("SELECT line FROM activity WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            continue
        try:
            event = json.loads(str(row[0]))
        except ValueError:
            event = {}
        if not isinstance(event, dict):
            event = {}
        kept = {k: v for k, v in event.items() if k not in REDACTED_KEYS}
        kept["redacted"] = True
        conn.execute(
            "UPDATE activity SET line = ? WHERE seq = ?",
            (json.dumps(kept, ensure_ascii=False, separators=(",", ":")), seq),
        )
    conn.executemany(
        "DELETE FROM activity_memories WHERE memory_id = ?", [(m,) for m in set(memory_ids)]
    )
    return len(seqs)


def delete_user(conn: sqlite3.Connection, user_id: str) -> int:
    return conn.execute("DELETE FROM activity WHERE user_id = ?", (user_id,)).rowcount
