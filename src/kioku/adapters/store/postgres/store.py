"""The PostgreSQL Store adapter (issue #17: in progress; see docs/postgres.md).

A pool of autocommit connections (psycopg 3, :mod:`psycopg_pool`). :meth:`PostgresStore.atomic`
holds one connection for the calling thread: the outermost level is a transaction that first
takes the schema's advisory lock (so writers queue as they do on SQLite's ``BEGIN IMMEDIATE``,
and a read-check-write inside is safe against other processes), inner levels are savepoints.
Every write method runs in its own level, so a failed call undoes only itself. Reads outside
``atomic()`` take a connection for one read-only, repeatable-read transaction.

Erasure's audit log and backups manifest are in :mod:`.erasure`; backups, scrubbing and
compaction in :mod:`.maintenance`. With a ``read_url``, searches go to a read replica
(:mod:`.replica`).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Final, TypeVar

import psycopg
import psycopg_pool

from kioku.adapters.store.arguments import aware
from kioku.adapters.store.postgres import migrations, vectors, writes
from kioku.adapters.store.postgres.activity import ActivityPart
from kioku.adapters.store.postgres.codec import SELECT_MEMORIES
from kioku.adapters.store.postgres.connection import (
    DEFAULT_POOL_MAX,
    DEFAULT_TIMEOUT_S,
    Conn,
    create_schema,
    enable_row_security,
    open_pool,
    owner_settings,
    redacted,
    snapshot,
    translating,
)
from kioku.adapters.store.postgres.consolidation import ConsolidationPart
from kioku.adapters.store.postgres.erasure import ErasurePart
from kioku.adapters.store.postgres.keys_part import KeysPart
from kioku.adapters.store.postgres.lifecycle import LifecyclePart
from kioku.adapters.store.postgres.maintenance import MaintenancePart
from kioku.adapters.store.postgres.queries import (
    and_clause,
    check_page,
    keyset_clause,
    order_clause,
    sql_int,
    where_clause,
)
from kioku.adapters.store.postgres.reads import ReadsPart
from kioku.adapters.store.postgres.replica import Replica, replica_conninfo
from kioku.adapters.store.postgres.search_part import SearchPart
from kioku.core.model import Memory
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryFilter, MemoryPatch

__all__ = ["PostgresStore", "open_postgres_store"]

_SCHEMA_LOCK: Final = f"SELECT pg_advisory_xact_lock({migrations.lock_key()})"
#: First key of the named store-wide locks of :meth:`PostgresStore.exclusive` (the second is a
#: hash of the schema and the name), apart from the schema's transaction lock.
_NAMED_CLASS: Final = migrations.LOCK_CLASS + 1
_NAMED_KEY: Final = "%s, hashtext(current_schema() || ':' || %s)"
_TRY_NAMED: Final = f"SELECT pg_try_advisory_lock({_NAMED_KEY})"
_FREE_NAMED: Final = f"SELECT pg_advisory_unlock({_NAMED_KEY})"
#: ``atomic(durable=False)``: the schema's lock, and this transaction's commit does not wait
#: for the WAL flush (``set_config(..., true)`` is ``SET LOCAL``), in one statement.
_LOCK_RELAXED: Final = f"{_SCHEMA_LOCK}, set_config('synchronous_commit', 'off', true)"
_T = TypeVar("_T")


class _Held(threading.local):
    """The connection this thread's ``atomic()`` holds, and how deep it is; the one its
    ``reading()`` holds."""

    conn: Conn | None = None
    depth: int = 0
    snapshot: Conn | None = None


class PostgresStore(
    ReadsPart,
    SearchPart,
    KeysPart,
    ActivityPart,
    ConsolidationPart,
    LifecyclePart,
    ErasurePart,
    MaintenancePart,
):
    """A :class:`~kioku.ports.store.Store` kept in a PostgreSQL schema (with pgvector)."""

    def __init__(
        self,
        url: str,
        *,
        pool_max: int = DEFAULT_POOL_MAX,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        owner: str | None = None,
        row_security: bool = False,
        read_url: str | None = None,
        schema: str | None = None,
        hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW,
    ) -> None:
        """``row_security``: enable the owner policies on the tables with ``user_id``
        (migration 8), and with ``owner`` bind every connection to that user, so that even
        a statement without a filter sees and writes that user's rows only. Without
        ``owner`` (or without ``row_security``) the connections are store-wide.
        ``read_url``: a streaming replica of the server for searches (:mod:`.replica`).
        ``schema``: each connection searches that schema, then ``public`` (set once
        connected); None: the ``search_path`` the URL and the server give.
        ``hnsw``: how each embedding model's HNSW index is built and walked."""
        self._where = redacted(url)
        self.hnsw = hnsw
        self._held = _Held()
        bound = owner if row_security else None
        self.owner = bound
        with translating(self._where):
            pool = open_pool(
                url, max_size=pool_max, timeout=timeout_s, configure=owner_settings(bound, schema)
            )
        try:
            with translating(self._where), pool.connection() as conn:
                owner_settings(None, schema)(conn)  # migrations see every row
                migrations.migrate(conn)
                if row_security:
                    enable_row_security(conn, migrations.OWNER_TABLES, _SCHEMA_LOCK)
                owner_settings(bound, schema)(conn)
        except BaseException:
            pool.close()
            raise
        self._pool: psycopg_pool.ConnectionPool | None = pool
        self._replica: Replica | None = None
        if read_url:
            self._replica = Replica(read_url, pool_max, timeout_s, owner_settings(bound, schema))

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        with self._reading() as conn:
            return migrations.schema_version(conn)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        replica, self._replica = self._replica, None
        if replica is not None:
            replica.close()
        if pool is not None:
            pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self._where!r})"

    # -- transactions ------------------------------------------------------------------

    def _open_pool(self) -> psycopg_pool.ConnectionPool:
        if self._pool is None:
            raise StoreError(f"the store {self._where} is closed", hint="open it again")
        return self._pool

    def _atomic_depth(self) -> int:
        return self._held.depth

    @contextmanager
    def atomic(self, *, durable: bool = True) -> Iterator[None]:
        """One transaction for everything inside; re-entrant.

        The outermost level takes the schema's advisory lock and commits at the end, or rolls
        back on an exception. Inner levels are savepoints: an exception that leaves an inner
        level undoes only that level.

        ``durable=False`` on the outermost level turns ``synchronous_commit`` off for this
        transaction only (``SET LOCAL``): the commit returns without waiting for the WAL to
        reach the disk, so a server crash in the next moments may lose it, whole. Inner levels
        join the transaction as it is.
        """
        held = self._held
        if held.conn is not None:
            held.depth += 1
            try:
                with translating(self._where), held.conn.transaction():
                    yield
            finally:
                held.depth -= 1
            return
        with translating(self._where), self._open_pool().connection() as conn:
            held.conn, held.depth = conn, 1
            try:
                with conn.transaction():
                    conn.execute(_SCHEMA_LOCK if durable else _LOCK_RELAXED)
                    yield
            finally:
                held.conn, held.depth = None, 0

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """Try to take the store-wide lock ``name`` for the block, without waiting: yields
        True when this process holds it, False when another one does.

        A session-level advisory lock of the server, keyed on the schema and ``name``, held
        by a connection kept out of the pool for the block: every process and machine using
        this schema sees it, and the server releases it when the holder's connection ends (a
        process killed mid-way leaves no lock behind). Refused inside ``atomic()``."""
        if self._held.conn is not None:
            raise StoreError(
                f"the lock {name!r} cannot be taken inside a transaction",
                hint="take it before atomic()",
            )
        pool = self._open_pool()
        with translating(self._where), pool.connection() as conn:
            row = conn.execute(_TRY_NAMED, (_NAMED_CLASS, name)).fetchone()
            taken = bool(row is not None and row[0])
            try:
                yield taken
            finally:
                if taken:
                    try:
                        conn.execute(_FREE_NAMED, (_NAMED_CLASS, name))
                    except psycopg.Error:
                        conn.close()  # the server frees the lock, the pool drops the connection

    @contextmanager
    def _writing(self) -> Iterator[Conn]:
        with self.atomic():
            conn = self._held.conn
            assert conn is not None
            with translating(self._where):
                yield conn

    @property
    def parallel_search(self) -> bool:
        """True outside this thread's ``atomic()`` and ``reading()``: each search then takes
        a pooled connection (or the replica's) of its own."""
        held = self._held
        return held.conn is None and held.snapshot is None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One snapshot for every read inside (a read-only transaction on one connection);
        searches a read replica answers still go to the replica, as they do outside."""
        held = self._held
        if held.conn is not None or held.snapshot is not None:
            yield
            return
        with self._reading() as conn:
            held.snapshot = conn
            try:
                yield
            finally:
                held.snapshot = None

    @contextmanager
    def _reading(self) -> Iterator[Conn]:
        """A consistent snapshot for multi-query reads (inside ``atomic()``, its own; inside
        ``reading()``, that one)."""
        held = self._held.conn or self._held.snapshot
        if held is not None:
            with translating(self._where):
                yield held
            return
        pool = self._open_pool()
        with translating(self._where), pool.connection() as conn, snapshot(conn):
            yield conn

    def _replica_status(self) -> dict[str, object] | None:
        return None if self._replica is None else self._replica.status()

    def _searching(self, work: Callable[[Conn], _T]) -> _T:
        """``work`` (a search read) on the read replica when there is one, outside
        ``atomic()``; else, or when the replica fails, as :meth:`_reading` does."""
        replica = self._replica
        if replica is None or self._held.conn is not None:
            with self._reading() as conn:
                return work(conn)
        self._open_pool()  # a closed store says so
        return replica.run(work, self._reading)

    # -- writes ------------------------------------------------------------------------

    def add(self, memory: Memory) -> None:
        self.add_many([memory])

    def add_many(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        with self._writing() as conn:
            writes.insert_memories(conn, memories, self.hnsw)

    def update(self, memory_id: str, patch: MemoryPatch) -> bool:
        prepared = writes.prepare_update(patch)
        with self._writing() as conn:
            return prepared.run(conn, memory_id, self.hnsw)

    def delete(self, memory_id: str) -> bool:
        return self.delete_many([memory_id]) > 0

    def delete_many(self, memory_ids: Sequence[str]) -> int:
        with self._writing() as conn:
            return writes.delete_memories(conn, memory_ids)

    def mark_recalled(self, memory_ids: Sequence[str], at: datetime | None = None) -> int:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        moment = datetime.now(UTC) if at is None else aware("at", at)
        with self._writing() as conn:
            return conn.execute(
                "UPDATE memories SET recalled_since_last_batch = TRUE, updated_at = %s, "
                "last_access_utc = GREATEST(last_access_utc, %s) "
                "WHERE archived_at IS NULL AND id = ANY(%s::text[])",
                (writes.now_text(), moment.timestamp(), ids),
            ).rowcount

    def set_state(self, key: str, value: str) -> None:
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO state (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- reads -------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory | None:
        hits = self.get_many([memory_id])
        return hits[0] if hits else None

    def get_many(self, memory_ids: Sequence[str]) -> builtins.list[Memory]:
        """The memories that exist among ``memory_ids``, in the order asked, once each."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        with self._reading() as conn:
            found = conn.execute(
                f"{SELECT_MEMORIES} WHERE id = ANY(%s::text[])",
                (ids,),
            ).fetchall()
            by_id = {m.id: m for m in writes.decode_rows(conn, found)}
        return [by_id[i] for i in ids if i in by_id]

    def list(self, flt: MemoryFilter) -> builtins.list[Memory]:
        check_page(flt.limit, flt.offset)
        where, params = where_clause(flt)
        limit = None if flt.limit is None else sql_int(flt.limit)
        with self._reading() as conn:
            found = conn.execute(
                f"{SELECT_MEMORIES}{where}{order_clause(flt.order)} LIMIT %s OFFSET %s",
                (*params, limit, sql_int(flt.offset)),
            ).fetchall()
            return writes.decode_rows(conn, found)

    def iter(self, flt: MemoryFilter, batch_size: int = 1000) -> Iterator[Memory]:
        """Pages by key (``(order key, id)`` after the last row), not by offset, so rows
        added or removed between pages never cause skips or repeats of the others."""
        check_page(flt.limit, flt.offset)
        if isinstance(batch_size, bool) or batch_size < 1:
            raise ValidationError("batch_size", batch_size, "a positive integer")
        where, params = where_clause(flt)
        key, after_clause = keyset_clause(flt.order)
        order = order_clause(flt.order)
        remaining = flt.limit
        offset = sql_int(flt.offset)
        after: tuple[object, str] | None = None
        while remaining is None or remaining > 0:
            size = batch_size if remaining is None else min(batch_size, remaining)
            clause, values = where, builtins.list(params)
            if after is not None:
                clause = f"{where} AND {after_clause}" if where else f" WHERE {after_clause}"
                values.extend(after)
            with self._reading() as conn:
                found = conn.execute(
                    f"{SELECT_MEMORIES}{clause}{order} LIMIT %s OFFSET %s",
                    (*values, size, offset),
                ).fetchall()
                page = writes.decode_rows(conn, found)
            yield from page
            if len(found) < size:
                return
            after = (found[-1][key], str(found[-1][0]))
            offset = 0
            if remaining is not None:
                remaining -= len(found)

    def count(self, flt: MemoryFilter) -> int:
        """How many memories match; ``limit``, ``offset`` and ``order`` are ignored."""
        where, params = where_clause(flt)
        with self._reading() as conn:
            row = conn.execute(f"SELECT COUNT(*) FROM memories{where}", params).fetchone()
        return 0 if row is None else int(str(row[0]))

    def source_ids(self, flt: MemoryFilter) -> set[str]:
        scope, params = and_clause(flt)
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT DISTINCT unnest(source_ids) FROM memories "
                f"WHERE cardinality(source_ids) > 0{scope}",
                params,
            ).fetchall()
        return {str(row[0]) for row in rows}

    def same_text(self, trigger: str, content: str, flt: MemoryFilter) -> builtins.list[str]:
        scope, params = and_clause(flt)
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT id FROM memories WHERE trigger = %s AND content = %s{scope} ORDER BY id",
                (trigger, content, *params),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def referencing(self, memory_id: str) -> builtins.list[str]:
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT source_id FROM relations WHERE target_id = %s ORDER BY source_id",
                (memory_id,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def referencing_many(self, memory_ids: Sequence[str]) -> dict[str, builtins.list[str]]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, builtins.list[str]] = {}
        if not ids:
            return found
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT target_id, source_id FROM relations WHERE target_id = ANY(%s::text[]) "
                "ORDER BY target_id, source_id",
                (ids,),
            ).fetchall()
        for target, source in rows:
            found.setdefault(str(target), []).append(str(source))
        return found

    def get_state(self, key: str) -> str | None:
        with self._reading() as conn:
            row = conn.execute("SELECT value FROM state WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    # -- vectors -----------------------------------------------------------------------

    def vector_search(
        self, model: str, query: Sequence[float], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        return self._searching(
            lambda conn: vectors.search(conn, model, query, flt, limit, self.hnsw)
        )

    def save_vector_cache(self, model: str, *, wait: bool = False) -> None:
        """Nothing to do: the HNSW index is the cache, kept by PostgreSQL itself."""

    def embedding_models(self, flt: MemoryFilter) -> dict[str | None, int]:
        with self._reading() as conn:
            return vectors.embedding_models(conn, flt)


def open_postgres_store(
    url: str,
    *,
    pool_max: int = DEFAULT_POOL_MAX,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    owner: str | None = None,
    row_security: bool = False,
    read_url: str | None = None,
    hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW,
) -> PostgresStore:
    """Open (creating and migrating the schema as needed) the PostgreSQL store at ``url``."""
    return PostgresStore(
        url,
        pool_max=pool_max,
        timeout_s=timeout_s,
        owner=owner,
        row_security=row_security,
        read_url=read_url,
        hnsw=hnsw,
    )


def open_postgres_schema(
    url: str,
    schema: str,
    *,
    pool_max: int = DEFAULT_POOL_MAX,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    owner: str | None = None,
    row_security: bool = False,
    read_url: str | None = None,
    hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW,
) -> PostgresStore:
    """Open the store kept in ``schema`` of the server at ``url``, creating the schema when
    it is missing. Each of its connections, on the server and on ``read_url`` (a read
    replica: nothing is created there), sets its ``search_path`` to ``schema``, then
    ``public`` (where pgvector is usually installed), once connected: no startup parameter,
    so a connection pooler in session mode (PgBouncer) sits in between unchanged.
    ``owner``, ``row_security``, ``read_url`` and ``hnsw``: as :class:`PostgresStore`."""
    create_schema(url, schema, timeout_s)
    return PostgresStore(
        url,
        pool_max=pool_max,
        timeout_s=timeout_s,
        owner=owner,
        row_security=row_security,
        read_url=replica_conninfo(read_url) if read_url else None,
        schema=schema,
        hnsw=hnsw,
    )
