"""Many time windows of sessions read in one statement (what recall reads around its matches).

:meth:`.store.SqliteStore.session_windows` hands the windows to SQLite as one JSON array
(``json_each``), so the statement's text is the same however many windows there are, and
each window picks its memories through the session index (``idx_memories_session``:
session, then creation time) with its own ``LIMIT``/``OFFSET``, as one
:meth:`~.store_consolidation.ConsolidationPart.activity_fields` call per window would. Only
the id and creation time of each memory are read: recall wants no more, and decoding whole
rows took most of the time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, Final

from kioku.adapters.store.arguments import epoch_seconds
from kioku.adapters.store.sqlite.queries import check_page, sql_int, where_clause
from kioku.errors import ValidationError
from kioku.ports.store import MemoryFilter

__all__ = ["grouped", "read_windows", "window_values"]

#: Each window's memories: a subquery per element of the JSON array, its criteria (after the
#: window's own) and its page appended. Inside the subquery ``m`` is the only table, so the
#: criteria's bare columns are its.
_SELECT: Final = (
    "SELECT m.id, m.created_utc, w.key FROM json_each(?) AS w "
    "JOIN memories AS m ON m.rowid IN (SELECT rowid FROM memories AS m "
    "WHERE m.session_id = json_extract(w.value, '$[0]') "
    "AND m.created_utc >= json_extract(w.value, '$[1]') "
    "AND m.created_utc < json_extract(w.value, '$[2]'){rest} "
    "ORDER BY m.created_utc, m.id LIMIT ? OFFSET ?)"
)


def window_values(windows: Sequence[object]) -> list[tuple[str, float, float]]:
    """``(session id, after, before)`` of each window, times in seconds since the epoch;
    ValidationError for a window that is not a session id and two aware times."""
    values: list[tuple[str, float, float]] = []
    for window in windows:
        if not isinstance(window, tuple | list) or len(window) != 3:
            raise ValidationError("window", window, "(session id, after, before)")
        session, after, before = window
        if not isinstance(session, str):
            raise ValidationError("session_id", session, "text")
        values.append((session, epoch_seconds("after", after), epoch_seconds("before", before)))
    return values


def grouped(found: list[Any], count: int) -> list[list[tuple[str, datetime]]]:
    """Rows ``(id, seconds since the epoch, window counted from 0)`` as each window's
    ``(id, created)``, oldest first, ties by id."""
    out: list[list[tuple[str, datetime]]] = [[] for _ in range(count)]
    for key, seconds, at in sorted(found, key=itemgetter(2, 1, 0)):
        out[at].append((key, datetime.fromtimestamp(seconds, UTC)))
    return out


def read_windows(
    conn: sqlite3.Connection,
    flt: MemoryFilter,
    windows: Sequence[tuple[str, datetime, datetime]],
) -> list[list[tuple[str, datetime]]]:
    """See :meth:`kioku.ports.store.Store.session_windows`."""
    check_page(flt.limit, flt.offset)
    asked = window_values(windows)
    if not asked:
        return []
    where, params = where_clause(
        replace(flt, session_id=None, created_after=None, created_before=None)
    )
    rest = " AND " + where.removeprefix(" WHERE ") if where else ""
    limit = -1 if flt.limit is None else sql_int(flt.limit)
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples
    found = cursor.execute(
        _SELECT.format(rest=rest),
        (json.dumps([list(a) for a in asked]), *params, limit, sql_int(flt.offset)),
    ).fetchall()
    return grouped(found, len(asked))
