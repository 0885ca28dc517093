"""The SQLite store's transactions: ``atomic()`` and the contexts its methods read and write in.

A mixin of :class:`.store.SqliteStore`. One connection in autocommit mode is shared by threads
under a re-entrant lock. The outermost ``atomic()`` takes the write lock (``BEGIN IMMEDIATE``)
and commits at the end or rolls back on an exception; inner levels are savepoints, so an
exception that leaves an inner level undoes only that level. A read outside any transaction
runs in a snapshot of its own (``BEGIN`` ... ``ROLLBACK``).

A vector search that finds the lock held by another thread does not wait for it: it reads
through a second connection, opened when first needed, in a snapshot of its own
(:meth:`TransactionsPart._beside`). So a recall's vector search can run on its own thread while
the recall's lexical search holds the lock (:attr:`TransactionsPart.parallel_search`).

The contexts are small classes rather than generator-based context managers, which cost more
to enter and leave: every remembered turn goes through several of them.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from contextlib import suppress
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final

from kioku.adapters.store.sqlite.connection import connect, not_utf8, translate, translating
from kioku.adapters.store.sqlite.vector_version import read_version
from kioku.errors import StoreError

if TYPE_CHECKING:
    from kioku.adapters.store.sqlite import vectors
    from kioku.adapters.store.sqlite.writes import VectorDelta

__all__ = ["ThreadState", "TransactionsPart"]

_BEGIN: Final = "BEGIN IMMEDIATE"


class ThreadState(threading.local):
    """What one thread is doing with the store."""

    #: Levels of ``atomic()`` and ``reading()`` this thread is inside.
    held: int = 0
    #: This thread's reads go through the second connection (inside :meth:`_beside`).
    side: bool = False


def _translated(exc: BaseException | None, path: Path) -> Exception | None:
    """The kioku error for a sqlite3 error or text SQLite cannot take (else None)."""
    if isinstance(exc, sqlite3.Error):
        return translate(exc, path)
    if isinstance(exc, UnicodeEncodeError):
        return not_utf8(exc)
    return None


class _Atomic:
    """One level of ``atomic()``: see :class:`TransactionsPart`."""

    __slots__ = ("_conn", "_depth", "_savepoint", "_store")

    def __init__(self, store: TransactionsPart) -> None:
        self._store = store

    def __enter__(self) -> None:
        self._begin()

    def _begin(self) -> sqlite3.Connection:
        store = self._store
        store._lock.acquire()
        try:
            conn = store._connection()
            depth = store._depth
            savepoint = f"kioku_{depth}"
            try:
                conn.execute(_BEGIN if depth == 0 else f"SAVEPOINT {savepoint}")
            except sqlite3.Error as exc:
                raise translate(exc, store._path) from exc
        except BaseException:
            store._lock.release()
            raise
        if depth == 0:
            store._pending = []
        store._depth = depth + 1
        store._local.held += 1
        self._conn, self._depth, self._savepoint = conn, depth, savepoint
        return conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store = self._store
        try:
            store._depth = self._depth
            store._local.held -= 1
            if exc is None:
                store._finish(self._conn, self._depth, self._savepoint)
            else:
                store._undo(self._conn, self._depth, self._savepoint)
        finally:
            store._lock.release()


class _Writing(_Atomic):
    """``atomic()`` that hands out the connection and turns sqlite3 errors into kioku ones."""

    __slots__ = ()

    def __enter__(self) -> sqlite3.Connection:  # type: ignore[override]
        return self._begin()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        error = _translated(exc, self._store._path)
        if error is None:
            super().__exit__(exc_type, exc, tb)
            return
        super().__exit__(type(error), error, tb)
        raise error from (None if isinstance(exc, UnicodeEncodeError) else exc)


class _Reading:
    """A snapshot for multi-query reads, or the transaction already open; no write lock. On
    the second connection (and under its lock) when ``side`` (see
    :meth:`TransactionsPart._beside`)."""

    __slots__ = ("_began", "_conn", "_lock", "_store")

    def __init__(self, store: TransactionsPart, side: bool = False) -> None:
        self._store = store
        self._lock = store._side_lock if side else store._lock

    def __enter__(self) -> sqlite3.Connection:
        store = self._store
        self._lock.acquire()
        try:
            conn = (
                store._side_connection() if self._lock is store._side_lock else store._connection()
            )
            began = not conn.in_transaction
            if began:
                try:
                    conn.execute("BEGIN")
                except sqlite3.Error as exc:
                    raise translate(exc, store._path) from exc
        except BaseException:
            self._lock.release()
            raise
        self._conn, self._began = conn, began
        return conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._began:
                with suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
        finally:
            self._lock.release()
        error = _translated(exc, self._store._path)
        if error is not None:
            raise error from (None if isinstance(exc, UnicodeEncodeError) else exc)


class _Beside:
    """:meth:`TransactionsPart._beside`."""

    __slots__ = ("_set", "_store")

    def __init__(self, store: TransactionsPart) -> None:
        self._store = store

    def __enter__(self) -> bool:
        store = self._store
        local = store._local
        self._set = False
        if local.side:
            return True
        if store._lock.acquire(blocking=False):  # free, or held by this thread
            store._lock.release()
            return False
        local.side = self._set = True
        return True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._set:
            self._store._local.side = False


class _Snapshot:
    """``reading()``: one snapshot for every read inside; a vector cache file a search inside
    has to write is written when it ends, outside any transaction."""

    __slots__ = ("_outer", "_reading", "_store")

    def __init__(self, store: TransactionsPart) -> None:
        self._store = store

    def __enter__(self) -> None:
        store = self._store
        store._lock.acquire()
        try:
            self._outer = store._snapshot
            store._snapshot = True
            self._reading = _Reading(store)
            try:
                self._reading.__enter__()
            except BaseException:
                store._snapshot = self._outer
                raise
        except BaseException:
            store._lock.release()
            raise
        store._local.held += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store = self._store
        store._local.held -= 1
        try:
            try:
                self._reading.__exit__(exc_type, exc, tb)
            finally:
                store._snapshot = self._outer
            if exc is None:
                deferred, store._deferred = store._deferred, None
                if deferred is not None and not self._outer:
                    store._persist(deferred)
        finally:
            store._lock.release()


class TransactionsPart:
    """Transactions of :class:`.store.SqliteStore` (whose ``__init__`` sets these fields)."""

    _path: Path
    _busy_timeout_ms: int
    _lock: threading.RLock
    _depth: int
    _local: ThreadState
    #: The second connection (None until a search needs it) and its lock.
    _side_conn: sqlite3.Connection | None
    _side_lock: threading.RLock
    #: This transaction's inserts with vectors, to carry the caches over (None: undone).
    _pending: list[VectorDelta] | None
    # model -> the vectors of that model (None: it has none) as of a vectors_version.
    _vectors: dict[str, tuple[int, vectors.ModelVectors | None]]
    _commits: int
    _conn: sqlite3.Connection | None
    # Inside reading(); the vector cache a search inside it has yet to write to its file.
    _snapshot: bool
    _deferred: tuple[int, vectors.ModelVectors] | None

    def _persist(self, cached: tuple[int, vectors.ModelVectors]) -> None:
        raise NotImplementedError

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the store {self._path} is closed", hint="open it again")
        return self._conn

    def _side_connection(self) -> sqlite3.Connection:
        """The second connection, opened on first use (under ``_side_lock``)."""
        if self._conn is None:
            raise StoreError(f"the store {self._path} is closed", hint="open it again")
        if self._side_conn is None:
            self._side_conn = connect(self._path, self._busy_timeout_ms)
        return self._side_conn

    def _close_side(self) -> None:
        with self._side_lock:
            conn, self._side_conn = self._side_conn, None
            if conn is not None:
                with suppress(sqlite3.Error):
                    conn.close()

    def _beside(self) -> _Beside:
        """Inside, this thread's reads (``_reading()``) go through the second connection when
        another thread holds the store's lock, instead of waiting for it; the context's value
        says whether they do. Such reads see the last commit, never a transaction still open
        on the other thread, and take no write lock."""
        return _Beside(self)

    def atomic(self, *, durable: bool = True) -> _Atomic:
        """One transaction for everything inside; re-entrant.

        The outermost level takes the write lock (``BEGIN IMMEDIATE``) and commits at the
        end or rolls back on an exception. Inner levels are savepoints: an exception that
        leaves an inner level undoes only that level. Other threads wait until it ends.
        ``durable`` changes nothing here: every commit is made with ``synchronous = NORMAL``
        in WAL mode (not lost when the process dies; the last ones may be lost when the
        machine does), which is what ``durable=False`` allows.
        """
        return _Atomic(self)

    def _undo(self, conn: sqlite3.Connection, depth: int, savepoint: str) -> None:
        self._pending = None
        # Errors while undoing must not hide the error that caused the undo.
        with suppress(sqlite3.Error):
            if not conn.in_transaction:
                return  # SQLite already rolled everything back
            if depth == 0:
                conn.execute("ROLLBACK")
            else:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")

    def _finish(self, conn: sqlite3.Connection, depth: int, savepoint: str) -> None:
        if not conn.in_transaction:
            raise StoreError(
                f"a transaction on {self._path} was rolled back by SQLite after an error",
                hint="nothing from it was saved; retry the operation",
            )
        # Carried over only into caches this process holds (none: nothing to read or carry).
        pending = self._pending if depth == 0 and self._vectors else None
        committed: int | None = None
        try:
            with translating(self._path):
                committed = read_version(conn) if pending else None
                conn.execute("COMMIT" if depth == 0 else f"RELEASE {savepoint}")
                self._commits += depth == 0
        except StoreError:
            self._undo(conn, depth, savepoint)
            raise
        if pending and committed is not None:
            from kioku.adapters.store.sqlite.vector_delta import carry

            carry(self._vectors, pending, committed)

    def _writing(self) -> _Writing:
        """``atomic()`` handing out the connection; sqlite3 errors become kioku errors."""
        return _Writing(self)

    @property
    def parallel_search(self) -> bool:
        """Outside this thread's ``atomic()`` and ``reading()``, once numpy is loaded: a
        vector search started on another thread then reads through the second connection
        while this thread holds the lock (see :meth:`_beside`). Inside them it would not see
        this thread's snapshot or uncommitted writes; without numpy (a hook's fresh process)
        the search is pure Python (.vector_lite), which holds the GIL, so a thread would
        only add its start and a second connection."""
        return self._local.held == 0 and "numpy" in sys.modules

    def reading(self) -> _Snapshot:
        """One snapshot for every read inside (see :meth:`_reading`); a vector cache file a
        search inside has to write is written when it ends, outside any transaction."""
        return _Snapshot(self)

    def _reading(self) -> _Reading:
        """A consistent snapshot for multi-query reads; takes no write lock."""
        return _Reading(self, self._local.side)
