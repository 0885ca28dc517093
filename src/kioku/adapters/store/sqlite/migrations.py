"""Versioned, named, transactional schema migrations for the SQLite store.

The schema version lives in ``PRAGMA user_version``; each applied migration is also
recorded in ``schema_migrations``. Each migration runs inside ``BEGIN IMMEDIATE`` and
re-reads the version there, so processes that open a brand-new file at the same instant
apply every migration exactly once. A migration that fails rolls back completely: the file
stays at the previous version with its data untouched.

Version 1 is the spec's own schema (spec 000, テーブル定義), written with
``IF NOT EXISTS`` so a ``memories.db`` made by the spec's reference ``MemoryStore`` is
recognised as version 1. Version 2 adds scope, provenance, embedding metadata and a real
``relations`` table (see :mod:`kioku.adapters.store.sqlite.schema_v2`). Version 3 adds the
``usage`` table of provider token counts. Version 4 adds ``memories_fts``, the FTS5 index
of lexical search, filled from the existing memories (see
:mod:`kioku.adapters.store.sqlite.search`). Version 5 adds the lifecycle log. Version 6 adds
erasure's tombstones, its append-only audit log and the backups manifest (see
:mod:`kioku.adapters.store.sqlite.erasure`). Version 7 indexes every memory's terms again:
Japanese proper nouns (people, places, names: 田中, 東京) are lexical terms from then on.
Version 8 adds memory kinds (knowledge, procedures, profiles), cold storage of original texts
and the unified activity log (see :mod:`kioku.adapters.store.sqlite.kinds_schema`). Version 9
adds what consolidation, active forgetting, resolution propagation and the mid-term tier keep
(see :mod:`kioku.adapters.store.sqlite.consolidation_schema`). Version 10 adds the server's
API keys (see :mod:`kioku.adapters.store.sqlite.keys_schema`). Version 11 adds the change log
that lets a vector cache catch up on other writes (see
:mod:`kioku.adapters.store.sqlite.vector_version`); it starts empty, so a cache from before it
is loaded again once. Version 12 adds two partial indexes for the batch: archive counts per
scope and revival requests (see :mod:`kioku.adapters.store.sqlite.lifecycle`). Version 13 adds
an index of each session's turns in order, which recall reads around its best matches.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from kioku.adapters.store.sqlite import (
    consolidation_schema,
    erasure,
    keys_schema,
    kinds_schema,
    schema_v2,
    search,
    usage,
    vector_version,
)
from kioku.adapters.store.sqlite.connection import is_busy, is_corrupt
from kioku.core.timefmt import format_ts
from kioku.errors import KiokuError, StoreError
from kioku.records import Record

__all__ = [
    "LATEST_VERSION",
    "MIGRATIONS",
    "Migration",
    "Step",
    "applied_migrations",
    "migrate",
    "schema_version",
]

#: One step of a migration: it runs inside the migration's transaction.
Step = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Migration(Record):
    """One step of the schema's history."""

    version: int
    name: str
    steps: tuple[Step, ...]
    #: Table rebuilds run with foreign keys off and end with ``PRAGMA foreign_key_check``.
    rebuilds_tables: bool = False


def _sql_step(*statements: str) -> Step:
    """A step made of fixed SQL statements (never ``executescript``: it would commit)."""

    def run(conn: sqlite3.Connection) -> None:
        for statement in statements:
            conn.execute(statement)

    return run


def _create_lifecycle_log(conn: sqlite3.Connection) -> None:
    # Imported here: the batch's module loads numpy, which opening a store does not need.
    from kioku.adapters.store.sqlite.lifecycle import CREATE_LOG

    _sql_step(*CREATE_LOG)(conn)


#: The turns of a session in order: recall reads those around its best matches
#: (:mod:`kioku.service.recall.neighbour_terms`), and without it each read scans the owner.
SESSION_INDEX: Final = (
    "CREATE INDEX IF NOT EXISTS idx_memories_session ON memories(session_id, created_utc)",
)


#: Memories by kind first: a vector search that leaves some kinds out first reads the few
#: memories of those kinds (``KindsPart._other_kinds``); scoped by one owner and not an agent,
#: or not at all, it could not use idx_memories_scope_kind and read every row (a second at a
#: million memories).
KIND_INDEX: Final = (
    "CREATE INDEX IF NOT EXISTS idx_memories_kind ON memories(kind, user_id, agent_id)",
)


def _create_archive_indexes(conn: sqlite3.Connection) -> None:
    from kioku.adapters.store.sqlite.lifecycle import ARCHIVE_INDEXES

    _sql_step(*ARCHIVE_INDEXES)(conn)


SPEC_000_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    memory_days REAL DEFAULT 0.0,
    recalled_since_last_batch INTEGER DEFAULT 0,
    recall_count INTEGER DEFAULT 0,
    emotional_intensity INTEGER NOT NULL,
    emotional_valence TEXT NOT NULL,
    emotional_arousal INTEGER NOT NULL,
    emotional_tags TEXT,
    decay_coefficient REAL NOT NULL,
    category TEXT NOT NULL,
    keywords TEXT,
    current_level INTEGER DEFAULT 1,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB,
    relations TEXT,
    retention_score REAL,
    archived_at TEXT,
    protected INTEGER DEFAULT 0,
    revival_requested INTEGER DEFAULT 0,
    revival_requested_at TEXT
)""",
    "CREATE INDEX IF NOT EXISTS idx_retention_score ON memories(retention_score)",
    "CREATE INDEX IF NOT EXISTS idx_current_level ON memories(current_level)",
    "CREATE INDEX IF NOT EXISTS idx_archived_at ON memories(archived_at)",
    "CREATE INDEX IF NOT EXISTS idx_created ON memories(created)",
    """CREATE TABLE IF NOT EXISTS state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "spec_000_initial", (_sql_step(*SPEC_000_SCHEMA),)),
    Migration(
        2,
        "scope_provenance_relations",
        (
            schema_v2.add_missing_legacy_columns,
            schema_v2.refuse_unrepairable_rows,
            _sql_step(schema_v2.CREATE_MEMORIES_NEW),
            _sql_step(schema_v2.COPY_MEMORIES),
            schema_v2.fix_naive_created_utc,
            _sql_step(*schema_v2.CREATE_RELATIONS),
            schema_v2.move_legacy_relations,
            _sql_step(*schema_v2.SWAP_MEMORIES),
            _sql_step(*schema_v2.MEMORY_INDEXES),
        ),
        rebuilds_tables=True,
    ),
    Migration(3, "token_usage", (_sql_step(*usage.CREATE_USAGE),)),
    Migration(4, "lexical_index", (search.create_index, search.backfill)),
    Migration(5, "lifecycle_log", (_create_lifecycle_log,)),
    Migration(6, "erasure", (_sql_step(*erasure.CREATE_ERASURE), erasure.create_key)),
    Migration(7, "lexical_proper_nouns", (search.backfill,)),
    Migration(8, "memory_kinds", (_sql_step(*kinds_schema.KINDS_SCHEMA),)),
    Migration(9, "consolidation", (_sql_step(*consolidation_schema.CONSOLIDATION_SCHEMA),)),
    Migration(10, "api_keys", (_sql_step(*keys_schema.KEYS_SCHEMA),)),
    Migration(11, "vector_log", (_sql_step(*vector_version.VECTOR_LOG_SCHEMA),)),
    Migration(12, "batch_archive_indexes", (_create_archive_indexes,)),
    Migration(13, "session_index", (_sql_step(*SESSION_INDEX),)),
    Migration(14, "kind_index", (_sql_step(*KIND_INDEX),)),
)

#: The schema version this code writes and expects.
LATEST_VERSION: Final = MIGRATIONS[-1].version

_CREATE_LOG: Final = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def applied_migrations(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """``(version, name, applied_at)`` of every recorded migration, oldest first."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return []
    rows = conn.execute(
        "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def migrate(conn: sqlite3.Connection, target: int | None = None) -> list[int]:
    """Bring the database up to ``target`` (default: the latest version).

    ``conn`` must be in autocommit mode (``isolation_level=None``) and outside a
    transaction. Returns the versions this call applied (others may have been applied by
    another process meanwhile). Raises :class:`StoreError` when a migration fails; the
    database then stays at the version before it.
    """
    migrations: Sequence[Migration] = MIGRATIONS
    latest = migrations[-1].version
    goal = latest if target is None else target
    if not 0 <= goal <= latest:
        raise ValueError(f"target schema version must be from 0 to {latest}, got {goal}")
    if conn.in_transaction:
        raise StoreError("migrations cannot run inside an open transaction")
    current = schema_version(conn)
    if current > latest:
        raise StoreError(
            f"the database has schema version {current}, newer than this kioku knows ({latest})",
            hint="upgrade kioku to a version that knows this schema",
        )
    applied: list[int] = []
    for migration in migrations:
        if current < migration.version <= goal and _apply(conn, migration):
            applied.append(migration.version)
    return applied


def _apply(conn: sqlite3.Connection, migration: Migration) -> bool:
    """Apply one migration unless another process already did. True when this call did."""
    if migration.rebuilds_tables:
        # PRAGMA foreign_keys is a no-op inside a transaction: switch it around BEGIN.
        conn.execute("PRAGMA foreign_keys = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = schema_version(conn)
            if found >= migration.version:
                conn.execute("ROLLBACK")
                return False
            if found != migration.version - 1:
                raise StoreError(
                    f"cannot apply migration {migration.version} ({migration.name}) "
                    f"to a database at version {found}"
                )
            for step in migration.steps:
                step(conn)
            if migration.rebuilds_tables:
                _require_foreign_keys_ok(conn, migration)
            conn.execute(_CREATE_LOG)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, format_ts(datetime.now(UTC))),
            )
            # PRAGMA takes no parameters; the version is an int from our own table.
            conn.execute(f"PRAGMA user_version = {int(migration.version)}")
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback_quietly(conn)
            if _passes_through(exc):
                raise
            raise StoreError(
                f"schema migration {migration.version} ({migration.name}) failed: {exc}",
                hint=(
                    f"the database was left unchanged at version {migration.version - 1}; "
                    "restore a backup or fix the offending rows and open it again"
                ),
            ) from exc
        return True
    finally:
        if migration.rebuilds_tables:
            conn.execute("PRAGMA foreign_keys = ON")


def _passes_through(exc: BaseException) -> bool:
    """Errors that keep their own meaning; any other failure is a failed migration."""
    if not isinstance(exc, Exception) or isinstance(exc, KiokuError):
        return True  # interrupts, and errors that already explain themselves
    # A lock or a damaged file is reported as such by the caller's translation.
    return isinstance(exc, sqlite3.Error) and (is_busy(exc) or is_corrupt(exc))


def _rollback_quietly(conn: sqlite3.Connection) -> None:
    # A failed ROLLBACK must not hide the error that caused it; SQLite undoes the
    # transaction itself when the connection closes.
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _require_foreign_keys_ok(conn: sqlite3.Connection, migration: Migration) -> None:
    problems = conn.execute("PRAGMA foreign_key_check").fetchall()
    if problems:
        first = ", ".join(f"{row[0]} rowid {row[1]} -> {row[2]}" for row in problems[:5])
        raise StoreError(
            f"schema migration {migration.version} ({migration.name}) would leave "
            f"{len(problems)} broken references: {first}",
            hint=f"the database was left unchanged at version {migration.version - 1}",
        )
