"""PostgreSQL vector search in a scope that holds a share of the vectors.

pgvector's HNSW walk keeps ``ef_search`` candidates and only then are they checked against
the search's scope, so a scope with a fifth of the rows leaves about a fifth of them. When that
is fewer than asked for, the store walks once more with a list sized from the share the first
walk showed (:func:`vectors.wider_ef`) before it falls back to an exact search of the scope's
rows; a scope too small for any walk is searched exactly after one.

The tables here are small, where the planner may prefer an exact plan by itself; ``enable_sort``
off (in the test's transaction only) makes it walk the index, as it does on large tables. The
walks are counted with ``pg_stat_get_xact_numscans`` of the model's index before and after the
search, in the same transaction.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.adapters.store.postgres import vectors
from kioku.adapters.store.postgres.store import PostgresStore
from kioku.core.model import Embedding
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import build_memory, pg_schema, pg_store_url
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

MODEL = "test-scope-16"
DIM = 16
#: Owners and their shares of the vectors.
OWNERS = {"big": 0.75, "mid": 0.2, "small": 0.05}
COUNT = 2400


@given(found=st.integers(-5, 1200), ef=st.integers(1, 1200), limit=st.integers(1, 600))
def test_a_wider_walk_is_longer_bounded_and_expected_to_be_enough(
    found: int, ef: int, limit: int
) -> None:
    wider = vectors.wider_ef(found, ef, limit)
    if found <= 0 or found >= limit or ef >= 1000:
        assert wider is None
        return
    if wider is None:
        # Only when even pgvector's longest walk is expected to leave too few.
        assert found * 1000 < limit * ef
        return
    assert ef < wider <= 1000
    if wider < 1000:
        assert found * wider >= limit * ef  # the share seen, over the longer walk, fills it
    more = vectors.wider_ef(found + 1, ef, limit)
    assert more is None or more <= wider  # more left in scope never asks for a longer walk


@pytest.fixture
def store(tmp_path: Path, postgres_url: str) -> Iterator[PostgresStore]:  # noqa: F811
    from kioku.adapters.store.postgres import open_postgres_store

    schema = pg_schema(tmp_path)
    admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin(f"CREATE SCHEMA {schema}")
    opened = open_postgres_store(pg_store_url(tmp_path), pool_max=2)
    rng = random.Random(5)
    owners = [o for o, share in OWNERS.items() for _ in range(round(share * COUNT))]
    rng.shuffle(owners)
    memories = [
        build_memory(
            n,
            user_id=owner,
            embedding=Embedding(MODEL, tuple(rng.gauss(0.0, 1.0) for _ in range(DIM))),
        )
        for n, owner in enumerate(owners, start=1)
    ]
    opened.add_many(memories[:400])  # makes the index
    opened.add_many(memories[400:])
    try:
        yield opened
    finally:
        opened.close()
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _exact(store: PostgresStore, query: list[float], owner: str, limit: int) -> list[str]:
    with store._reading() as conn:
        rows = conn.execute(
            "SELECT id, embedding::text FROM memories WHERE user_id = %s", (owner,)
        ).fetchall()
    ids = [str(r[0]) for r in rows]
    matrix = np.array([[float(x) for x in str(r[1]).strip("[]").split(",")] for r in rows])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    scores = matrix @ (np.array(query) / np.linalg.norm(query))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return [ids[i] for i in order[:limit]]


def _search(
    store: PostgresStore, query: list[float], owner: str, limit: int
) -> tuple[int, list[str]]:
    """How many HNSW walks the search made, and the ids it found."""
    count = "SELECT pg_stat_get_xact_numscans(to_regclass(%s))"
    index = (vectors.index_name(MODEL, DIM),)
    with store._open_pool().connection() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_sort = off")
        before = conn.execute(count, index).fetchone()
        found = vectors.search(conn, MODEL, query, MemoryFilter(user_id=owner), limit)
        after = conn.execute(count, index).fetchone()
    assert before is not None
    assert after is not None
    return int(after[0]) - int(before[0]), [memory_id for memory_id, _ in found]


def _queries(seed: int, n: int) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(n)]


def test_a_scope_with_most_of_the_vectors_walks_once(store: PostgresStore) -> None:
    for query in _queries(11, 4):
        walks, found = _search(store, query, "big", 100)
        assert walks == 1
        assert len(found) == 100
        assert len(set(found) & set(_exact(store, query, "big", 100))) >= 95


def test_a_scope_with_a_fifth_of_the_vectors_walks_once_more_instead_of_scanning(
    store: PostgresStore,
) -> None:
    widened = 0
    for query in _queries(9, 8):
        walks, found = _search(store, query, "mid", 100)
        assert walks in (1, 2)
        widened += walks == 2
        assert len(found) == 100
        assert len(set(found) & set(_exact(store, query, "mid", 100))) >= 95
    # The first walk (400 candidates) leaves about 80 of "mid"'s: most searches need two.
    assert widened >= 5


def test_a_scope_too_small_for_any_walk_is_searched_exactly(store: PostgresStore) -> None:
    for query in _queries(10, 4):
        walks, found = _search(store, query, "small", 100)
        # About 20 of the 400 in scope: no walk of 1,000 would leave 100. One walk, then exact.
        assert walks == 1
        assert found == _exact(store, query, "small", 100)
