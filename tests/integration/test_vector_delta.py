"""A store's vector cache carried over its own inserts answers exactly as a fresh load.

After an insert, the store extends its in-memory vector cache instead of rebuilding it
(adapters/store/sqlite/vector_delta.py). Whatever the writes (inserts alone or in one
transaction, updates that archive, deletions, transactions that fail, another connection
writing meanwhile), every search on the warm store must give what a store opened afresh on
the same file gives.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import BASE_TIME, build_memory, vector_memory

MODEL = "test-model"
DIM = 4

_vector = st.lists(st.integers(-3, 3), min_size=DIM, max_size=DIM).map(
    lambda values: tuple(float(v) for v in values)
)
_user = st.sampled_from(["ann", "ben"])
_op = st.one_of(
    st.tuples(st.just("add"), st.lists(st.tuples(_vector, _user), min_size=1, max_size=3)),
    st.tuples(st.just("add_in_transaction"), st.lists(st.tuples(_vector, _user), max_size=3)),
    st.tuples(
        st.just("add_then_fail"), st.lists(st.tuples(_vector, _user), min_size=1, max_size=2)
    ),
    st.tuples(
        st.just("add_inner_fail"), st.lists(st.tuples(_vector, _user), min_size=2, max_size=3)
    ),
    st.tuples(st.just("other_model"), _vector),
    st.tuples(st.just("archive"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("elsewhere"), st.tuples(_vector, _user)),
    st.tuples(st.just("search"), _vector),
)


class _FailedError(Exception):
    pass


def _add_then_fail(store: SqliteStore, batch: list[Memory]) -> None:
    with store.atomic():
        store.add_many(batch)
        raise _FailedError


def _search(store: SqliteStore, query: tuple[float, ...]) -> list[Any]:
    answers = []
    for flt in (
        MemoryFilter(),
        MemoryFilter(user_id="ann"),
        MemoryFilter(user_id="ben", archived=False),
        MemoryFilter(archived=True),
    ):
        found = store.vector_search(MODEL, query, flt, 100)
        answers.append(sorted((i, round(score, 5)) for i, score in found))
    return answers


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("delta")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(_op, min_size=1, max_size=12))
def test_a_warm_cache_answers_as_a_fresh_load(folder: Path, ops: list[Any]) -> None:
    path = folder / f"s{len(list(folder.iterdir()))}.db"
    warm = SqliteStore(path)
    other = SqliteStore(path)
    ids: list[str] = []
    n = 0
    try:
        warm.add(vector_memory(n := n + 1, (1.0, 0.0, 0.0, 0.0), "ann"))
        ids.append(build_memory(n).id)
        _search(warm, (1.0, 0.0, 0.0, 0.0))  # the cache is warm from here on
        for op, arg in ops:
            if op in ("add", "add_in_transaction", "add_then_fail", "add_inner_fail"):
                batch = []
                for vector, user in arg:
                    batch.append(vector_memory(n := n + 1, vector, user))
                if op == "add":
                    warm.add_many(batch)
                    ids.extend(m.id for m in batch)
                elif op == "add_in_transaction":
                    with warm.atomic():
                        for memory in batch:
                            warm.add(memory)
                        warm.set_state("note", str(n))
                    ids.extend(m.id for m in batch)
                elif op == "add_then_fail":
                    with pytest.raises(_FailedError):
                        _add_then_fail(warm, batch)
                else:  # the first is kept, the inner transaction with the rest is undone
                    with warm.atomic():
                        warm.add(batch[0])
                        with pytest.raises(_FailedError):
                            _add_then_fail(warm, batch[1:])
                    ids.append(batch[0].id)
            elif op == "other_model":
                warm.add(vector_memory(n := n + 1, arg, "ann", model="another-model"))
            elif op == "archive" and ids:
                target = ids[arg % len(ids)]
                memory = warm.get(target)
                if memory is not None and memory.archived_at is None:
                    warm.update(
                        target,
                        MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=9)),
                    )
            elif op == "delete" and ids:
                warm.delete_many([ids.pop(arg % len(ids))])
            elif op == "elsewhere":
                vector, user = arg
                other.add(vector_memory(n := n + 1, vector, user))
                ids.append(build_memory(n).id)
            query = arg if op == "search" else (0.5, 0.5, -0.5, 1.0)
            fresh = SqliteStore(path)
            try:
                assert _search(warm, query) == _search(fresh, query), (op, arg)
            finally:
                fresh.close()
    finally:
        warm.close()
        other.close()


def test_an_insert_extends_the_cache_instead_of_reloading(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    try:
        store.add(vector_memory(1, (1.0, 0.0, 0.0, 0.0), "ann"))
        assert store.vector_search(MODEL, (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5)
        store.add(vector_memory(2, (0.0, 1.0, 0.0, 0.0), "ann"))
        found = store.vector_search(MODEL, (0.0, 1.0, 0.0, 0.0), MemoryFilter(), 5)
        assert found[0][0] == build_memory(2).id
        # Carried, not rebuilt: the second search used the cache the insert extended.
        assert store._vectors[MODEL][1] is not None
        assert store._vectors[MODEL][1].loaded_from == "delta"
    finally:
        store.close()


def test_a_carried_cache_is_written_when_asked(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite.vector_file import VectorFiles
    from kioku.adapters.store.sqlite.vector_version import read_version

    path = tmp_path / "m.db"
    store = SqliteStore(path)
    try:
        store.add(vector_memory(1, (1.0, 0.0, 0.0, 0.0), "ann"))
        store.vector_search(MODEL, (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5)  # loads, writes
        store.add(vector_memory(2, (0.0, 1.0, 0.0, 0.0), "ben"))
        store.vector_search(MODEL, (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5)  # carried
        assert store._conn is not None
        version = read_version(store._conn)
        # The carried cache stays in memory: the file is still the one before the insert.
        assert VectorFiles(path).read(MODEL, version) is None
        store.save_vector_cache(MODEL)
        saved = VectorFiles(path).read(MODEL, version)
        assert saved is not None
        assert sorted(saved.ids.tolist()) == sorted(build_memory(n).id for n in (1, 2))
    finally:
        store.close()
