"""A PostgreSQL server with pgvector for the tests that need one (the store contract suite and
the end-to-end test on PostgreSQL).

``postgres_url`` starts one server per test session (per xdist worker) from the ``pgserver``
package in a temporary directory, or uses the server ``KIOKU_TEST_PG_URL`` names. Without
psycopg or pgserver installed, tests using it are skipped, saying which is missing. Import the
fixture into a conftest or test module to use it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["PG_URL", "admin", "postgres_url"]

#: The URL of this session's PostgreSQL server, set by the ``postgres_url`` fixture.
PG_URL: list[str] = []


def admin(sql: str) -> None:
    """Run ``sql`` on the session's server, in autocommit."""
    import psycopg

    with psycopg.connect(PG_URL[0], autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # fixed text and generated schema names


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL server with pgvector for this session (``KIOKU_TEST_PG_URL`` or pgserver)."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    pytest.importorskip("psycopg_pool", reason="the postgres extra (psycopg-pool) is not installed")
    given = os.environ.get("KIOKU_TEST_PG_URL")
    server: Any = None
    if given:
        PG_URL[:] = [given]
    else:
        pgserver = pytest.importorskip("pgserver", reason="pgserver is not installed")
        server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
        PG_URL[:] = [server.get_uri()]
        # A throwaway server: no waiting for the disk (a schema per test costs a third).
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            admin(f"ALTER SYSTEM SET {setting} = off")
        admin("SELECT pg_reload_conf()")
    admin("CREATE EXTENSION IF NOT EXISTS vector")
    try:
        yield PG_URL[0]
    finally:
        PG_URL.clear()
        if server is not None:
            server.cleanup()
