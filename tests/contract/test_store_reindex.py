"""``Store.reindex`` on every store: what it reports of each model's vectors, its refusals,
and that searches find the same before and after it. Whether an index is built again is the
PostgreSQL store's own (tests/integration/test_postgres_reindex.py); the SQLite store searches
exactly and builds nothing."""

from __future__ import annotations

import random

import pytest

from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryFilter, Store
from tests.contract.conftest import vector_memory


def _vector(rng: random.Random, dim: int) -> tuple[float, ...]:
    return tuple(rng.uniform(-1.0, 1.0) for _ in range(dim))


def test_reindex_reports_each_model_and_keeps_searches(store: Store) -> None:
    rng = random.Random(3)
    store.add_many(
        [vector_memory(n, _vector(rng, 8), model="model-a") for n in range(30)]
        + [vector_memory(100 + n, _vector(rng, 5), model="model-b") for n in range(12)]
    )
    queries = [_vector(rng, 8) for _ in range(3)]
    before = [store.vector_search("model-a", q, MemoryFilter(), 10) for q in queries]

    planned = store.reindex(dry_run=True)
    assert [(r.model, r.dim, r.vectors) for r in planned] == [
        ("model-a", 8, 30),
        ("model-b", 5, 12),
    ]
    done = store.reindex()
    assert [(r.model, r.dim, r.vectors) for r in done] == [
        ("model-a", 8, 30),
        ("model-b", 5, 12),
    ]
    # Nothing differs from the settings the store was opened with: nothing is built again.
    assert [r.rebuilt for r in done] == [False, False]
    assert all(r.before == r.after for r in done)
    (only,) = store.reindex(model="model-b")
    assert (only.model, only.vectors) == ("model-b", 12)
    after = [store.vector_search("model-a", q, MemoryFilter(), 10) for q in queries]
    assert [[i for i, _ in hits] for hits in after] == [[i for i, _ in hits] for hits in before]


def test_reindex_refusals(store: Store) -> None:
    assert store.reindex() == []
    store.add_many([vector_memory(1, (1.0, 0.0, 0.5), model="model-a")])
    with pytest.raises(ValidationError, match="model-a"):
        store.reindex(model="model-z")
    with store.atomic(), pytest.raises(StoreError, match="inside atomic"):
        store.reindex()
