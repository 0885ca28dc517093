"""Versioned, named, transactional schema migrations for the PostgreSQL store.

The ``schema_version`` table records every applied migration (version, name, time). Each
migration runs in one transaction that first takes a transaction-level advisory lock of the
schema, then re-reads the version: stores opening a brand-new schema at the same instant apply
every migration exactly once, and a migration that fails rolls back completely (PostgreSQL's
DDL is transactional), leaving the schema at the version before it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

import psycopg

from kioku.adapters.store.postgres import lexical
from kioku.adapters.store.postgres.schema import (
    V1_CORE,
    V2_LEXICAL,
    V3_KEYS,
    V4_ACTIVITY,
    V5_CONSOLIDATION,
    V6_LIFECYCLE,
    V7_ERASURE,
    V9_LEXICAL_SLOTS,
    V10_ARCHIVE_INDEXES,
    V11_SESSION_INDEX,
)
from kioku.core.timefmt import format_ts
from kioku.errors import KiokuError, StoreError
from kioku.records import Record

__all__ = [
    "KEY_STATE",
    "LATEST_VERSION",
    "MIGRATIONS",
    "OWNER_CHECK",
    "OWNER_TABLES",
    "Migration",
    "lock_key",
    "migrate",
    "schema_version",
]

#: One step of a migration: it runs inside the migration's transaction.
Step = Callable[[psycopg.Connection[tuple[object, ...]]], None]

#: The ``state`` row holding the store's secret key (hex) for keyed digests.
KEY_STATE: Final = "erasure_key"
#: First key of kioku's advisory locks (the second is a hash of the schema's name).
LOCK_CLASS: Final = 0x6B696F  # "kio"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Migration(Record):
    """One step of the schema's history."""

    version: int
    name: str
    steps: tuple[Step, ...]


def _sql_step(*statements: str) -> Step:
    def run(conn: psycopg.Connection[tuple[object, ...]]) -> None:
        for statement in statements:
            conn.execute(statement)

    return run


def _create_key(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    conn.execute(
        "INSERT INTO state (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
        (KEY_STATE, os.urandom(32).hex()),
    )


#: The tables that carry ``user_id``: each gets the owner policy of version 8.
OWNER_TABLES: Final = (
    "memories",
    "api_keys",
    "activity",
    "consolidation_runs",
    "resolutions",
    "midterm",
    "lifecycle_log",
)
#: A row is visible and writable when the session is store-wide (``kioku.all_users`` on) or
#: bound to the row's owner (``kioku.user_id``). An unset setting matches nothing. The
#: policies act only on tables whose row-level security is enabled ([store] row_security).
OWNER_CHECK: Final = (
    "current_setting('kioku.all_users', true) = 'on' "
    "OR user_id = current_setting('kioku.user_id', true)"
)


def _owner_policies(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    from psycopg import sql

    for table in OWNER_TABLES:
        conn.execute(
            sql.SQL("CREATE POLICY kioku_owner ON {} USING ({}) WITH CHECK ({})").format(
                sql.Identifier(table), sql.SQL(OWNER_CHECK), sql.SQL(OWNER_CHECK)
            )
        )


MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(1, "core", (_sql_step(*V1_CORE), _create_key)),
    Migration(2, "lexical search and originals", (_sql_step(*V2_LEXICAL), lexical.backfill)),
    Migration(3, "api keys", (_sql_step(*V3_KEYS),)),
    Migration(4, "activity log", (_sql_step(*V4_ACTIVITY),)),
    Migration(5, "consolidation", (_sql_step(*V5_CONSOLIDATION),)),
    Migration(6, "lifecycle log", (_sql_step(*V6_LIFECYCLE),)),
    Migration(7, "erasure audit and backups manifest", (_sql_step(*V7_ERASURE),)),
    Migration(8, "row security policies", (_owner_policies,)),
    Migration(9, "lexical sample slots", (_sql_step(*V9_LEXICAL_SLOTS),)),
    Migration(10, "batch archive indexes", (_sql_step(*V10_ARCHIVE_INDEXES),)),
    Migration(11, "session index", (_sql_step(*V11_SESSION_INDEX),)),
)

#: The schema version this code writes and expects.
LATEST_VERSION: Final = MIGRATIONS[-1].version

_CREATE_LOG: Final = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


def lock_key() -> str:
    """SQL for the two keys of this schema's advisory lock (fixed text, no input)."""
    return f"{LOCK_CLASS}, hashtext(current_schema())"


def schema_version(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """The highest applied version (0 for an empty schema)."""
    exists = conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() "
        "AND tablename = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
    return 0 if row is None else int(str(row[0]))


def migrate(conn: psycopg.Connection[tuple[object, ...]], target: int | None = None) -> list[int]:
    """Bring the schema up to ``target`` (default: the latest); the versions this call applied.

    ``conn`` must be in autocommit mode, outside a transaction.
    """
    goal = LATEST_VERSION if target is None else target
    if not 0 <= goal <= LATEST_VERSION:
        raise ValueError(f"target schema version must be from 0 to {LATEST_VERSION}, got {goal}")
    current = schema_version(conn)
    if current > LATEST_VERSION:
        raise StoreError(
            f"the database has schema version {current}, newer than this kioku knows "
            f"({LATEST_VERSION})",
            hint="upgrade kioku to a version that knows this schema",
        )
    applied: list[int] = []
    for migration in MIGRATIONS:
        if current < migration.version <= goal and _apply(conn, migration):
            applied.append(migration.version)
    return applied


def _apply(conn: psycopg.Connection[tuple[object, ...]], migration: Migration) -> bool:
    """Apply one migration unless another connection already did. True when this call did."""
    try:
        with conn.transaction():
            conn.execute(f"SELECT pg_advisory_xact_lock({lock_key()})")
            conn.execute(_CREATE_LOG)
            found = schema_version(conn)
            if found >= migration.version:
                return False
            if found != migration.version - 1:
                raise StoreError(
                    f"cannot apply migration {migration.version} ({migration.name}) "
                    f"to a database at version {found}"
                )
            for step in migration.steps:
                step(conn)
            conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (%s, %s, %s)",
                (migration.version, migration.name, format_ts(datetime.now(UTC))),
            )
    except KiokuError:
        raise
    except psycopg.Error as exc:
        raise StoreError(
            f"schema migration {migration.version} ({migration.name}) failed: {exc}",
            hint=(
                f"the database was left unchanged at version {migration.version - 1}; "
                "check that the role may create tables and that the pgvector extension "
                "is installed (CREATE EXTENSION vector) in a schema on the search_path"
            ),
        ) from exc
    return True
