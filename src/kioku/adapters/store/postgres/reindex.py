"""Each model's HNSW index built again with the current settings, in place (``kioku reindex``).

An index keeps the ``m``, ``ef_construction`` and type (``vector`` or ``halfvec``) it was built
with; a change of ``[store] hnsw_*`` applies to indexes built afterwards. :func:`reindex`
compares each registered model's index (read from the server's catalogue) with what the
settings ask for, and builds the ones that differ:

1. ``CREATE INDEX CONCURRENTLY`` of a second index, ``<name>_next``, beside the one in use:
   searches go on walking the old index and writes go on (each new vector enters both).
   A build that fails drops what it began; one that was interrupted (a killed process, a
   lost connection) leaves an invalid ``<name>_next`` behind, which the next run drops first.
2. One short transaction, holding the schema's writer lock like every kioku write: drop the
   old index, rename the new one to the name searches look for, record it in
   ``vector_indexes``. A search that starts after it commits walks the new index.

Where the settings ask for no index (``hnsw_type = "vector"`` for a model past 2,000 values),
the old index is dropped and the model is searched exactly. Where they ask for one that the
model had none of (a model past 2,000 values registered before ``halfvec``), it is built.
One reindex runs at a time per schema (a session-level advisory lock, :meth:`exclusive`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from typing import Final

import psycopg
from psycopg import sql

from kioku.adapters.store.postgres import migrations
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.vectors import (
    HnswSettings,
    build_memory_wanted,
    index_kind,
    index_name,
    index_statement,
)
from kioku.errors import StoreError, ValidationError
from kioku.ports.store_records import VectorIndexReport

__all__ = ["POLL_SECONDS", "Progress", "describe", "reindex"]

#: pgvector's own defaults, for an index built without ``WITH (...)``.
_PGVECTOR_M: Final = 16
_PGVECTOR_EF_CONSTRUCTION: Final = 64
_NEXT: Final = "_next"

_REGISTERED: Final = (
    "SELECT r.model, r.dim, (SELECT count(*) FROM memory_vectors AS v "
    "WHERE v.model = r.model AND v.dim = r.dim) FROM vector_indexes AS r "
    'ORDER BY r.model COLLATE "C", r.dim'
)
_INDEX: Final = (
    "SELECT c.opcname, i.reloptions FROM pg_index AS x "
    "JOIN pg_class AS i ON i.oid = x.indexrelid "
    "JOIN pg_opclass AS c ON c.oid = x.indclass[0] "
    "WHERE x.indexrelid = to_regclass(%s)"
)

Built = tuple[str, int, int] | None  # (type, m, ef_construction), or None: no index
#: ``progress(label, done, total)``: what a build is doing (the model and the server's phase)
#: and how far it is, in blocks of the table.
Progress = Callable[[str, int, int], None]
#: Seconds between two readings of the server's progress report while an index is built.
POLL_SECONDS: Final = 1.0
_PROGRESS: Final = (
    "SELECT phase, blocks_done, blocks_total FROM pg_stat_progress_create_index WHERE pid = %s"
)


def describe(built: Built) -> str:
    """``"hnsw vector m=32 ef_construction=200"``, or ``"exact"`` for no index."""
    if built is None:
        return "exact"
    kind, m, efc = built
    return f"hnsw {kind} m={m} ef_construction={efc}"


def _current(conn: Conn, name: str) -> Built:
    """What the index ``name`` holds and how it was built, from the catalogue."""
    row = conn.execute(_INDEX, (name,)).fetchone()
    if row is None:
        return None
    kind = str(row[0]).removesuffix("_cosine_ops")
    listed = row[1] if isinstance(row[1], list) else []
    options = dict(str(option).partition("=")[::2] for option in listed)
    return (
        kind,
        int(options.get("m", _PGVECTOR_M)),
        int(options.get("ef_construction", _PGVECTOR_EF_CONSTRUCTION)),
    )


def _wanted(conn: Conn, dim: int, hnsw: HnswSettings) -> Built:
    kind = index_kind(conn, dim, hnsw)
    return None if kind is None else (kind, hnsw.m, hnsw.ef_construction)


@contextmanager
def _watching(
    connection: Callable[[], AbstractContextManager[Conn]],
    pid: int,
    label: str,
    progress: Progress | None,
) -> Iterator[None]:
    """While the block runs, report every :data:`POLL_SECONDS` what the server says of the
    index build of backend ``pid``, from a connection of its own (a reading that fails, such
    as a pool with no connection to spare, ends the reports, not the build)."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        with suppress(Exception), connection() as watcher:
            while not stop.wait(POLL_SECONDS):
                row = watcher.execute(_PROGRESS, (pid,)).fetchone()
                if row is not None:
                    progress(f"{label}: {row[0]}", int(str(row[1])), int(str(row[2])))

    thread = threading.Thread(target=watch, name="kioku-reindex-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _build_next(
    conn: Conn,
    model: str,
    dim: int,
    wanted: Built,
    hnsw: HnswSettings,
    watching: Callable[[], AbstractContextManager[None]],
) -> str:
    """Build ``<name>_next`` concurrently (``conn``: autocommit), inside ``watching()``; its
    name."""
    name = index_name(model, dim) + _NEXT
    drop = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name))
    conn.execute(drop)
    if wanted is None:
        return name
    memory = build_memory_wanted(conn, model, dim, wanted[0], hnsw)
    if memory is not None:
        conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (f"{memory}MB",))
    try:
        with watching():
            conn.execute(index_statement(name, wanted[0], model, dim, hnsw, concurrently=True))
    except BaseException:
        # A failed build leaves an invalid index that writes would go on keeping up to date.
        with suppress(psycopg.Error):
            conn.execute(drop)
        raise
    finally:
        if memory is not None:
            with suppress(psycopg.Error):
                conn.execute("RESET maintenance_work_mem")
    return name


def _swap(conn: Conn, model: str, dim: int, built_next: str | None) -> None:
    """Put the new index (None: none) in the old one's place, in one transaction."""
    name = index_name(model, dim)
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({migrations.lock_key()})")
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
        if built_next is not None:
            conn.execute(
                sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                    sql.Identifier(built_next), sql.Identifier(name)
                )
            )
        conn.execute(
            "UPDATE vector_indexes SET index_name = %s WHERE model = %s AND dim = %s",
            (None if built_next is None else name, model, dim),
        )


def reindex(
    connection: Callable[[], AbstractContextManager[Conn]],
    exclusive: Callable[[str], AbstractContextManager[bool]],
    hnsw: HnswSettings,
    model: str | None = None,
    *,
    force: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> list[VectorIndexReport]:
    """Build again every registered model's index (``model``: only its own) whose type,
    ``m`` or ``ef_construction`` differ from ``hnsw`` (``force``: every one). ``connection``
    lends an autocommit connection outside any transaction; ``exclusive`` takes the
    store-wide lock of that name without waiting. ``progress`` hears of each build as it
    starts (``done`` 0) and ends (``done == total``), and in between what the server reports
    of it. A ``dry_run`` only reads, and runs beside a reindex that builds."""
    if dry_run:
        with connection() as conn:
            return list(_reindex(conn, connection, hnsw, model, force, True, _quiet))
    with exclusive("reindex") as taken:
        if not taken:
            raise StoreError(
                "another `kioku reindex` is building this store's indexes",
                hint="wait for it to finish, then run this again",
            )
        with connection() as conn:
            return list(_reindex(conn, connection, hnsw, model, force, False, progress or _quiet))


def _quiet(label: str, done: int, total: int) -> None:
    """No progress reports."""


def _reindex(
    conn: Conn,
    connection: Callable[[], AbstractContextManager[Conn]],
    hnsw: HnswSettings,
    model: str | None,
    force: bool,
    dry_run: bool,
    progress: Progress,
) -> Iterator[VectorIndexReport]:
    every = [(str(m), int(str(d)), int(str(n))) for m, d, n in conn.execute(_REGISTERED).fetchall()]
    registered = [r for r in every if model is None or r[0] == model]
    if model is not None and not registered:
        known = ", ".join(sorted({r[0] for r in every}))
        raise ValidationError(
            "model",
            model,
            "a model this store has vectors of" + (f": {known}" if known else ""),
            hint="`kioku reindex` without --model rebuilds every model's index",
        )
    for name, dim, count in registered:
        before = _current(conn, index_name(name, dim))
        wanted = _wanted(conn, dim, hnsw)
        due = force or before != wanted
        if dry_run or not due:
            yield VectorIndexReport(name, dim, count, describe(before), describe(wanted), due)
            continue
        started = time.perf_counter()
        label = f"{name} ({dim})"
        progress(label, 0, 1)
        watched = None if progress is _quiet else progress
        watching = partial(_watching, connection, conn.info.backend_pid, label, watched)
        built_next = _build_next(conn, name, dim, wanted, hnsw, watching)
        _swap(conn, name, dim, None if wanted is None else built_next)
        seconds = time.perf_counter() - started
        progress(label, 1, 1)
        after = _current(conn, index_name(name, dim))
        yield VectorIndexReport(name, dim, count, describe(before), describe(after), True, seconds)
