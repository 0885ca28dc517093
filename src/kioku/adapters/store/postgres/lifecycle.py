"""The PostgreSQL store's part for the nightly batch and the lifecycle log (schema version 6,
as SQLite's schema 5).

A mixin of :class:`.store.PostgresStore`. The batch reads every memory's numbers as columns
and writes back with one statement per call, whatever the number of rows: the values travel
as arrays and ``unnest`` turns them into rows (``UPDATE ... FROM unnest(...)``,
``INSERT ... SELECT FROM unnest(...)``, ``DELETE ... USING unnest(...)``). Rows are read in
SQLite's shape and turned into the batch's columns by the same functions.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import sql_int
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import ValidationError

if TYPE_CHECKING:
    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import ArchiveSelect, Snapshot

__all__ = ["LifecyclePart"]

_ACTIVE: Final = (
    "SELECT id, user_id, agent_id, created_utc, emotional_intensity, decay_coefficient, "
    "memory_days, recall_count, recalled_since_last_batch, current_level, protected, "
    "retention_score FROM memories WHERE archived_at IS NULL AND created_utc <= %s "
    "AND kind = 'episode' ORDER BY created_utc, id"
)
_ARCHIVED_COLUMNS: Final = (
    "SELECT id, user_id, agent_id, created_utc, emotional_intensity, decay_coefficient, "
    "recall_count, archived_at, revival_requested, revival_requested_at, protected "
    "FROM memories WHERE archived_at IS NOT NULL AND kind = 'episode' "
)
_ARCHIVED: Final = _ARCHIVED_COLUMNS + "ORDER BY created_utc, id"
#: The archived memories a selection names (see ArchiveSelect); the bound is +inf for all.
_ARCHIVED_SELECTED: Final = (
    _ARCHIVED_COLUMNS + "AND id IN (SELECT id FROM memories WHERE revival_requested "
    "UNION SELECT source_id FROM relations UNION SELECT target_id FROM relations "
    "UNION SELECT id FROM memories WHERE archived_at IS NOT NULL AND %s::float8 IS NOT NULL "
    "AND extract(epoch FROM archived_at::timestamptz) < %s::float8) "
    "ORDER BY created_utc, id"
)
#: Archived memories per scope, oldest scope first (covering partial index, schema 10).
_ARCHIVE_COUNTS: Final = (
    "SELECT user_id, agent_id, count(*), count(*) FILTER (WHERE NOT protected), "
    "min(created_utc) FROM memories WHERE archived_at IS NOT NULL AND kind = 'episode' "
    "GROUP BY user_id, agent_id ORDER BY 5, 1, 2"
)
_WRITE_SCORES: Final = (
    "UPDATE memories AS m SET memory_days = u.memory_days, decay_coefficient = u.coefficient, "
    "recall_count = u.recall_count, retention_score = u.score, "
    "recalled_since_last_batch = FALSE "
    "FROM unnest(%s::text[], %s::float8[], %s::float8[], %s::bigint[], %s::float8[]) "
    "AS u(id, memory_days, coefficient, recall_count, score) WHERE m.id = u.id"
)
_ADD_LINKS: Final = (
    "INSERT INTO relations (source_id, target_id, type, created_at) "
    "SELECT l.source, l.target, l.type, %s "
    "FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS l(source, target, type, n) "
    "WHERE l.source <> l.target ORDER BY l.n "
    "ON CONFLICT (source_id, target_id) DO NOTHING"
)
_REMOVE_LINKS: Final = (
    "DELETE FROM relations AS r USING unnest(%s::text[], %s::text[]) AS p(source, target) "
    "WHERE r.source_id = p.source AND r.target_id = p.target"
)
_VECTORS: Final = (
    "SELECT id, embedding_dim, embedding::real[] FROM memories WHERE archived_at IS NULL "
    "AND kind = 'episode' AND embedding_model = %s AND user_id = %s AND agent_id = %s"
)
_APPEND_LOG: Final = (
    "INSERT INTO lifecycle_log (event_at, event_utc, batch_day, memory_id, user_id, agent_id, "
    "event, level_before, level_after, score_before, score_after, details) "
    "SELECT e.event_at, e.event_utc, e.batch_day, e.memory_id, e.user_id, e.agent_id, e.event, "
    "e.level_before, e.level_after, e.score_before, e.score_after, e.details::jsonb "
    "FROM unnest(%s::text[], %s::float8[], %s::text[], %s::text[], %s::text[], %s::text[], "
    "%s::text[], %s::integer[], %s::integer[], %s::float8[], %s::float8[], %s::text[]) "
    "WITH ORDINALITY AS e(event_at, event_utc, batch_day, memory_id, user_id, agent_id, event, "
    "level_before, level_after, score_before, score_after, details, n) ORDER BY e.n"
)
_LOG_COLUMNS: Final = (
    "seq, event_at, batch_day, memory_id, user_id, agent_id, event, level_before, "
    "level_after, score_before, score_after, details::text"
)


def _epoch(text: object) -> float | None:
    """Seconds since the epoch of stored ISO 8601 text (read as UTC without an offset, as
    SQLite's ``julianday`` reads it)."""
    return None if text is None else parse_ts(str(text), UTC).timestamp()


def _details(entry: LogEntry) -> str:
    try:
        return json.dumps(dict(entry.details), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError("details", entry.details, f"JSON without NaN ({exc})") from exc


class LifecyclePart:
    """Store methods of the nightly batch and the lifecycle log."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def delete_consolidation(self, user_id: str) -> int:
        raise NotImplementedError

    # -- the batch ---------------------------------------------------------------------

    def batch_snapshot(self, until: datetime, select: ArchiveSelect | None = None) -> Snapshot:
        """Every active episode made at or before ``until``, every link, and the archived
        episodes ``select`` names with every scope's archive counts (no ``select``: the whole
        archive). Knowledge, procedures and profiles do not fade by spec 000's retention."""
        from kioku.adapters.store.sqlite.lifecycle import _archived, _population, _with_counts
        from kioku.core.lifecycle.plan import Snapshot

        counts: list[tuple[object, ...]] | None = None
        with self._reading() as conn:
            active = conn.execute(_ACTIVE, (until.timestamp(),)).fetchall()
            if select is None:
                stored = conn.execute(_ARCHIVED).fetchall()
            else:
                counts = [tuple(r) for r in conn.execute(_ARCHIVE_COUNTS).fetchall()]
                bound = select.erasable_before
                stored = conn.execute(_ARCHIVED_SELECTED, (bound, bound)).fetchall()
            links = tuple(
                (str(s), str(t), str(k))
                for s, t, k in conn.execute(
                    "SELECT source_id, target_id, type FROM relations ORDER BY source_id, target_id"
                ).fetchall()
            )
        scopes: dict[tuple[str, str], int] = {}
        population = _population([tuple(r) for r in active], scopes)
        for row in counts or ():
            scopes.setdefault((str(row[0]), str(row[1])), len(scopes))
        archived_rows: list[tuple[object, ...]] = [
            (*r[:7], _epoch(r[7]), r[8], _epoch(r[9]), r[10]) for r in stored
        ]
        archived = _archived(archived_rows, scopes)
        if counts is not None:
            archived = _with_counts(archived, counts, scopes)
        return Snapshot(population, archived, tuple(scopes), links)

    def write_scores(
        self,
        ids: Sequence[str],
        memory_days: Sequence[float],
        coefficient: Sequence[float],
        recall_count: Sequence[int],
        score: Sequence[float],
    ) -> None:
        """The day's numbers of many memories in one ``UPDATE ... FROM unnest(...)``."""
        columns = (ids, memory_days, coefficient, recall_count, score)
        if len({len(c) for c in columns}) > 1:
            raise ValueError("write_scores: the columns differ in length")
        if not ids:
            return
        with self._writing() as conn:
            conn.execute(
                _WRITE_SCORES,
                (
                    [str(i) for i in ids],
                    [float(v) for v in memory_days],
                    [float(v) for v in coefficient],
                    [int(v) for v in recall_count],
                    [float(v) for v in score],
                ),
            )

    def add_links(self, links: Sequence[Link], at: datetime) -> None:
        """Add relations; a pair that exists (or a link to itself) is left out."""
        if not links:
            return
        with self._writing() as conn:
            conn.execute(
                _ADD_LINKS,
                (
                    format_ts(at),
                    [link.source for link in links],
                    [link.target for link in links],
                    [link.type for link in links],
                ),
            )

    def remove_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        with self._writing() as conn:
            conn.execute(_REMOVE_LINKS, ([p[0] for p in pairs], [p[1] for p in pairs]))

    def link_vectors(
        self, model: str, user_id: str, agent_id: str, ids: Sequence[str] | None
    ) -> tuple[builtins.list[str], npt.NDArray[np.float32]]:
        """Unit vectors of ``model`` of the active episodes of one scope (all, or ``ids``),
        of the dimension most of them have, by id."""
        with self._reading() as conn:
            if ids is None:
                rows = conn.execute(
                    _VECTORS + " ORDER BY id", (model, user_id, agent_id)
                ).fetchall()
            else:
                rows = conn.execute(
                    _VECTORS + " AND id = ANY(%s::text[]) ORDER BY id",
                    (model, user_id, agent_id, list(dict.fromkeys(ids))),
                ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        found = [(str(r[0]), int(str(r[1])), r[2]) for r in rows]
        dims = [d for _, d, _ in found]
        dim = max(set(dims), key=dims.count)
        kept = [(i, v) for i, d, v in found if d == dim and isinstance(v, list) and len(v) == dim]
        matrix = np.asarray([v for _, v in kept], dtype=np.float32).reshape(len(kept), dim)
        norms = np.linalg.norm(matrix, axis=1)
        np.divide(matrix, norms[:, None], out=matrix, where=norms[:, None] > 0)
        return [i for i, _ in kept], matrix

    # -- the lifecycle log -------------------------------------------------------------

    def append_log(self, entries: Sequence[LogEntry]) -> None:
        """Append rows in one statement; ``seq`` follows the order given."""
        if not entries:
            return
        details = [_details(e) for e in entries]
        with self._writing() as conn:
            conn.execute(
                _APPEND_LOG,
                (
                    [format_ts(e.at) for e in entries],
                    [e.at.timestamp() for e in entries],
                    [e.batch_day for e in entries],
                    [e.memory_id for e in entries],
                    [e.user_id for e in entries],
                    [e.agent_id for e in entries],
                    [e.event.value for e in entries],
                    [e.level_before for e in entries],
                    [e.level_after for e in entries],
                    [e.score_before for e in entries],
                    [e.score_after for e in entries],
                    details,
                ),
            )

    def read_log(
        self,
        *,
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> builtins.list[LogEntry]:
        """Rows oldest first (the newest ``limit`` when given), filtered by fixed columns."""
        from kioku.core.lifecycle.log import Event, LogEntry

        clauses: list[str] = []
        params: list[object] = []
        for column, value in (("memory_id", memory_id), ("user_id", user_id)):
            if value is not None:
                clauses.append(f"{column} = %s")  # a fixed column name, never input
                params.append(value)
        if agent_id is not None:
            clauses.append("agent_id = %s")
            params.append(agent_id)
        if since is not None:
            clauses.append("event_utc >= %s")
            params.append(since.timestamp())
        if events:
            clauses.append("event = ANY(%s::text[])")
            params.append([str(e) for e in events])
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = f"SELECT {_LOG_COLUMNS} FROM lifecycle_log{where} ORDER BY seq"
        if limit is not None:
            sql = f"SELECT * FROM ({sql} DESC LIMIT %s) AS newest ORDER BY seq"
            params.append(sql_int(limit))
        with self._reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [
            LogEntry(
                event=Event(str(r[6])),
                memory_id=str(r[3]),
                at=parse_ts(str(r[1]), UTC),
                user_id=str(r[4]),
                agent_id=str(r[5]),
                batch_day=None if r[2] is None else str(r[2]),
                level_before=None if r[7] is None else int(str(r[7])),
                level_after=None if r[8] is None else int(str(r[8])),
                score_before=None if r[9] is None else float(str(r[9])),
                score_after=None if r[10] is None else float(str(r[10])),
                details=json.loads(str(r[11])) if r[11] else {},
                seq=int(str(r[0])),
            )
            for r in rows
        ]

    # -- erasure -----------------------------------------------------------------------

    def delete_log(self, user_id: str) -> int:
        """Also deletes the user's consolidation runs, resolutions and mid-term entries."""
        with self._writing() as conn:
            self.delete_consolidation(user_id)
            return conn.execute("DELETE FROM lifecycle_log WHERE user_id = %s", (user_id,)).rowcount

    def delete_state(self, prefix: str) -> int:
        with self._writing() as conn:
            return conn.execute("DELETE FROM state WHERE starts_with(key, %s)", (prefix,)).rowcount
