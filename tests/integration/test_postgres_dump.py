"""Backing a PostgreSQL store up with the server's own tools: ``pg_dump`` of kioku's schema,
``pg_restore`` into another database, and kioku working on the restored copy.

The dump and restore programs are the ones the test server's package ships beside its server
(so they match its major version); with ``KIOKU_TEST_PG_URL`` the test looks for them on the
``PATH`` and skips, saying so, when they are missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env, run_kioku
from tests.postgres_server import admin, bin_directory, postgres_url  # noqa: F401 (a fixture)


def _tool(name: str) -> str:
    try:
        bundled = bin_directory() / name
        if bundled.exists():
            return str(bundled)
    except pytest.skip.Exception:
        pass
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (the test server or a PostgreSQL client has it)")
    return found


def _with_database(url: str, database: str) -> str:
    """``url`` (a postgresql:// URL) naming ``database`` instead."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


@pytest.fixture
def names(tmp_path: Path) -> Iterator[tuple[str, str]]:
    digest = hashlib.blake2b(str(tmp_path).encode(), digest_size=6).hexdigest()
    schema, database = f"dump_{digest}", f"restored_{digest}"
    try:
        yield schema, database
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def _kioku(env: dict[str, str], *args: str) -> str:
    result = run_kioku(*args, env=env, timeout=120)
    assert result.code == 0, f"kioku {' '.join(args)}: {result.err}{result.out}"
    return result.out


def test_pg_dump_and_restore_give_the_same_store(
    postgres_url: str,  # noqa: F811
    names: tuple[str, str],
    tmp_path: Path,
) -> None:
    schema, database = names
    env = clean_env(
        KIOKU_HOME=str(tmp_path / "home"), KIOKU_STORE_URL=postgres_url, KIOKU_STORE__SCHEMA=schema
    )
    turns = [
        "My cat Tama ran away last night and I am heartbroken",
        "We moved the billing service to PostgreSQL on Friday",
        "来週の木曜日に京都で姉の結婚式がある",
    ]
    for n, text in enumerate(turns):
        _kioku(env, "remember", "--user", text, "--at", f"2025-03-0{n + 1}T09:00:00+09:00")
    _kioku(env, "batch", "--now", "2025-03-20T04:00:00+09:00")
    before = _kioku(env, "search", "billing PostgreSQL", "--json")
    listed = _kioku(env, "list", "--json")

    dump = tmp_path / "kioku.dump"
    subprocess.run(
        [_tool("pg_dump"), "--format=custom", f"--schema={schema}", f"--file={dump}", postgres_url],
        check=True,
        capture_output=True,
        env={**os.environ, "PGOPTIONS": ""},
    )
    # A new database, with pgvector, as a restore onto another server would have it.
    admin(f"CREATE DATABASE {database}")
    restored_url = _with_database(postgres_url, database)
    import psycopg

    with psycopg.connect(restored_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    subprocess.run(
        [_tool("pg_restore"), "--no-owner", f"--dbname={restored_url}", str(dump)],
        check=True,
        capture_output=True,
    )

    restored = {**env, "KIOKU_STORE_URL": restored_url, "KIOKU_HOME": str(tmp_path / "home2")}
    assert _kioku(restored, "list", "--json") == listed
    assert _kioku(restored, "search", "billing PostgreSQL", "--json") == before
    doctor = run_kioku("doctor", env=restored, timeout=120)
    assert doctor.code == 0, doctor.out + doctor.err
    # The copy takes new memories: its identities and indexes came with it.
    _kioku(restored, "remember", "--user", "The restored store takes new turns", "--json")
    assert "restored store" in _kioku(restored, "search", "restored store", "--json")
