"""The SQLite store's part for schema version 9: consolidation runs, saved versions, the
resolution registry, the mid-term tier and what active forgetting reads and writes.

A mixin of :class:`.store.SqliteStore`, kept apart so the store module stays readable. It
uses only the store's ``_reading``/``_writing`` transactions. Times are kept as ISO 8601 text
with their offset, which is what is read back, and as seconds since the epoch, which is what
is compared (see :mod:`.consolidation_schema`).
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from kioku.adapters.store.arguments import moment as _moment
from kioku.adapters.store.arguments import nonempty_text as _text
from kioku.adapters.store.arguments import report_json as _report_json
from kioku.adapters.store.arguments import text_list
from kioku.adapters.store.arguments import version_of as _version_of
from kioku.adapters.store.sqlite import erasure, rows
from kioku.adapters.store.sqlite.codec import encode_text_list
from kioku.adapters.store.sqlite.consolidation_schema import (
    ACTIVITY_SELECT,
    MIDTERM_COLUMNS,
    MIDTERM_UPSERT,
    RESOLUTION_COLUMNS,
    RUN_COLUMNS,
    VERSION_COLUMNS,
    read_activity,
    read_entry,
    read_resolution,
    read_run,
    read_version,
)
from kioku.adapters.store.sqlite.queries import (
    check_page,
    order_clause,
    placeholders,
    sql_int,
    where_clause,
)
from kioku.core.kinds_json import check_details, details_to_json
from kioku.core.model import Memory
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.ports.store import (
    ActivityFields,
    ConsolidationDoneError,
    ConsolidationRun,
    MemoryFilter,
    MemoryVersion,
    MidTermEntry,
    Resolution,
)

__all__ = ["ConsolidationPart"]


def _texts(field: str, values: object) -> str:
    return encode_text_list(text_list(field, values))


def _at(moment: datetime, field: str) -> float:
    return _moment(moment, field)[1]


class ConsolidationPart:
    """Store methods of consolidation, saved versions, resolutions, the mid-term tier and
    memory activity."""

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # -- consolidation runs ----------------------------------------------------------------

    def consolidation_done(self, kind: str, period: str, user_id: str, agent_id: str) -> bool:
        with self._reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM consolidation_runs "
                "WHERE user_id = ? AND agent_id = ? AND kind = ? AND period = ?",
                (user_id, agent_id, kind, period),
            ).fetchone()
        return row is not None

    def record_consolidation(self, run: ConsolidationRun) -> None:
        """Insert the run; a run of the same kind, period and scope raises
        :class:`ConsolidationDoneError` and leaves the transaction to roll back."""
        kind, period = _text("kind", run.kind), _text("period", run.period)
        done_at, done_utc = _moment(run.done_at, "done_at")
        report = _report_json(run.report)
        with self._writing() as conn:
            cursor = conn.execute(
                f"INSERT INTO consolidation_runs ({RUN_COLUMNS}, done_utc) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (user_id, agent_id, kind, period) DO NOTHING",
                (kind, period, run.user_id, run.agent_id, done_at, report, done_utc),
            )
            if cursor.rowcount == 0:
                raise ConsolidationDoneError(kind, period, run.user_id, run.agent_id)

    def consolidation_runs(
        self, user_id: str, agent_id: str, kind: str | None = None, limit: int = 100
    ) -> builtins.list[ConsolidationRun]:
        check_page(limit, 0)
        which = "" if kind is None else " AND kind = ?"
        params: list[object] = [user_id, agent_id]
        if kind is not None:
            params.append(kind)
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM consolidation_runs "
                f"WHERE user_id = ? AND agent_id = ?{which} "
                "ORDER BY done_utc DESC, seq DESC LIMIT ?",
                (*params, sql_int(limit)),
            ).fetchall()
        return [read_run(r) for r in found]

    # -- saved versions --------------------------------------------------------------------

    def save_version(self, memory: Memory, at: datetime) -> int:
        check_details(memory.kind, memory.details)
        saved_at, saved_utc = _moment(at, "at")
        values = (
            memory.id,
            _version_of(memory),
            str(memory.kind),
            saved_at,
            memory.trigger,
            memory.content,
            details_to_json(memory.details),
            saved_utc,
        )
        with self._writing() as conn:
            if conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory.id,)).fetchone() is None:
                raise MemoryNotFoundError(memory.id)
            cursor = conn.execute(
                f"INSERT INTO memory_versions ({VERSION_COLUMNS}, saved_utc) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            return int(cursor.lastrowid or 0)

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? "
                "ORDER BY saved_utc, rid",
                (memory_id,),
            ).fetchall()
        return [read_version(r) for r in found]

    def delete_versions(self, memory_id: str, versions: Sequence[int]) -> int:
        numbers = list(dict.fromkeys(versions))
        if any(isinstance(n, bool) or not isinstance(n, int) for n in numbers):
            raise ValidationError("versions", versions, "a sequence of integers")
        if not numbers:
            return 0
        deleted = 0
        with self._writing() as conn:
            for start in range(0, len(numbers), rows.CHUNK):
                chunk = numbers[start : start + rows.CHUNK]
                deleted += conn.execute(
                    "DELETE FROM memory_versions WHERE memory_id = ? "
                    f"AND version IN ({placeholders(len(chunk))})",
                    (memory_id, *chunk),
                ).rowcount
        return deleted

    # -- the resolution registry -----------------------------------------------------------

    def add_resolutions(self, items: Sequence[Resolution]) -> builtins.list[int]:
        values = []
        for item in items:
            if not isinstance(item.item, str):
                raise ValidationError("item", item.item, "text")
            at, at_utc = _moment(item.at, "at")
            values.append(
                (item.user_id, item.agent_id, item.session_id, at, at_utc, item.item, item.source)
            )
        seqs: builtins.list[int] = []
        with self._writing() as conn:
            for value in values:
                cursor = conn.execute(
                    "INSERT INTO resolutions "
                    "(user_id, agent_id, session_id, at, at_utc, item, source) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    value,
                )
                seqs.append(int(cursor.lastrowid or 0))
        return seqs

    def resolutions(
        self, user_id: str, since: datetime | None = None, limit: int | None = None
    ) -> builtins.list[Resolution]:
        if limit is not None:
            check_page(limit, 0)
        after = float("-inf") if since is None else _at(since, "since")
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT {RESOLUTION_COLUMNS} FROM (SELECT {RESOLUTION_COLUMNS}, at_utc "
                "FROM resolutions WHERE user_id = ? AND at_utc >= ? "
                "ORDER BY at_utc DESC, seq DESC LIMIT ?) ORDER BY at_utc, seq",
                (user_id, after, -1 if limit is None else sql_int(limit)),
            ).fetchall()
        return [read_resolution(r) for r in found]

    # -- the mid-term tier -----------------------------------------------------------------

    def put_midterm(self, entry: MidTermEntry) -> None:
        count = entry.turn_count
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValidationError("turn_count", count, "a non-negative integer")
        if not isinstance(entry.summary, str):
            raise ValidationError("summary", entry.summary, "text")
        created, created_utc = _moment(entry.created, "created")
        expires, expires_utc = _moment(entry.expires, "expires")
        values = (
            _text("thread_id", entry.thread_id),
            entry.user_id,
            entry.agent_id,
            created,
            _moment(entry.hot_until, "hot_until")[0],
            expires,
            entry.summary,
            _texts("keywords", entry.keywords),
            _texts("turns", entry.turns),
            count,
            entry.session_id,
            created_utc,
            expires_utc,
        )
        with self._writing() as conn:
            conn.execute(MIDTERM_UPSERT, values)

    def midterm(
        self, user_id: str, agent_id: str, now: datetime, thread_id: str | None = None
    ) -> builtins.list[MidTermEntry]:
        which = "" if thread_id is None else " AND thread_id = ?"
        params = [user_id, agent_id, _at(now, "now")]
        if thread_id is not None:
            params.append(thread_id)
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT {MIDTERM_COLUMNS} FROM midterm "
                f"WHERE user_id = ? AND agent_id = ? AND expires_utc > ?{which} "
                "ORDER BY created_utc DESC, thread_id DESC",
                params,
            ).fetchall()
        return [read_entry(r) for r in found]

    def expire_midterm(self, now: datetime) -> int:
        at = _at(now, "now")
        with self._writing() as conn:
            return conn.execute("DELETE FROM midterm WHERE expires_utc <= ?", (at,)).rowcount

    def delete_consolidation(self, user_id: str) -> int:
        with self._writing() as conn:
            return erasure.delete_user_rows(conn, user_id)

    def forget_traces(
        self, memory_id: str, user_id: str, agent_id: str, session_id: str | None
    ) -> int:
        with self._writing() as conn:
            gone = conn.execute("DELETE FROM resolutions WHERE source = ?", (memory_id,)).rowcount
            if session_id is not None:
                gone += conn.execute(
                    "DELETE FROM midterm WHERE user_id = ? AND agent_id = ? AND session_id = ?",
                    (user_id, agent_id, session_id),
                ).rowcount
            return int(gone)

    # -- memory activity -------------------------------------------------------------------

    def activity_fields(self, flt: MemoryFilter) -> builtins.list[ActivityFields]:
        check_page(flt.limit, flt.offset)
        where, params = where_clause(flt)
        limit = -1 if flt.limit is None else sql_int(flt.limit)
        with self._reading() as conn:
            found = conn.execute(
                f"{ACTIVITY_SELECT}{where}{order_clause(flt.order)} LIMIT ? OFFSET ?",
                (*params, limit, sql_int(flt.offset)),
            ).fetchall()
        return [read_activity(r) for r in found]

    def touch_accessed(self, ids: Sequence[str], at: datetime) -> int:
        """For memories other than episodes (the nightly batch counts those)."""
        seconds = _at(at, "at")
        wanted = list(dict.fromkeys(ids))
        touched = 0
        with self._writing() as conn:
            for chunk in rows.chunks(wanted):
                touched += conn.execute(
                    "UPDATE memories SET recall_count = recall_count + 1, "
                    "last_access_utc = MAX(COALESCE(last_access_utc, ?), ?), "
                    "recalled_since_last_batch = 0 "
                    "WHERE kind != 'episode' AND recalled_since_last_batch = 1 "
                    f"AND id IN ({placeholders(len(chunk))})",
                    (seconds, seconds, *chunk),
                ).rowcount
        return touched

    def set_low_activity(self, ids: Sequence[str], since: datetime | None) -> int:
        """Overwrites any earlier mark of these memories."""
        seconds = None if since is None else _at(since, "since")
        wanted = list(dict.fromkeys(ids))
        marked = 0
        with self._writing() as conn:
            for chunk in rows.chunks(wanted):
                marked += conn.execute(
                    "UPDATE memories SET low_since_utc = ? "
                    f"WHERE id IN ({placeholders(len(chunk))})",
                    (seconds, *chunk),
                ).rowcount
        return marked
