"""The reliability suite runs on both stores: ``place`` is the SQLite file of the test's home,
or a schema of its own on the session's PostgreSQL server (``tests/postgres_server.py``),
which the ``kioku`` processes reach by ``KIOKU_STORE_URL``. The schema, and those named after
it (``place.at``), are dropped afterwards."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_server import PG_URL, admin, postgres_url  # noqa: F401 (a fixture)
from tests.reliability.support import Place

STORES = ["sqlite", "postgres"]


def _drop_schemas(prefix: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL[0], autocommit=True) as conn:
        names = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (prefix,)
        ).fetchall()
    for (name,) in names:
        admin(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture(params=STORES)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    home = tmp_path / "home"
    if request.param == "sqlite":
        yield Place(home)
        return
    url = str(request.getfixturevalue("postgres_url"))
    schema = "rel_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    try:
        yield Place(home, url, schema)
    finally:
        _drop_schemas(schema)
