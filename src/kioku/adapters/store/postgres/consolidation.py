"""The PostgreSQL store's part for consolidation (schema version 5, as SQLite's schema 9):
consolidation runs, saved versions, the resolution registry and the mid-term tier.

A mixin of :class:`.store.PostgresStore`. Times are kept as ISO 8601 text with their offset,
which is what is read back, and as seconds since the epoch, which is what is compared. Rows
are selected in the shape SQLite's (``report`` and ``details`` as JSON text, keywords and
turns as JSON arrays), so :mod:`kioku.adapters.store.sqlite.consolidation_schema` decodes them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Final

from kioku.adapters.store.arguments import moment as _moment
from kioku.adapters.store.arguments import nonempty_text as _text
from kioku.adapters.store.arguments import report_json as _report_json
from kioku.adapters.store.arguments import text_list as _texts
from kioku.adapters.store.arguments import version_of as _version_of
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import check_page, sql_int
from kioku.adapters.store.sqlite.consolidation_schema import (
    read_entry,
    read_resolution,
    read_run,
    read_version,
)
from kioku.core.kinds_json import check_details, details_to_json
from kioku.core.model import Memory
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.ports.store_records import (
    ConsolidationDoneError,
    ConsolidationRun,
    MemoryVersion,
    MidTermEntry,
    Resolution,
)

__all__ = ["ConsolidationPart"]

#: The tables that hold rows of a user (``kioku erase --user`` empties them).
_USER_TABLES: Final = ("consolidation_runs", "resolutions", "midterm")
_RUN_SELECT: Final = "SELECT kind, period, user_id, agent_id, done_at, report::text"
_VERSION_SELECT: Final = (
    "SELECT memory_id, version, kind, saved_at, trigger, content, details::text"
)
_RESOLUTION_COLUMNS: Final = "seq, item, at, user_id, agent_id, session_id, source"
_MIDTERM_SELECT: Final = (
    "SELECT thread_id, user_id, agent_id, created, hot_until, expires, summary, "
    "array_to_json(keywords)::text, array_to_json(turns)::text, turn_count, session_id"
)
_MIDTERM_UPSERT: Final = (
    "INSERT INTO midterm (thread_id, user_id, agent_id, created, hot_until, expires, summary, "
    "keywords, turns, turn_count, session_id, created_utc, expires_utc) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::text[], %s::text[], %s, %s, %s, %s) "
    "ON CONFLICT (user_id, agent_id, thread_id) DO UPDATE SET "
    "created = excluded.created, created_utc = excluded.created_utc, "
    "hot_until = excluded.hot_until, expires = excluded.expires, "
    "expires_utc = excluded.expires_utc, summary = excluded.summary, "
    "keywords = excluded.keywords, turns = excluded.turns, turn_count = excluded.turn_count, "
    "session_id = excluded.session_id"
)


class ConsolidationPart:
    """Store methods of consolidation runs, saved versions, resolutions and the mid-term
    tier."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    # -- consolidation runs ------------------------------------------------------------

    def consolidation_done(self, kind: str, period: str, user_id: str, agent_id: str) -> bool:
        with self._reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM consolidation_runs "
                "WHERE user_id = %s AND agent_id = %s AND kind = %s AND period = %s",
                (user_id, agent_id, kind, period),
            ).fetchone()
        return row is not None

    def record_consolidation(self, run: ConsolidationRun) -> None:
        """Insert the run; a run of the same kind, period and scope raises
        :class:`ConsolidationDoneError` (and ``atomic()`` then rolls back)."""
        kind, period = _text("kind", run.kind), _text("period", run.period)
        done_at, done_utc = _moment(run.done_at, "done_at")
        report = _report_json(run.report)
        with self._writing() as conn:
            cursor = conn.execute(
                "INSERT INTO consolidation_runs "
                "(kind, period, user_id, agent_id, done_at, report, done_utc) "
                "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s) "
                "ON CONFLICT (user_id, agent_id, kind, period) DO NOTHING",
                (kind, period, run.user_id, run.agent_id, done_at, report, done_utc),
            )
            if cursor.rowcount == 0:
                raise ConsolidationDoneError(kind, period, run.user_id, run.agent_id)

    def consolidation_runs(
        self, user_id: str, agent_id: str, kind: str | None = None, limit: int = 100
    ) -> builtins.list[ConsolidationRun]:
        check_page(limit, 0)
        which = "" if kind is None else " AND kind = %s"
        params: list[object] = [user_id, agent_id]
        if kind is not None:
            params.append(kind)
        with self._reading() as conn:
            found = conn.execute(
                f"{_RUN_SELECT} FROM consolidation_runs "
                f"WHERE user_id = %s AND agent_id = %s{which} "
                "ORDER BY done_utc DESC, seq DESC LIMIT %s",
                (*params, sql_int(limit)),
            ).fetchall()
        return [read_run(r) for r in found]

    # -- saved versions ----------------------------------------------------------------

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
            exists = conn.execute("SELECT 1 FROM memories WHERE id = %s", (memory.id,))
            if exists.fetchone() is None:
                raise MemoryNotFoundError(memory.id)
            row = conn.execute(
                "INSERT INTO memory_versions "
                "(memory_id, version, kind, saved_at, trigger, content, details, saved_utc) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s) RETURNING rid",
                values,
            ).fetchone()
        assert row is not None
        return int(str(row[0]))

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with self._reading() as conn:
            found = conn.execute(
                f"{_VERSION_SELECT} FROM memory_versions WHERE memory_id = %s "
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
        with self._writing() as conn:
            return conn.execute(
                "DELETE FROM memory_versions WHERE memory_id = %s AND version = ANY(%s)",
                (memory_id, [sql_int(n) for n in numbers]),
            ).rowcount

    # -- the resolution registry -------------------------------------------------------

    def add_resolutions(self, items: Sequence[Resolution]) -> builtins.list[int]:
        values = []
        for item in items:
            if not isinstance(item.item, str):
                raise ValidationError("item", item.item, "text")
            at, at_utc = _moment(item.at, "at")
            values.append(
                (item.user_id, item.agent_id, item.session_id, at, at_utc, item.item, item.source)
            )
        if not values:
            return []
        seqs: builtins.list[int] = []
        with self._writing() as conn:
            for value in values:
                row = conn.execute(
                    "INSERT INTO resolutions "
                    "(user_id, agent_id, session_id, at, at_utc, item, source) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq",
                    value,
                ).fetchone()
                assert row is not None
                seqs.append(int(str(row[0])))
        return seqs

    def resolutions(
        self, user_id: str, since: datetime | None = None, limit: int | None = None
    ) -> builtins.list[Resolution]:
        if limit is not None:
            check_page(limit, 0)
        after = float("-inf") if since is None else _moment(since, "since")[1]
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT {_RESOLUTION_COLUMNS} FROM (SELECT {_RESOLUTION_COLUMNS}, at_utc "
                "FROM resolutions WHERE user_id = %s AND at_utc >= %s "
                "ORDER BY at_utc DESC, seq DESC LIMIT %s) AS newest ORDER BY at_utc, seq",
                (user_id, after, None if limit is None else sql_int(limit)),
            ).fetchall()
        return [read_resolution(r) for r in found]

    # -- the mid-term tier -------------------------------------------------------------

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
            conn.execute(_MIDTERM_UPSERT, values)

    def midterm(
        self, user_id: str, agent_id: str, now: datetime, thread_id: str | None = None
    ) -> builtins.list[MidTermEntry]:
        which = "" if thread_id is None else " AND thread_id = %s"
        params: list[object] = [user_id, agent_id, _moment(now, "now")[1]]
        if thread_id is not None:
            params.append(thread_id)
        with self._reading() as conn:
            found = conn.execute(
                f"{_MIDTERM_SELECT} FROM midterm "
                f"WHERE user_id = %s AND agent_id = %s AND expires_utc > %s{which} "
                "ORDER BY created_utc DESC, thread_id DESC",
                params,
            ).fetchall()
        return [read_entry(r) for r in found]

    def expire_midterm(self, now: datetime) -> int:
        at = _moment(now, "now")[1]
        with self._writing() as conn:
            return conn.execute("DELETE FROM midterm WHERE expires_utc <= %s", (at,)).rowcount

    # -- erasure -----------------------------------------------------------------------

    def delete_consolidation(self, user_id: str) -> int:
        with self._writing() as conn:
            # Table names come from the fixed tuple above, never from a caller.
            return sum(
                conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,)).rowcount
                for table in _USER_TABLES
            )

    def forget_traces(
        self, memory_id: str, user_id: str, agent_id: str, session_id: str | None
    ) -> int:
        with self._writing() as conn:
            gone = conn.execute("DELETE FROM resolutions WHERE source = %s", (memory_id,)).rowcount
            if session_id is not None:
                gone += conn.execute(
                    "DELETE FROM midterm WHERE user_id = %s AND agent_id = %s AND session_id = %s",
                    (user_id, agent_id, session_id),
                ).rowcount
            return gone
