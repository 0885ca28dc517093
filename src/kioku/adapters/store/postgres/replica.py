"""Search reads on a streaming replica (a hot standby) of the PostgreSQL store.

With ``[store] read_url`` the store keeps a second pool, on the replica, for the reads that
only rank candidates: lexical search, the search of originals, the known terms, the term
document counts and vector search (see :meth:`.store.PostgresStore._searching`). Everything
else, writes and the reads that return memories, stays on the primary, so an id found on a
lagging replica is read back from the primary (one deleted there meanwhile drops out).

The replica never stops the store from working. Opening the store does not fail when the
replica is down: a warning is logged and searches use the primary. When a search on the
replica fails with a connection error (or no replica connection comes free in time), it runs
again on the primary, one warning is logged, and the replica is left alone for
:data:`BACKOFF_S` seconds, so a dead replica does not cost a timeout on every call; the next
search after that tries it again. A search is given as long on the replica as a connection
is waited for (the pool's timeout, at most :data:`CONNECT_TIMEOUT_S`): one still running
then (a hung or overloaded replica) is cancelled by the replica's ``statement_timeout`` and
treated the same way. A search the standby cancels because replay had to remove rows it
was reading (a recovery conflict) runs again on the primary without the back-off. A
replica that lacks a table, column or function the query names (it has not replayed the
store's schema or its latest migration yet, or it is not a replica of this server) is
treated as a failed one. Any other error is raised, as on the primary.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Final, TypeVar

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors

from kioku.adapters.store.postgres.connection import (
    Conn,
    first_line,
    open_pool,
    redacted,
    snapshot,
    translating,
)
from kioku.errors import StoreError

__all__ = ["BACKOFF_S", "CONNECT_TIMEOUT_S", "Replica", "replica_conninfo"]

#: Seconds the replica is left alone after it failed.
BACKOFF_S: Final = 30.0
#: The longest wait for a replica connection (to connect, or for one to come free), and the
#: longest a search may run on the replica.
CONNECT_TIMEOUT_S: Final = 5.0
#: The replica's limit for each statement of the transaction (set_config: a parameter).
_TIME_LIMIT: Final = "SELECT set_config('statement_timeout', %s, true)"
#: What a replica that is behind the primary's schema answers: the search runs on the
#: primary, which raises the error itself if the query is at fault.
_BEHIND: Final = (
    pg_errors.UndefinedTable,
    pg_errors.UndefinedColumn,
    pg_errors.UndefinedFunction,
    pg_errors.UndefinedObject,
    pg_errors.InvalidSchemaName,
)

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


def replica_conninfo(read_url: str) -> str:
    """``read_url`` as a libpq connection string; a URL libpq cannot read is a StoreError
    naming ``store.read_url``."""
    from psycopg.conninfo import make_conninfo

    try:
        return make_conninfo(read_url)
    except psycopg.ProgrammingError as exc:
        raise StoreError(
            f"the read replica's URL {redacted(read_url)} cannot be read: {first_line(exc)}",
            hint="fix store.read_url (KIOKU_STORE_READ_URL), or leave it empty",
        ) from None


class Replica:
    """The pool on the read replica at ``url``, opened now if the replica answers, else on
    the first search after the back-off; ``configure`` runs on each new connection (the
    primary's owner settings, so row security works the same)."""

    def __init__(
        self,
        url: str,
        pool_max: int,
        timeout_s: float,
        configure: Callable[[Conn], None],
        *,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        self._url = url
        self.where = redacted(url)
        self._pool_max = pool_max
        self._timeout = max(1.0, min(timeout_s, CONNECT_TIMEOUT_S))
        self._configure = configure
        self._backoff = backoff_s
        self._lock = threading.Lock()
        self._pool: psycopg_pool.ConnectionPool | None = None
        self._retry_at = 0.0  # time.monotonic() before which the replica is not tried
        self._opening = False
        self._closed = False
        self._usable()

    def status(self) -> dict[str, object]:
        """What ``kioku doctor`` reports of the replica, asked on a connection of its own
        (whatever the back-off): whether it answers, whether it is a standby (in recovery),
        how long ago it replayed its last transaction, and the store's schema version there."""
        from kioku.adapters.store.postgres import migrations

        seconds = max(2, round(self._timeout))
        try:
            with psycopg.connect(self._url, autocommit=True, connect_timeout=seconds) as conn:
                self._configure(conn)
                row = conn.execute(
                    "SELECT pg_is_in_recovery(), "
                    "EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8"
                ).fetchone()
                version = migrations.schema_version(conn)
        except psycopg.Error as exc:
            return {"where": self.where, "reachable": False, "error": first_line(exc)}
        standby, lag = (False, None) if row is None else (bool(row[0]), row[1])
        return {
            "where": self.where,
            "reachable": True,
            "standby": standby,
            "replay_age_s": None if lag is None else round(float(str(lag)), 3),
            "schema_version": version,
        }

    def close(self) -> None:
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            pool.close()

    def run(
        self, work: Callable[[Conn], _T], primary: Callable[[], AbstractContextManager[Conn]]
    ) -> _T:
        """``work`` in a read-only, repeatable-read transaction on the replica; on the
        primary (a ``primary()`` connection) when the replica is avoided or fails to answer."""
        pool = self._usable()
        if pool is not None:
            failure: psycopg.Error | None = None
            with translating(self.where):
                try:
                    with pool.connection() as conn, snapshot(conn):
                        conn.execute(_TIME_LIMIT, (f"{round(self._timeout * 1000)}ms",))
                        return work(conn)
                except pg_errors.SerializationFailure as exc:  # a recovery conflict
                    _log.info("a search on %s was cancelled (%s)", self.where, first_line(exc))
                    failure = None
                except (psycopg.OperationalError, *_BEHIND) as exc:  # PoolTimeout, QueryCanceled
                    failure = exc
            if failure is not None:
                self._failed(failure, pool)
        with primary() as conn:
            return work(conn)

    def _usable(self) -> psycopg_pool.ConnectionPool | None:
        """The replica's pool; None while it is avoided (or another thread is opening it)."""
        with self._lock:
            if self._pool is not None or self._closed:
                return self._pool
            if self._opening or time.monotonic() < self._retry_at:
                return None
            self._opening = True
        pool = None
        try:
            pool = self._open()
        finally:
            pool = self._keep(pool)
        return pool

    def _keep(self, pool: psycopg_pool.ConnectionPool | None) -> psycopg_pool.ConnectionPool | None:
        """Keep the pool just opened, unless the store was closed meanwhile."""
        with self._lock:
            self._opening = False
            closed = self._closed
            if not closed:
                self._pool = pool
        if closed and pool is not None:
            pool.close()
            return None
        return pool

    def _open(self) -> psycopg_pool.ConnectionPool | None:
        seconds = max(2, round(self._timeout))  # libpq's least connect_timeout
        try:
            # One plain connection first: a refused one fails at once, where the pool would
            # keep retrying until its timeout.
            with psycopg.connect(self._url, autocommit=True, connect_timeout=seconds):
                pass
            return open_pool(
                self._url,
                max_size=self._pool_max,
                timeout=self._timeout,
                configure=self._configure,
                connect_timeout=seconds,
            )
        except (psycopg.Error, StoreError) as exc:
            self._failed(exc, None)
            return None

    def _failed(self, exc: BaseException | None, pool: psycopg_pool.ConnectionPool | None) -> None:
        """Avoid the replica for the back-off and say so, once per failure: a thread whose
        pool another thread already dropped says nothing."""
        with self._lock:
            if pool is not None and pool is not self._pool:
                return
            self._pool = None
            self._retry_at = time.monotonic() + self._backoff
        if pool is not None:
            pool.close()
        _log.warning(
            "the read replica %s failed (%s): searches use the primary for %g s",
            self.where,
            first_line(exc) if exc is not None else "no detail",
            self._backoff,
        )
