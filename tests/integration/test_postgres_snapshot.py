"""The PostgreSQL store's read snapshots: one ``BEGIN`` opens a read-only, repeatable-read
transaction, and the connection goes back to the pool as it came, however the block ends."""

from __future__ import annotations

import uuid

import pytest

from tests.postgres_server import postgres_url  # noqa: F401 (a fixture)

psycopg = pytest.importorskip("psycopg")

from kioku.adapters.store.postgres.connection import snapshot  # noqa: E402


class AbandonError(Exception):
    """Raised inside a snapshot to leave it early."""


def _settings(conn: psycopg.Connection[tuple[object, ...]]) -> tuple[object, ...]:
    row = conn.execute(
        "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')"
    ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_snapshot_is_read_only_and_repeatable_then_the_connection_writes_again(
    postgres_url: str,  # noqa: F811
) -> None:
    table = f"snapshot_{uuid.uuid4().hex}"  # not a temporary table: read-only allows those
    with psycopg.connect(postgres_url) as conn:
        conn.execute(f"CREATE TABLE {table} (x int)")
        conn.commit()
        with snapshot(conn):
            assert _settings(conn) == ("repeatable read", "on")
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                conn.execute(f"INSERT INTO {table} VALUES (1)")
        assert conn.read_only is None
        assert conn.isolation_level is None
        with conn.transaction():
            assert _settings(conn) == ("read committed", "off")
            conn.execute(f"INSERT INTO {table} VALUES (2)")
        with pytest.raises(AbandonError), snapshot(conn):
            raise AbandonError
        with conn.transaction():
            conn.execute(f"INSERT INTO {table} VALUES (3)")
        assert conn.execute(f"SELECT x FROM {table} ORDER BY x").fetchall() == [(2,), (3,)]
        conn.execute(f"DROP TABLE {table}")
        conn.commit()
