"""The SQLite store's part for schema version 8: kinds in search, cold storage, activity.

A mixin of :class:`.store.SqliteStore`, kept apart so the store module stays readable. It
uses only the store's ``_reading``/``_writing`` transactions.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Final

from kioku.adapters.store.sqlite import activity_rows, originals
from kioku.adapters.store.sqlite.queries import check_page, kind_value, placeholders, where_clause
from kioku.core.model import Kind
from kioku.ports.store import (
    ActivityQuery,
    ActivityRow,
    MemoryFilter,
    Original,
    StoredActivity,
)

__all__ = ["KindsPart", "search_scope"]

#: Vector search cannot filter by kind: it ranks this many times more, then filters.
_OVERFETCH: Final = 4


def search_scope(flt: MemoryFilter) -> MemoryFilter:
    """The part of ``flt`` that search honours: scope, kinds, time bounds and ``archived``."""
    return MemoryFilter(
        user_id=flt.user_id,
        agent_id=flt.agent_id,
        archived=flt.archived,
        kind=flt.kind,
        kinds=flt.kinds,
        created_after=flt.created_after,
        created_before=flt.created_before,
    )


def _wanted_kinds(flt: MemoryFilter) -> frozenset[str] | None:
    wanted: frozenset[str] | None = None
    if flt.kinds is not None:
        wanted = frozenset(kind_value(k) for k in flt.kinds)
    if flt.kind is not None:
        one = frozenset({kind_value(flt.kind)})
        wanted = one if wanted is None else wanted & one
    return wanted


class KindsPart:
    """Store methods of memory kinds, originals and the activity log."""

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _scoped_vector_search(
        self, model: str, query: Sequence[float], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        raise NotImplementedError

    def _beside(self) -> AbstractContextManager[bool]:
        raise NotImplementedError

    def vector_search(
        self, model: str, query: Sequence[float], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        # Beside another thread's reads or writes when it holds the lock (see .transactions).
        with self._beside():
            return self._kinds_vector_search(model, query, flt, limit)

    def _kinds_vector_search(
        self, model: str, query: Sequence[float], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        wanted = _wanted_kinds(flt)
        timed = flt.created_after is not None or flt.created_before is not None
        if not timed and wanted is None:
            return self._scoped_vector_search(model, query, flt, limit)
        check_page(limit, 0)
        fetch = limit * _OVERFETCH + 16
        if not timed and wanted is not None:
            others = self._other_kinds(flt, wanted, fetch)
            if not others:
                return self._scoped_vector_search(model, query, flt, limit)
            if len(others) <= fetch:
                # Few memories of the kinds not wanted: the best ``limit + len(others)`` of
                # the scope hold the best ``limit`` of the wanted kinds (the ranking is a
                # total order, score then id).
                found = self._scoped_vector_search(model, query, flt, limit + len(others))
                return [item for item in found if item[0] not in others][:limit]
        # The vector cache knows scope and archive only: rank more, filter, and rank more
        # again until enough pass or every vector of the scope has been ranked.
        while True:
            found = self._scoped_vector_search(model, query, flt, fetch)
            kept = self._passing(found, wanted, flt)
            if len(kept) >= limit or len(found) < fetch:
                return kept[:limit]
            fetch *= _OVERFETCH

    def _passing(
        self, found: Sequence[tuple[str, float]], wanted: frozenset[str] | None, flt: MemoryFilter
    ) -> builtins.list[tuple[str, float]]:
        """The matches whose memory is of a wanted kind and made within the time bounds."""
        after = None if flt.created_after is None else flt.created_after.timestamp()
        before = None if flt.created_before is None else flt.created_before.timestamp()
        facts: dict[str, tuple[str, float]] = {}
        ids = [memory_id for memory_id, _ in found]
        with self._reading() as conn:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                facts.update(
                    (str(r[0]), (str(r[1]), float(r[2])))
                    for r in conn.execute(
                        "SELECT id, kind, created_utc FROM memories "
                        f"WHERE id IN ({placeholders(len(chunk))})",
                        chunk,
                    )
                )
        kept = []
        for item in found:
            fact = facts.get(item[0])
            if fact is None or (wanted is not None and fact[0] not in wanted):
                continue
            if (after is not None and fact[1] < after) or (
                before is not None and fact[1] >= before
            ):
                continue
            kept.append(item)
        return kept

    def _other_kinds(self, flt: MemoryFilter, wanted: frozenset[str], most: int) -> frozenset[str]:
        """The ids of the scope's memories of a kind not wanted (else nothing to filter), when
        there are at most ``most`` of them; ``most + 1`` of them otherwise."""
        others = [k.value for k in Kind if k.value not in wanted]
        if not others:
            return frozenset()
        where, params = where_clause(MemoryFilter(user_id=flt.user_id, agent_id=flt.agent_id))
        extra = " AND " if where else " WHERE "
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT id FROM memories{where}{extra}kind IN ({placeholders(len(others))}) "
                "LIMIT ?",
                (*params, *others, most + 1),
            ).fetchall()
        return frozenset(str(row[0]) for row in found)

    # -- cold storage ------------------------------------------------------------------

    def put_originals(self, items: Sequence[Original], at: datetime) -> int:
        with self._writing() as conn:
            return originals.put_many(conn, items, at)

    def originals(self, memory_ids: Sequence[str]) -> dict[str, Original]:
        with self._reading() as conn:
            return originals.get_many(conn, list(dict.fromkeys(memory_ids)))

    def search_originals(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        where, params = where_clause(search_scope(flt))
        scope = " AND " + where.removeprefix(" WHERE ") if where else ""
        with self._reading() as conn:
            return originals.search(conn, terms, scope, params, limit)

    # -- the activity log --------------------------------------------------------------

    def append_activity(self, rows: Sequence[ActivityRow]) -> builtins.list[int]:
        with self._writing() as conn:
            return activity_rows.append(conn, rows)

    def read_activity(self, query: ActivityQuery) -> builtins.list[StoredActivity]:
        with self._reading() as conn:
            return activity_rows.read(conn, query)

    def delete_activity(self, user_id: str) -> int:
        with self._writing() as conn:
            return activity_rows.delete_user(conn, user_id)
