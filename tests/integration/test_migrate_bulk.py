"""The PostgreSQL side of ``kioku migrate`` writes each batch with ``COPY`` through a staging
table (issue #17): what the row-by-row ``INSERT ... ON CONFLICT DO NOTHING`` guaranteed must
still hold. A batch written again inserts nothing and changes nothing, rows under keys the
target holds keep the target's values (and the terms derived from them), the count returned is
the rows inserted, and vectors of awkward float32 values come back bit for bit.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

from kioku.adapters.store.postgres.transfer import PostgresTables, open_postgres_tables
from kioku.adapters.store.sqlite.transfer import SqliteTables, open_sqlite_tables
from kioku.ports.transfer.canonical import Row
from kioku.ports.transfer.tables import table
from kioku.service.paths import DB_FILENAME
from kioku.service.transfer import TABLES, TableSpec, copy_store
from kioku.service.transfer.copy import table_rows
from tests.integration.test_migrate import _copy_db, _fill
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

#: Tables that the store derives from the copied ones (they must follow the kept values).
_DERIVED = ("memory_terms", "term_docs", "lexical_totals", "memory_vectors", "vector_indexes")


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, datetime]:
    home = tmp_path_factory.mktemp("bulk_source") / "home"
    return home, _fill(home)


def _name(tmp_path: Path, tag: str) -> str:
    return f"bulk_{tag}_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=6).hexdigest()


@pytest.fixture
def schemas(postgres_url: str, tmp_path: Path) -> Iterator[list[str]]:  # noqa: F811
    names = [_name(tmp_path, tag) for tag in ("a", "b")]
    try:
        yield names
    finally:
        for name in names:
            admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _all_rows(access: SqliteTables | PostgresTables, spec: TableSpec) -> list[Row]:
    return [r for rows in table_rows(access, spec, 1000) for r in rows]


def _snapshot(url: str, schema: str, tables: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """Every row of the schema's tables (or of ``tables``) as text, sorted."""
    with psycopg.connect(url, autocommit=True) as conn:
        names = tables or tuple(
            str(r[0])
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
            )
        )
        return {
            name: sorted(
                str(r[0])
                for r in conn.execute(
                    sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, name))
                )
            )
            for name in names
        }


def _altered(spec: TableSpec, row: Row) -> Row:
    """``row`` with other values in its non-key columns (valid under the schema's checks)."""
    out = list(row)
    for i, (name, kind) in enumerate(spec.columns):
        if name in spec.key or out[i] is None:
            continue
        if name in ("content", "trigger"):
            out[i] = f"{out[i]} altered zanzibar"
        elif kind == "vector":
            out[i] = b"".join(reversed(_floats(bytes(out[i]))))  # type: ignore[arg-type]
        elif name == "keywords":
            out[i] = '["zanzibar"]'
    return tuple(out)


def _floats(data: bytes) -> list[bytes]:
    return [data[i : i + 4] for i in range(0, len(data), 4)]


# -- written again: nothing inserted, nothing changed --------------------------------------


def test_a_batch_written_again_inserts_nothing_and_changes_nothing(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schemas: list[str],
) -> None:
    source = open_sqlite_tables(filled[0] / DB_FILENAME)
    report = copy_store(source, open_postgres_tables(postgres_url, schemas[0]))
    assert report.verified
    before = _snapshot(postgres_url, schemas[0])
    assert all(before[name] for name in ("memory_terms", "term_docs", "memory_vectors"))
    source = open_sqlite_tables(filled[0] / DB_FILENAME)
    pg = open_postgres_tables(postgres_url, schemas[0])
    try:
        for spec in TABLES:
            rows = _all_rows(source, spec)
            assert pg.insert(spec, rows) == 0, spec.name
    finally:
        source.close()
        pg.close()
    assert _snapshot(postgres_url, schemas[0]) == before


# -- taken keys keep the target's values ---------------------------------------------------


def test_rows_under_taken_keys_keep_the_targets_values_and_terms(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schemas: list[str],
) -> None:
    """Half of each table goes in first; then a batch of that half with other values and the
    other half: only the other half is inserted (and counted), and the schema ends equal, row
    for row and in every derived table, to one where each table went in at once."""
    names = ("memories", "originals", "memory_versions", "lifecycle_log")
    source = open_sqlite_tables(filled[0] / DB_FILENAME)
    mixed = open_postgres_tables(postgres_url, schemas[0])
    straight = open_postgres_tables(postgres_url, schemas[1])
    try:
        for name in names:
            spec = table(name)
            rows = _all_rows(source, spec)
            assert rows, name
            half = (len(rows) + 1) // 2
            assert mixed.insert(spec, rows[:half]) == half, name
            batch = [_altered(spec, r) for r in rows[:half]] + rows[half:]
            assert batch[:half] != rows[:half] or name == "lifecycle_log"
            assert mixed.insert(spec, batch) == len(rows) - half, name
            assert straight.insert(spec, rows) == len(rows), name
            assert sorted(_all_rows(mixed, spec), key=repr) == sorted(rows, key=repr), name
    finally:
        source.close()
        mixed.close()
        straight.close()
    a = _snapshot(postgres_url, schemas[0], names + _DERIVED[:4])
    b = _snapshot(postgres_url, schemas[1], names + _DERIVED[:4])
    assert a == b
    assert not any("zanzibar" in row for rows in a.values() for row in rows)


# -- vectors travel bit for bit ------------------------------------------------------------

_ODD = (
    0.0,
    -0.0,
    struct.unpack("<f", struct.pack("<I", 1))[0],  # the smallest subnormal
    struct.unpack("<f", struct.pack("<I", 0x007FFFFF))[0],  # the largest subnormal
    struct.unpack("<f", struct.pack("<I", 0x00800000))[0],  # the smallest normal
    struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0],  # the largest float32
    -struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0],
    struct.unpack("<f", struct.pack("<f", 1 / 3))[0],
    struct.unpack("<f", struct.pack("<f", 0.1))[0],
    -1e-40,
)


def _set_vector(db: Path, values: tuple[float, ...]) -> tuple[str, bytes]:
    """Overwrite the first values of one memory's embedding; its id and new bytes."""
    with sqlite3.connect(db) as conn:
        memory_id, blob = conn.execute(
            "SELECT id, embedding FROM memories WHERE embedding IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
        data = struct.pack(f"<{len(values)}f", *values) + bytes(blob)[4 * len(values) :]
        conn.execute("UPDATE memories SET embedding = ? WHERE id = ?", (data, memory_id))
    return str(memory_id), data


def test_odd_float32_values_round_trip_bit_for_bit(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schemas: list[str],
    tmp_path: Path,
) -> None:
    db = _copy_db(filled, tmp_path)
    memory_id, data = _set_vector(db, _ODD)
    assert data[4:8] == struct.pack("<I", 0x80000000)  # -0.0 kept its sign
    there = copy_store(open_sqlite_tables(db), open_postgres_tables(postgres_url, schemas[0]))
    assert there.verified, there.mismatched
    big_endian = b"".join(f[::-1] for f in _floats(data))
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for name, column in (("memories", "id"), ("memory_vectors", "memory_id")):
            query = sql.SQL("SELECT vector_send(embedding) FROM {} WHERE {} = %s").format(
                sql.Identifier(schemas[0], name), sql.Identifier(column)
            )
            row = conn.execute(query, (memory_id,)).fetchone()
            assert row is not None
            assert bytes(row[0])[4:] == big_endian, name
    back_db = tmp_path / "back.db"
    back = copy_store(open_postgres_tables(postgres_url, schemas[0]), open_sqlite_tables(back_db))
    assert back.verified, back.mismatched
    with sqlite3.connect(back_db) as conn:
        (blob,) = conn.execute(
            "SELECT embedding FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
    assert bytes(blob) == data


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    values=st.lists(
        st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=16
    )
)
def test_any_finite_float32_vector_is_stored_exactly(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    tmp_path: Path,
    values: list[float],
) -> None:
    spec = table("memories")
    source = open_sqlite_tables(filled[0] / DB_FILENAME)
    try:
        row = next(r for r in _all_rows(source, spec) if r[spec.names.index("embedding")])
    finally:
        source.close()
    at = spec.names.index("embedding")
    old = bytes(row[at])  # type: ignore[arg-type]
    data = struct.pack(f"<{len(values)}f", *values) + old[4 * len(values) :]
    new_row = (*row[:at], data, *row[at + 1 :])
    name = _name(tmp_path, "p" + hashlib.blake2b(data, digest_size=4).hexdigest())
    try:
        pg = open_postgres_tables(postgres_url, name)
        try:
            assert pg.insert(spec, [new_row]) == 1
            (read,) = _all_rows(pg, spec)
        finally:
            pg.close()
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    assert read[at] == data
    assert read == tuple(new_row)
