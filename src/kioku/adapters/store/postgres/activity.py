"""The PostgreSQL store's activity log and the activity of memories (schema version 4).

The log is SQLite's (see :mod:`kioku.adapters.store.sqlite.activity_rows`): one JSON line per
event, kept exactly as written, with the columns a reader filters on; ``activity_memories``
says which memories an event mentions, so erasing a memory rewrites those events without
their text (:func:`redact`, which :func:`.writes.delete_memories` calls).

:class:`ActivityPart` is a mixin of :class:`.store.PostgresStore` with the log's methods and
what active forgetting reads and writes of memories (``last_access_utc``, ``low_since_utc``).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from typing import Final

from kioku.adapters.store.arguments import epoch_seconds
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import (
    and_clause,
    check_page,
    order_clause,
    sql_int,
    where_clause,
)
from kioku.adapters.store.sqlite.activity_rows import REDACTED_KEYS
from kioku.adapters.store.sqlite.consolidation_schema import read_activity
from kioku.adapters.store.sqlite.session_windows import grouped, window_values
from kioku.ports.store import MemoryFilter
from kioku.ports.store_records import ActivityFields, ActivityQuery, ActivityRow, StoredActivity

__all__ = ["ActivityPart", "redact"]

_INSERT_EVENT: Final = (
    "INSERT INTO activity (at_utc, day, type, user_id, agent_id, session_id, line) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq"
)
_LINK_MEMORIES: Final = (
    "INSERT INTO activity_memories (memory_id, seq) "
    "SELECT unnest(%s::text[]), %s ON CONFLICT DO NOTHING"
)
_SELECT_FIELDS: Final = (
    "SELECT id, kind, created_utc, last_access_utc, recall_count, recalled_since_last_batch, "
    "protected, archived_at IS NOT NULL, low_since_utc, details::text FROM memories"
)

#: Many windows of sessions in one statement: the windows as arrays, each window's memories
#: read through the session index (``idx_memories_session``) with their own page.
_SELECT_WINDOWS: Final = (
    "SELECT m.id, m.created_utc, w.n - 1 "
    "FROM unnest(%s::text[], %s::float8[], %s::float8[]) WITH ORDINALITY "
    "AS w(w_session, w_from, w_until, n) CROSS JOIN LATERAL ("
    "SELECT id, created_utc FROM memories "
    "WHERE session_id = w.w_session AND created_utc >= w.w_from AND created_utc < w.w_until"
    "{rest} ORDER BY created_utc, id LIMIT %s OFFSET %s) AS m"
)


def append(conn: Conn, rows: Sequence[ActivityRow]) -> list[int]:
    seqs: list[int] = []
    for row in rows:
        found = conn.execute(
            _INSERT_EVENT,
            (
                row.at.timestamp(),
                row.at.date().isoformat(),
                row.type,
                row.user_id,
                row.agent_id,
                row.session_id,
                row.line,
            ),
        ).fetchone()
        assert found is not None
        seq = int(str(found[0]))
        memory_ids = list(dict.fromkeys(row.memory_ids))
        if memory_ids:
            conn.execute(_LINK_MEMORIES, (memory_ids, seq))
        seqs.append(seq)
    return seqs


def read(conn: Conn, query: ActivityQuery) -> list[StoredActivity]:
    """Events of the query's scope and time window, oldest first (the newest ``limit``)."""
    parts = ["TRUE"]
    params: list[object] = []
    for column, value in (
        ("user_id", query.user_id),
        ("agent_id", query.agent_id),
        ("session_id", query.session_id),
    ):
        if value is not None:
            parts.append(f"{column} = %s")
            params.append(value)
    if query.since is not None:
        parts.append("at_utc >= %s")
        params.append(query.since.timestamp())
    if query.until is not None:
        parts.append("at_utc < %s")
        params.append(query.until.timestamp())
    if query.types:
        parts.append("type = ANY(%s::text[])")
        params.append(list(query.types))
    # As on SQLite, a negative limit means none.
    limit = None if query.limit is None or int(query.limit) < 0 else int(query.limit)
    found = conn.execute(
        "SELECT seq, day, line FROM (SELECT seq, day, line FROM activity WHERE "
        + " AND ".join(parts)
        + " ORDER BY seq DESC LIMIT %s) AS newest ORDER BY seq",
        (*params, limit),
    ).fetchall()
    return [StoredActivity(seq=int(str(r[0])), day=str(r[1]), line=str(r[2])) for r in found]


def _without_text(line: str) -> str:
    """The event's line without the keys that may carry memory text, marked redacted."""
    try:
        event = json.loads(line)
    except ValueError:
        event = {}
    if not isinstance(event, dict):
        event = {}
    kept = {k: v for k, v in event.items() if k not in REDACTED_KEYS}
    kept["redacted"] = True
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"))


def redact(conn: Conn, memory_ids: Sequence[str]) -> int:
    """Take the text out of every event that mentions one of ``memory_ids``; how many."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return 0
    found = conn.execute(
        "SELECT seq, line FROM activity WHERE seq IN "
        "(SELECT seq FROM activity_memories WHERE memory_id = ANY(%s::text[])) ORDER BY seq",
        (ids,),
    ).fetchall()
    if found:
        conn.cursor().executemany(
            "UPDATE activity SET line = %s WHERE seq = %s",
            [(_without_text(str(line)), seq) for seq, line in found],
        )
    conn.execute("DELETE FROM activity_memories WHERE memory_id = ANY(%s::text[])", (ids,))
    return len(found)


class ActivityPart:
    """Store methods of the activity log and of the activity of memories."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    # -- the activity log --------------------------------------------------------------

    def append_activity(self, rows: Sequence[ActivityRow]) -> builtins.list[int]:
        if not rows:
            return []
        with self._writing() as conn:
            return append(conn, rows)

    def read_activity(self, query: ActivityQuery) -> builtins.list[StoredActivity]:
        with self._reading() as conn:
            return read(conn, query)

    def delete_activity(self, user_id: str) -> int:
        """Deletes the events; which memories they mention cascades."""
        with self._writing() as conn:
            return conn.execute("DELETE FROM activity WHERE user_id = %s", (user_id,)).rowcount

    # -- the activity of memories ------------------------------------------------------

    def activity_fields(self, flt: MemoryFilter) -> builtins.list[ActivityFields]:
        check_page(flt.limit, flt.offset)
        where, params = where_clause(flt)
        limit = None if flt.limit is None else sql_int(flt.limit)
        with self._reading() as conn:
            found = conn.execute(
                f"{_SELECT_FIELDS}{where}{order_clause(flt.order)} LIMIT %s OFFSET %s",
                (*params, limit, sql_int(flt.offset)),
            ).fetchall()
        return [read_activity(r) for r in found]

    def session_windows(
        self, flt: MemoryFilter, windows: Sequence[tuple[str, datetime, datetime]]
    ) -> builtins.list[builtins.list[tuple[str, datetime]]]:
        check_page(flt.limit, flt.offset)
        asked = window_values(windows)
        if not asked:
            return []
        rest, params = and_clause(
            replace(flt, session_id=None, created_after=None, created_before=None)
        )
        limit = None if flt.limit is None else sql_int(flt.limit)
        sessions, starts, ends = (list(column) for column in zip(*asked, strict=True))
        with self._reading() as conn:
            found = conn.execute(
                _SELECT_WINDOWS.format(rest=rest),
                (sessions, starts, ends, *params, limit, sql_int(flt.offset)),
            ).fetchall()
        return grouped(found, len(asked))

    def touch_accessed(self, ids: Sequence[str], at: datetime) -> int:
        """For memories other than episodes (the nightly batch counts those)."""
        seconds = epoch_seconds("at", at)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        with self._writing() as conn:
            return conn.execute(
                "UPDATE memories SET recall_count = recall_count + 1, "
                "last_access_utc = GREATEST(last_access_utc, %s), "
                "recalled_since_last_batch = FALSE "
                "WHERE kind <> 'episode' AND recalled_since_last_batch "
                "AND id = ANY(%s::text[])",
                (seconds, wanted),
            ).rowcount

    def set_low_activity(self, ids: Sequence[str], since: datetime | None) -> int:
        """Overwrites any earlier mark of these memories."""
        seconds = None if since is None else epoch_seconds("since", since)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        with self._writing() as conn:
            return conn.execute(
                "UPDATE memories SET low_since_utc = %s WHERE id = ANY(%s::text[])",
                (seconds, wanted),
            ).rowcount
