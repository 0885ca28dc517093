"""Backups, scrubbing and compaction of the PostgreSQL store (see docs/postgres.md).

A mixin of :class:`.store.PostgresStore`.

* :meth:`MaintenancePart.backup` writes a logical copy of this store's schema to one file: a
  zip archive with ``manifest.json`` (format, schema name and version, time, the tables in
  order with their columns and row counts) and one ``tables/<table>.copy`` per table, the
  output of ``COPY (columns) TO STDOUT`` (PostgreSQL's text format). Every table is copied
  in one repeatable-read, read-only transaction, so the copy is one consistent snapshot while
  others keep writing, and the manifest row records the memories of that same snapshot.
  ``pg_dump`` is not used: it must match the server's major version and is often not
  installed where kioku runs. There is no restore command yet.
* :meth:`MaintenancePart.scrub` takes erased text off the server's files (outside a
  transaction block: an autocommit connection of the pool): ``VACUUM (FULL)`` and ``ANALYZE``
  of every table of the schema, ``VACUUM (FULL)`` of ``pg_statistic``, then
  ``pg_switch_wal()`` and ``CHECKPOINT`` (see :mod:`.erasure` for each step and why).
* :meth:`MaintenancePart.vacuum` is the scrub, with the sizes of the schema's tables with
  their indexes and TOAST before and after.
* :meth:`MaintenancePart.reindex` builds each model's HNSW index again with the current
  settings (:mod:`.reindex`).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import psycopg
import psycopg_pool
from psycopg import sql

from kioku.adapters.store.postgres import migrations
from kioku.adapters.store.postgres.connection import Conn, translating
from kioku.adapters.store.postgres.erasure import drop_old_wal, record_backup, rewrite_tables
from kioku.adapters.store.postgres.reindex import Progress, reindex
from kioku.adapters.store.postgres.vectors import HnswSettings
from kioku.core.timefmt import format_ts
from kioku.errors import StoreError
from kioku.ports.erasure import BackupRecord, ScrubReport
from kioku.ports.store_records import VectorIndexReport

__all__ = ["BACKUP_FORMAT", "MaintenancePart"]

#: ``manifest.json``'s ``format``, and the version of the archive's layout.
BACKUP_FORMAT: Final = "kioku-postgres-backup"
_OWNER_ONLY_FILE: Final = 0o600

_TABLES: Final = (
    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
    'ORDER BY tablename COLLATE "C"'
)
_COLUMNS: Final = (
    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position"
)
_SIZE: Final = (
    "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c "
    "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')"
)


def _refuse_existing(target: Path) -> None:
    if target.exists() or target.is_symlink():
        raise StoreError(
            f"backup target {target} already exists",
            hint="choose a new file name, or move the old backup away first",
        )


def _copy_tables(conn: Conn, archive: zipfile.ZipFile) -> list[dict[str, object]]:
    """Every table of the schema into ``archive``; what was copied, for the manifest."""
    tables: list[dict[str, object]] = []
    for (name,) in conn.execute(_TABLES).fetchall():
        table = str(name)
        columns = [str(r[0]) for r in conn.execute(_COLUMNS, (table,)).fetchall()]
        statement = sql.SQL("COPY {} ({}) TO STDOUT").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        rows = 0
        with (
            archive.open(f"tables/{table}.copy", "w", force_zip64=True) as out,
            conn.cursor() as cursor,
        ):
            with cursor.copy(statement) as copy:
                for chunk in copy:
                    out.write(chunk)
            rows = max(0, cursor.rowcount)
        tables.append({"name": table, "columns": columns, "rows": rows})
    return tables


def _held(conn: Conn) -> list[tuple[str, str]]:
    rows = conn.execute('SELECT id, user_id FROM memories ORDER BY id COLLATE "C"').fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


class MaintenancePart:
    """Store methods that copy, scrub and compact the whole schema."""

    _where: str
    hnsw: HnswSettings

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _open_pool(self) -> psycopg_pool.ConnectionPool:
        raise NotImplementedError

    def _atomic_depth(self) -> int:
        raise NotImplementedError

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        raise NotImplementedError

    def _outside_atomic(self, what: str) -> None:
        if self._atomic_depth() > 0:
            raise StoreError(f"{what} cannot run inside atomic()", hint="call it outside")

    # -- backups -----------------------------------------------------------------------

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        """Copy the schema to the zip archive ``target`` (mode 0o600) and record what it holds.

        The archive is written to a temporary file beside ``target`` (whose directory must
        exist), then renamed over it (only with ``overwrite`` when it exists).
        """
        self._outside_atomic("a backup")
        target = Path(target)
        if not overwrite:
            _refuse_existing(target)
        if not target.parent.is_dir():
            raise StoreError(
                f"the backup directory {target.parent} does not exist",
                hint="create it first (kioku does not create directories for a backup)",
            )
        temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _OWNER_ONLY_FILE)
        except OSError as exc:
            raise StoreError(
                f"cannot create the backup file next to {target} ({exc.strerror or exc})",
                hint="check that the backup directory is writable by you",
            ) from exc
        made_at = datetime.now(UTC)
        try:
            with (
                os.fdopen(fd, "wb") as raw,
                zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive,
                self._reading() as conn,
            ):
                version = migrations.schema_version(conn)
                schema = conn.execute("SELECT current_schema()").fetchone()
                tables = _copy_tables(conn, archive)
                held = _held(conn)
                manifest = {
                    "format": BACKUP_FORMAT,
                    "format_version": 1,
                    "schema": None if schema is None else str(schema[0]),
                    "schema_version": version,
                    "made_at": format_ts(made_at),
                    "copy_format": "text",
                    "tables": tables,
                }
                archive.writestr("manifest.json", json.dumps(manifest, indent=1))
            if not overwrite:
                _refuse_existing(target)
            os.replace(temp, target)
        except OSError as exc:
            raise StoreError(
                f"cannot write the backup {target} ({exc.strerror or exc})",
                hint="check the free space and permissions of the backup directory",
            ) from exc
        finally:
            with suppress(OSError):
                temp.unlink()
        with self._writing() as conn:
            return record_backup(conn, str(target.resolve()), made_at, held)

    # -- scrubbing and compaction ------------------------------------------------------

    def _scrub_now(self) -> ScrubReport:
        """Rewrite every table of the schema and the planner statistics, then drop the old
        write-ahead log, on an autocommit connection outside any transaction block."""
        with translating(self._where), self._open_pool().connection() as conn:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise StoreError("the pool gave a connection inside a transaction")
            kept = rewrite_tables(conn)
            wal = drop_old_wal(conn)
        return ScrubReport(
            index_merged=not kept, wal_truncated=not wal, wal_detail="; ".join(kept + wal)
        )

    def scrub(self) -> ScrubReport:
        """After erasures have committed: VACUUM FULL and ANALYZE every table of the schema,
        VACUUM FULL pg_statistic, then pg_switch_wal() and CHECKPOINT (see docs/postgres.md).
        ``index_merged`` says the tables were rewritten without the erased rows,
        ``wal_truncated`` that the log written before is gone; ``wal_detail`` names what
        was not done and what an administrator must run or set."""
        self._outside_atomic("scrubbing")
        return self._scrub_now()

    def _size(self) -> int:
        with self._reading() as conn:
            row = conn.execute(_SIZE).fetchone()
        return 0 if row is None else int(str(row[0]))

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        """The scrub (every table rewritten into new files): the schema's size in bytes
        (tables, indexes, TOAST) before and after."""
        self._outside_atomic("vacuum")
        before = self._size()
        report = self._scrub_now()
        return before, self._size(), report

    # -- vector indexes ------------------------------------------------------------------

    def reindex(
        self,
        model: str | None = None,
        *,
        force: bool = False,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> list[VectorIndexReport]:
        """Build again each model's HNSW index whose type, ``m`` or ``ef_construction``
        differ from the store's settings (``force``: every one), concurrently, then swap it
        in (:mod:`.reindex`)."""
        self._outside_atomic("reindex")

        @contextmanager
        def connection() -> Iterator[Conn]:
            with translating(self._where), self._open_pool().connection() as conn:
                yield conn

        return reindex(
            connection,
            self.exclusive,
            self.hnsw,
            model,
            force=force,
            dry_run=dry_run,
            progress=progress,
        )
