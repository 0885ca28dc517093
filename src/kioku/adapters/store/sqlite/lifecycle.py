"""The batch's reads and bulk writes, and the lifecycle log (schema version 5).

The batch reads every memory's numbers as columns (a million rows in about a second), writes
the day's new ``memory_days`` and scores with one prepared statement, and appends one log row
per transition. Everything here runs inside the caller's transaction.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.queries import sql_int
from kioku.core.timefmt import format_ts, parse_ts

# The store imports this module when it opens: the batch's types are imported where they are
# built, so a recall (a hook's fresh process) never loads them.
if TYPE_CHECKING:
    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import (
        ArchivedPopulation,
        ArchiveSelect,
        Population,
        Snapshot,
    )

__all__ = [
    "ARCHIVE_INDEXES",
    "CREATE_LOG",
    "add_links",
    "append_log",
    "read_log",
    "read_snapshot",
    "read_vectors",
    "remove_links",
    "write_scores",
]

CREATE_LOG: Final = (
    """CREATE TABLE lifecycle_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_at TEXT NOT NULL,
    event_utc REAL NOT NULL,
    batch_day TEXT,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    event TEXT NOT NULL,
    level_before INTEGER,
    level_after INTEGER,
    score_before REAL,
    score_after REAL,
    details TEXT NOT NULL DEFAULT '{}'
)""",
    "CREATE INDEX idx_lifecycle_memory ON lifecycle_log(memory_id, seq)",
    "CREATE INDEX idx_lifecycle_time ON lifecycle_log(event_utc)",
    "CREATE INDEX idx_lifecycle_scope ON lifecycle_log(user_id, agent_id, event_utc)",
)

#: ISO 8601 text with an offset → seconds since the epoch, in SQL.
_EPOCH: Final = "((julianday({col}) - 2440587.5) * 86400.0)"
_LITTLE_F32: Final = np.dtype("<f4")

#: Schema 12: the batch counts the archive per scope from a covering partial index, and finds
#: revival requests in another, so its reads grow with the active memories.
ARCHIVE_INDEXES: Final = (
    "CREATE INDEX IF NOT EXISTS idx_archive_scope "
    "ON memories(user_id, agent_id, kind, protected, created_utc) WHERE archived_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_revival_requested ON memories(id) WHERE revival_requested = 1",
)


_ARCHIVED_COLUMNS: Final = (
    "id, user_id, agent_id, created_utc, emotional_intensity, decay_coefficient, "
    f"recall_count, {_EPOCH.format(col='archived_at')}, revival_requested, "
    f"{_EPOCH.format(col='revival_requested_at')}, protected"
)
#: Archived memories per scope, oldest scope first (a covering partial index, schema 12).
_ARCHIVE_COUNTS: Final = (
    "SELECT user_id, agent_id, count(*), sum(protected = 0), min(created_utc) FROM memories "
    "WHERE archived_at IS NOT NULL AND kind = 'episode' GROUP BY user_id, agent_id "
    "ORDER BY 5, 1, 2"
)


def read_snapshot(
    conn: sqlite3.Connection, until: datetime, select: ArchiveSelect | None = None
) -> Snapshot:
    """Every active episode made at or before ``until``, every link, and the archived
    episodes ``select`` names with every scope's archive counts (no ``select``: the whole
    archive). Knowledge, procedures and profiles do not fade by spec 000's retention."""
    from kioku.core.lifecycle.plan import Snapshot

    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: several times faster at 10^6 rows
    scopes: dict[tuple[str, str], int] = {}
    active = cursor.execute(
        "SELECT id, user_id, agent_id, created_utc, emotional_intensity, decay_coefficient, "
        "memory_days, recall_count, recalled_since_last_batch, current_level, protected, "
        "retention_score FROM memories WHERE archived_at IS NULL AND created_utc <= ? "
        "AND kind = 'episode' "
        "ORDER BY created_utc, id",
        (until.timestamp(),),
    ).fetchall()
    population = _population(active, scopes)
    counts: list[tuple[object, ...]] | None = None
    if select is None:
        archived_rows = cursor.execute(
            f"SELECT {_ARCHIVED_COLUMNS} FROM memories "
            "WHERE archived_at IS NOT NULL AND kind = 'episode' ORDER BY created_utc, id"
        ).fetchall()
    else:
        counts = cursor.execute(_ARCHIVE_COUNTS).fetchall()
        for row in counts:
            scopes.setdefault((str(row[0]), str(row[1])), len(scopes))
        erasable = ""
        params: tuple[float, ...] = ()
        if select.erasable_before is not None:
            erasable = (
                " UNION SELECT id FROM memories WHERE archived_at IS NOT NULL "
                f"AND {_EPOCH.format(col='archived_at')} < ?"
            )
            params = (select.erasable_before,)
        archived_rows = cursor.execute(
            f"SELECT {_ARCHIVED_COLUMNS} FROM memories WHERE id IN ("
            "SELECT id FROM memories WHERE revival_requested = 1 "
            "UNION SELECT source_id FROM relations UNION SELECT target_id FROM relations"
            f"{erasable}) AND archived_at IS NOT NULL AND kind = 'episode' "
            "ORDER BY created_utc, id",
            params,
        ).fetchall()
    archived = _archived(archived_rows, scopes)
    if counts is not None:
        archived = _with_counts(archived, counts, scopes)
    links = tuple(
        (str(s), str(t), str(k))
        for s, t, k in cursor.execute(
            "SELECT source_id, target_id, type FROM relations ORDER BY source_id, target_id"
        )
    )
    cursor.close()
    return Snapshot(population, archived, tuple(scopes), links)


def _with_counts(
    archived: ArchivedPopulation,
    counts: Sequence[Sequence[object]],
    scopes: dict[tuple[str, str], int],
) -> ArchivedPopulation:
    """``archived`` with every scope's archive counts (rows of ``_ARCHIVE_COUNTS``)."""
    every = np.zeros(len(scopes), dtype=np.int64)
    free = np.zeros(len(scopes), dtype=np.int64)
    for row in counts:
        code = scopes[(str(row[0]), str(row[1]))]
        every[code] = int(str(row[2]))
        free[code] = int(str(row[3] or 0))
    return dataclasses.replace(archived, in_scope=every, free_in_scope=free)


def _codes(rows: Sequence[tuple[object, ...]], scopes: dict[tuple[str, str], int]) -> list[int]:
    return [scopes.setdefault((str(r[1]), str(r[2])), len(scopes)) for r in rows]


def _ids(column: Iterable[object]) -> npt.NDArray[np.object_]:
    values = [str(v) for v in column]
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _population(rows: list[tuple[object, ...]], scopes: dict[tuple[str, str], int]) -> Population:
    from kioku.core.lifecycle.plan import Population

    if not rows:
        return Population.empty()
    codes = _codes(rows, scopes)
    cols = list(zip(*rows, strict=True))
    return Population(
        ids=_ids(cols[0]),
        scope=np.asarray(codes, dtype=np.int32),
        created=np.asarray(cols[3], dtype=np.float64),
        intensity=np.asarray(cols[4], dtype=np.float64),
        coefficient=np.asarray(cols[5], dtype=np.float64),
        memory_days=np.asarray(cols[6], dtype=np.float64),
        recall_count=np.asarray(cols[7], dtype=np.int64),
        recalled=np.asarray(cols[8], dtype=np.bool_),
        level=np.asarray(cols[9], dtype=np.int8),
        protected=np.asarray(cols[10], dtype=np.bool_),
        score=np.asarray(cols[11], dtype=np.float64),
    )


def _archived(
    rows: list[tuple[object, ...]], scopes: dict[tuple[str, str], int]
) -> ArchivedPopulation:
    from kioku.core.lifecycle.plan import ArchivedPopulation

    if not rows:
        return ArchivedPopulation.empty()
    codes = _codes(rows, scopes)
    cols = list(zip(*rows, strict=True))
    return ArchivedPopulation(
        ids=_ids(cols[0]),
        scope=np.asarray(codes, dtype=np.int32),
        created=np.asarray(cols[3], dtype=np.float64),
        intensity=np.asarray(cols[4], dtype=np.float64),
        coefficient=np.asarray(cols[5], dtype=np.float64),
        recall_count=np.asarray(cols[6], dtype=np.int64),
        archived_at=np.asarray([np.nan if v is None else v for v in cols[7]], dtype=np.float64),
        revival_requested=np.asarray(cols[8], dtype=np.bool_),
        revival_requested_at=np.asarray(
            [np.nan if v is None else v for v in cols[9]], dtype=np.float64
        ),
        protected=np.asarray(cols[10], dtype=np.bool_),
    )


def write_scores(
    conn: sqlite3.Connection,
    ids: Sequence[str],
    memory_days: Sequence[float],
    coefficient: Sequence[float],
    recall_count: Sequence[int],
    score: Sequence[float],
) -> None:
    """Steps 1–2 for every active memory: new numbers, and the recall flag cleared."""
    conn.executemany(
        "UPDATE memories SET memory_days = ?, decay_coefficient = ?, recall_count = ?, "
        "retention_score = ?, recalled_since_last_batch = 0 WHERE id = ?",
        zip(memory_days, coefficient, recall_count, score, ids, strict=True),
    )


def add_links(conn: sqlite3.Connection, links: Sequence[Link], at: datetime) -> None:
    stamp = format_ts(at)
    conn.executemany(
        "INSERT OR IGNORE INTO relations (source_id, target_id, type, created_at) "
        "VALUES (?, ?, ?, ?)",
        [(link.source, link.target, link.type, stamp) for link in links],
    )


def remove_links(conn: sqlite3.Connection, pairs: Sequence[tuple[str, str]]) -> None:
    conn.executemany("DELETE FROM relations WHERE source_id = ? AND target_id = ?", pairs)


def read_vectors(
    conn: sqlite3.Connection,
    model: str,
    user_id: str,
    agent_id: str,
    ids: Sequence[str] | None,
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Unit vectors of ``model`` for the active memories of one scope (all, or ``ids``)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    sql = (
        "SELECT id, embedding_dim, embedding FROM memories WHERE archived_at IS NULL "
        "AND kind = 'episode' AND embedding_model = ? AND user_id = ? AND agent_id = ?"
    )
    if ids is None:
        rows = cursor.execute(sql + " ORDER BY id", (model, user_id, agent_id)).fetchall()
    else:
        rows = []
        wanted = list(dict.fromkeys(ids))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows.extend(
                cursor.execute(
                    sql + f" AND id IN ({marks})", (model, user_id, agent_id, *chunk)
                ).fetchall()
            )
    cursor.close()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dims = [int(r[1]) for r in rows]
    dim = max(set(dims), key=dims.count)
    kept = [r for r in rows if int(r[1]) == dim and len(r[2]) == dim * 4]
    matrix = np.frombuffer(b"".join(r[2] for r in kept), dtype=_LITTLE_F32).reshape(len(kept), dim)
    matrix = matrix.astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    np.divide(matrix, norms[:, None], out=matrix, where=norms[:, None] > 0)
    return [str(r[0]) for r in kept], matrix


def append_log(conn: sqlite3.Connection, entries: Sequence[LogEntry]) -> None:
    conn.executemany(
        "INSERT INTO lifecycle_log (event_at, event_utc, batch_day, memory_id, user_id, agent_id, "
        "event, level_before, level_after, score_before, score_after, details) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                format_ts(e.at),
                e.at.timestamp(),
                e.batch_day,
                e.memory_id,
                e.user_id,
                e.agent_id,
                e.event.value,
                e.level_before,
                e.level_after,
                e.score_before,
                e.score_after,
                json.dumps(dict(e.details), ensure_ascii=False, sort_keys=True),
            )
            for e in entries
        ],
    )


def read_log(
    conn: sqlite3.Connection,
    *,
    memory_id: str | None,
    user_id: str | None,
    agent_id: str | None,
    since: datetime | None,
    events: Sequence[str] | None,
    limit: int | None,
) -> list[LogEntry]:
    """Log rows, oldest first, filtered by fixed columns only (values are parameters)."""
    from kioku.core.lifecycle.log import Event, LogEntry

    clauses: list[str] = []
    params: list[object] = []
    if memory_id is not None:
        clauses.append("memory_id = ?")
        params.append(memory_id)
    if user_id is not None:
        clauses.append("user_id = ?")
        params.append(user_id)
    if agent_id is not None:
        clauses.append("agent_id = ?")
        params.append(agent_id)
    if since is not None:
        clauses.append("event_utc >= ?")
        params.append(since.timestamp())
    if events:
        clauses.append(f"event IN ({','.join('?' * len(events))})")
        params.extend(events)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    if limit is not None:
        # The newest ``limit`` rows, still returned oldest first.
        sql = (
            "SELECT * FROM (SELECT seq, event_at, batch_day, memory_id, user_id, agent_id, event, "
            "level_before, level_after, score_before, score_after, details FROM lifecycle_log"
            f"{where} ORDER BY seq DESC LIMIT ?) ORDER BY seq"
        )
        params.append(sql_int(limit))
    else:
        sql = (
            "SELECT seq, event_at, batch_day, memory_id, user_id, agent_id, event, level_before, "
            f"level_after, score_before, score_after, details FROM lifecycle_log{where} "
            "ORDER BY seq"
        )
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(sql, params).fetchall()
    cursor.close()
    return [
        LogEntry(
            event=Event(str(r[6])),
            memory_id=str(r[3]),
            at=parse_ts(str(r[1]), UTC),
            user_id=str(r[4]),
            agent_id=str(r[5]),
            batch_day=None if r[2] is None else str(r[2]),
            level_before=None if r[7] is None else int(r[7]),
            level_after=None if r[8] is None else int(r[8]),
            score_before=None if r[9] is None else float(r[9]),
            score_after=None if r[10] is None else float(r[10]),
            details=json.loads(str(r[11])) if r[11] else {},
            seq=int(r[0]),
        )
        for r in rows
    ]
