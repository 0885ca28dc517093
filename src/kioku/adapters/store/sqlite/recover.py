"""Salvaging a damaged store into a new file, row by row.

The sqlite3 shell's ``.recover`` is not part of the SQLite library that Python links, so
kioku salvages with SQL alone: it copies the damaged file (and its ``-wal``) to a scratch
directory and never opens the original; it creates a new, empty store of the current schema;
then it reads each of kioku's tables from the copy in ``rowid`` order, a page of rows at a
time. A read that fails (a damaged page) is retried one row at a time, and past rows that
cannot be read it seeks further and further ahead (1, 2, 4, ... rowids) until reading works
again: the rows under a damaged page are lost, the rest are kept. Rows that break the store's
rules (damaged values) are dropped and counted. The lexical index is rebuilt from the saved
memories (never copied), relations to lost memories are dropped, and the new file must pass
``PRAGMA integrity_check`` and ``PRAGMA foreign_key_check`` before it takes its name.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kioku.adapters.store.sqlite import search, vector_version
from kioku.adapters.store.sqlite.connection import OWNER_ONLY_FILE
from kioku.adapters.store.sqlite.migrations import LATEST_VERSION
from kioku.errors import StoreError
from kioku.records import Record

__all__ = ["SalvageReport", "TableSalvage", "salvage"]

#: Kioku's own tables, parents before children; the lexical index is rebuilt, not copied.
_TABLES: Final = (
    "state",
    "memories",
    "relations",
    "lifecycle_log",
    "usage",
    "tombstones",
    "erasure_audit",
    "backups",
    "backup_ids",
)
_WITHOUT_ROWID: Final = frozenset({"tombstones", "backup_ids"})
_PAGE: Final = 200
_MAX_ROWID: Final = (1 << 63) - 1


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TableSalvage(Record):
    table: str
    saved: int
    dropped: int  # read, but refused by the new store's rules
    unreadable: int  # ranges of rows that could not be read
    total_in_source: int | None  # what the source says it holds, when it can say


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SalvageReport(Record):
    source: Path
    target: Path
    source_version: int | None
    tables: tuple[TableSalvage, ...] = field(default=())

    @property
    def complete(self) -> bool:
        return all(t.dropped == 0 and t.unreadable == 0 for t in self.tables)


def _try(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
    return list(conn.execute(sql, params).fetchall())


def _rows(
    conn: sqlite3.Connection, table: str, cols: str
) -> Iterator[tuple[bool, tuple[object, ...]]]:
    """``(True, row)`` for each readable row in rowid order, ``(False, ())`` once per
    unreadable stretch."""
    if table in _WITHOUT_ROWID:
        try:
            rows = _try(conn, f"SELECT {cols} FROM {table}")
        except sqlite3.DatabaseError:
            yield False, ()
            return
        for row in rows:
            yield True, tuple(row)
        return
    select = f"SELECT rowid, {cols} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?"
    last = -_MAX_ROWID - 1
    while True:
        try:
            rows = _try(conn, select, (last, _PAGE))
        except sqlite3.DatabaseError:
            rows = []
            step = 0
            while not rows:
                probe = last + step if step else last
                if probe >= _MAX_ROWID:
                    yield False, ()
                    return
                try:
                    rows = _try(conn, select, (probe, 1))
                except sqlite3.DatabaseError:
                    if step == 0:
                        yield False, ()
                    step = 1 if step == 0 else min(step * 2, _MAX_ROWID - last)
                    continue
                if not rows:
                    return  # nothing readable beyond the damage
        if not rows:
            return
        for row in rows:
            yield True, tuple(row)[1:]
        last = int(rows[-1][0])


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def _copy_table(
    source: sqlite3.Connection, target: sqlite3.Connection, table: str
) -> TableSalvage | None:
    wanted = _columns(target, table)
    try:
        present = _columns(source, table)
    except sqlite3.DatabaseError:
        present = wanted  # the schema itself is unreadable: try the current layout
    cols = [c for c in wanted if c in present]
    if not cols:
        return None
    total: int | None
    try:
        total = int(source.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    except sqlite3.DatabaseError:
        total = None
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    verb = "INSERT OR REPLACE" if table == "state" else "INSERT"
    insert = f"{verb} INTO {table} ({names}) VALUES ({marks})"
    saved = dropped = unreadable = 0
    for ok, row in _rows(source, table, names):
        if not ok:
            unreadable += 1
            continue
        try:
            target.execute("SAVEPOINT row")
            target.execute(insert, row)
            target.execute("RELEASE row")
            saved += 1
        except sqlite3.Error:
            target.execute("ROLLBACK TO row")
            target.execute("RELEASE row")
            dropped += 1
    return TableSalvage(table, saved, dropped, unreadable, total)


def _source_version(conn: sqlite3.Connection) -> int | None:
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError:
        return None


def _finish(conn: sqlite3.Connection) -> None:
    """Rebuild what is derived, drop references to lost memories, check."""
    conn.execute(
        "DELETE FROM relations WHERE source_id NOT IN (SELECT id FROM memories) "
        "OR target_id NOT IN (SELECT id FROM memories)"
    )
    conn.execute("DELETE FROM memories_fts")
    search.backfill(conn)
    vector_version.bump_version(conn, None)  # every row is new to any cache: reload


def salvage(source: Path, target: Path) -> SalvageReport:
    """Save what can be read of the store ``source`` into the new store ``target``."""
    from kioku.adapters.store.sqlite.store import SqliteStore

    if not source.is_file():
        raise StoreError(f"{source} is not a file", hint="name a kioku database or its home")
    if target.exists() or target.is_symlink():
        raise StoreError(f"{target} already exists", hint="name a new file for the salvage")
    if not target.parent.is_dir():
        raise StoreError(f"the directory of {target} does not exist", hint="create it first")
    with tempfile.TemporaryDirectory(prefix="kioku-recover-") as scratch:
        copy = Path(scratch) / "source.db"
        shutil.copyfile(source, copy)
        wal = source.with_name(source.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
        try:
            SqliteStore(temp).close()
            report = _salvage_into(copy, temp, source, target)
            os.chmod(temp, OWNER_ONLY_FILE)
            os.replace(temp, target)
        finally:
            for leftover in (temp, *(temp.with_name(temp.name + s) for s in ("-wal", "-shm"))):
                with suppress(OSError):
                    leftover.unlink()
    return report


def _salvage_into(copy: Path, temp: Path, source: Path, target: Path) -> SalvageReport:
    with closing(sqlite3.connect(str(copy), isolation_level=None)) as src:
        version = _source_version(src)
        if version is not None and 0 < version < 2:
            raise StoreError(
                f"{source} has the spec's original layout (schema version {version}), which "
                "recover does not read",
                hint="restore a backup, or export what is readable with the sqlite3 shell",
            )
        if version is not None and version > LATEST_VERSION:
            raise StoreError(
                f"{source} has schema version {version}, newer than this kioku knows",
                hint="recover it with the kioku that wrote it",
            )
        with closing(sqlite3.connect(str(temp), isolation_level=None)) as dst:
            dst.execute("PRAGMA foreign_keys = OFF")
            dst.execute("BEGIN IMMEDIATE")
            tables = [t for t in (_copy_table(src, dst, name) for name in _TABLES) if t]
            _finish(dst)
            dst.execute("COMMIT")
            messages = [str(r[0]) for r in dst.execute("PRAGMA integrity_check")]
            broken = dst.execute("PRAGMA foreign_key_check").fetchall()
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if messages != ["ok"] or broken:
        raise StoreError(
            f"the salvaged store failed its checks ({'; '.join(messages[:3])})",
            hint="nothing was written; report this with the damaged file if you can",
        )
    return SalvageReport(source, target, version, tuple(tables))
