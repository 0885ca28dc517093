"""The PostgreSQL store's part for lexical search and originals (schema version 2).

A mixin of :class:`.store.PostgresStore`, kept apart so the store module stays readable. It
uses only the store's ``_reading``/``_writing`` transactions, and ``_searching`` for the
searches a read replica may answer (:mod:`.replica`); the work is in :mod:`.lexical`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TypeVar

from kioku.adapters.store.postgres import lexical
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import and_clause, check_page, scope_filter
from kioku.adapters.store.sqlite.search import terms_text
from kioku.core.timefmt import format_ts
from kioku.ports.store import MemoryFilter
from kioku.ports.store_records import Original

__all__ = ["SearchPart"]

_T = TypeVar("_T")


class SearchPart:
    """Store methods of lexical search and cold storage of originals."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _searching(self, work: Callable[[Conn], _T]) -> _T:
        raise NotImplementedError

    def search_lexical(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        scope, params = and_clause(scope_filter(flt), "m.")
        return self._searching(
            lambda conn: lexical.search(conn, lexical.MEMORY_TERMS, terms, scope, params, limit)
        )

    def term_documents(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        return self._searching(lambda conn: lexical.documents(conn, terms))

    def known_terms(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int | None = None
    ) -> frozenset[str]:
        check_page(limit, 0)
        scope, params = and_clause(scope_filter(flt), "m.")
        return self._searching(lambda conn: lexical.known(conn, terms, scope, params, limit))

    def indexed_terms(self, memory_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        with self._reading() as conn:
            return lexical.indexed_terms(conn, memory_ids)

    # -- cold storage ------------------------------------------------------------------

    def put_originals(self, items: Sequence[Original], at: datetime) -> int:
        """Keep each original unless one is kept already (the first text is the original)."""
        first: dict[str, Original] = {}
        for item in items:
            first.setdefault(item.memory_id, item)
        if not first:
            return 0
        rows = list(first.values())
        with self._writing() as conn:
            return conn.execute(
                "INSERT INTO originals (memory_id, saved_at, trigger, content, terms) "
                "SELECT u.id, %s, u.trigger, u.content, string_to_array(u.terms, ' ') "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) "
                "AS u(id, trigger, content, terms) ON CONFLICT (memory_id) DO NOTHING",
                (
                    format_ts(at),
                    [r.memory_id for r in rows],
                    [r.trigger for r in rows],
                    [r.content for r in rows],
                    [" ".join(terms_text(r.trigger, r.content, ()).lower().split()) for r in rows],
                ),
            ).rowcount

    def originals(self, memory_ids: Sequence[str]) -> dict[str, Original]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT memory_id, trigger, content FROM originals "
                "WHERE memory_id = ANY(%s::text[])",
                (ids,),
            ).fetchall()
        return {str(i): Original(str(i), str(t), str(c)) for i, t, c in rows}

    def search_originals(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        scope, params = and_clause(scope_filter(flt), "m.")
        return self._searching(
            lambda conn: lexical.search(conn, lexical.ORIGINALS, terms, scope, params, limit)
        )
