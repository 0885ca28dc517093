"""The SQLite store's tables in canonical form, for ``kioku migrate`` (see
:mod:`kioku.service.transfer`).

Rows are read with plain SELECTs and written with ``INSERT OR IGNORE`` (a row whose key is
taken is left as it is), each batch in one ``BEGIN IMMEDIATE`` transaction together with what
the store derives from it: a memory's lexical index row, an original's compressed text and
index row, and a new vector-cache version. ``AUTOINCREMENT`` counters follow the copied ids
by themselves.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from kioku.adapters.store.sqlite import search
from kioku.adapters.store.sqlite.originals import _pack, _unpack
from kioku.adapters.store.sqlite.store import SqliteStore, open_sqlite_store
from kioku.adapters.store.sqlite.vector_version import bump_version
from kioku.ports.transfer.canonical import Row, canonical_value, vector_values
from kioku.ports.transfer.tables import TableSpec

__all__ = ["SqliteTables", "open_sqlite_tables"]

_INDEXED: Final = ("trigger", "content", "keywords")


def _native(kind: str, value: object) -> object:
    """A canonical value as SQLite stores it."""
    if value is None:
        return None
    if kind == "vector" and isinstance(value, bytes):
        return vector_values(value).tobytes()
    return value


class SqliteTables:
    """The tables of one SQLite store (see :class:`kioku.service.transfer.TableAccess`)."""

    backend = "sqlite"

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def describe(self) -> str:
        return str(self._store.path)

    def table_names(self) -> set[str]:
        with self._store._reading() as conn:
            return {
                str(r[0])
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }

    def rows(self, spec: TableSpec, batch: int) -> Iterator[Sequence[Row]]:
        if spec.name == "originals":
            yield from self._originals(batch)
            return
        kinds = [kind for _, kind in spec.columns]
        columns = ", ".join(spec.names)
        with self._store._reading() as conn:
            # Fixed table and column names from the spec, never input.
            cursor = conn.execute(f"SELECT {columns} FROM {spec.name}")
            while chunk := cursor.fetchmany(batch):
                yield [
                    tuple(canonical_value(k, v) for k, v in zip(kinds, row, strict=True))
                    for row in chunk
                ]

    def _originals(self, batch: int) -> Iterator[Sequence[Row]]:
        with self._store._reading() as conn:
            cursor = conn.execute("SELECT memory_id, saved_at, text_z FROM originals")
            while chunk := cursor.fetchmany(batch):
                out: list[Row] = []
                for memory_id, saved_at, blob in chunk:
                    trigger, content = _unpack(str(memory_id), blob)
                    out.append((str(memory_id), str(saved_at), trigger, content))
                yield out

    def insert(self, spec: TableSpec, rows: Sequence[Row]) -> int:
        if not rows:
            return 0
        with self._store._writing() as conn:
            if spec.name == "originals":
                return _insert_originals(conn, rows)
            kinds = [kind for _, kind in spec.columns]
            marks = ", ".join("?" * len(kinds))
            statement = (
                f"INSERT OR IGNORE INTO {spec.name} ({', '.join(spec.names)}) VALUES ({marks})"
            )
            values = [tuple(_native(k, v) for k, v in zip(kinds, r, strict=True)) for r in rows]
            if spec.name != "memories":
                return int(conn.executemany(statement, values).rowcount)
            return _insert_memories(conn, spec, statement, values)

    def set_state(self, key: str, value: str) -> None:
        with self._store._writing() as conn:
            conn.execute(
                "INSERT INTO state (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def finish(self, spec: TableSpec) -> None:
        """Nothing to do: ``AUTOINCREMENT`` keeps the largest id it has seen."""

    def close(self) -> None:
        self._store.close()


def _insert_memories(
    conn: sqlite3.Connection, spec: TableSpec, statement: str, values: Sequence[Row]
) -> int:
    at = [spec.names.index(c) for c in ("id", *_INDEXED)]
    indexed: list[tuple[str, str]] = []
    for row in values:
        if conn.execute(statement, row).rowcount:
            memory_id, trigger, content, keywords = (row[i] for i in at)
            words = canonical_value("list", keywords)
            assert isinstance(words, str)
            indexed.append(
                (
                    str(memory_id),
                    search.terms_text(str(trigger), str(content), json.loads(words)),
                )
            )
    if indexed:
        search.put_many(conn, indexed)
        bump_version(conn, [memory_id for memory_id, _ in indexed])
    return len(indexed)


def _insert_originals(conn: sqlite3.Connection, rows: Sequence[Row]) -> int:
    inserted = 0
    for memory_id, saved_at, trigger, content in rows:
        cursor = conn.execute(
            "INSERT OR IGNORE INTO originals (memory_id, saved_at, text_z) VALUES (?, ?, ?)",
            (memory_id, saved_at, _pack(str(trigger), str(content))),
        )
        if cursor.rowcount:
            inserted += 1
            conn.execute(
                "INSERT INTO originals_fts (rowid, memory_id, terms) VALUES (?, ?, ?)",
                (
                    int(cursor.lastrowid or 0),
                    memory_id,
                    search.terms_text(str(trigger), str(content), ()),
                ),
            )
    return inserted


def open_sqlite_tables(path: Path) -> SqliteTables:
    """The tables of the SQLite store at ``path`` (created and migrated when missing)."""
    return SqliteTables(open_sqlite_store(path))
