"""A vector cache brought up to date from the change log answers exactly as a fresh load.

Every write that changes what vector search sees logs the ids it changed with the version it
set (adapters/store/sqlite/vector_version.py), and a cache at an older version applies those
changes instead of reloading every vector (adapters/store/sqlite/vector_log.py). Here one
store keeps a warm cache while a second store on the same file writes; after every write the
warm store's searches must equal those of a store that loads every vector afresh, and it must
have caught up from the log rather than reloaded. When the log cannot say what changed
(pruned, a reload marker, too many changes, another dimension) the store loads everything.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import vector_version
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.adapters.store.sqlite.vector_file import VectorFiles
from kioku.adapters.store.sqlite.vector_log import change_limit, extended
from kioku.adapters.store.sqlite.vectors import ModelVectors, build, top_matches
from kioku.core.model import Embedding, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import BASE_TIME, build_memory, vector_memory

MODEL = "test-model"
OTHER = "another-model"
DIM = 4
FILTERS = (
    MemoryFilter(),
    MemoryFilter(user_id="ann"),
    MemoryFilter(user_id="ben", archived=False),
    MemoryFilter(archived=True),
    MemoryFilter(agent_id="b"),
    MemoryFilter(user_id="ann", agent_id="a", archived=False),
)

_vector = st.lists(st.integers(-2, 2), min_size=DIM, max_size=DIM).map(
    lambda values: tuple(float(v) for v in values)
)
_scope = st.sampled_from([("ann", "a"), ("ann", "b"), ("ben", "a")])
_new = st.lists(st.tuples(_vector, _scope), min_size=1, max_size=3)
_pick = st.integers(0, 60)
_op = st.one_of(
    st.tuples(st.just("add"), _new),
    st.tuples(st.just("add_in_transaction"), _new),
    st.tuples(st.just("add_then_fail"), _new),
    st.tuples(st.just("revector"), st.tuples(_pick, _vector)),
    st.tuples(st.just("other_model"), st.tuples(_pick, _vector)),
    st.tuples(st.just("no_vector"), _pick),
    st.tuples(st.just("archive"), _pick),
    st.tuples(st.just("unarchive"), _pick),
    st.tuples(st.just("delete"), st.lists(_pick, min_size=1, max_size=3)),
    st.tuples(st.just("delete_then_fail"), _pick),
    st.tuples(st.just("mixed_transaction"), st.tuples(_pick, _vector, _new)),
    st.tuples(st.just("nothing_visible"), _pick),
    st.tuples(st.just("warm_add"), _new),
    st.tuples(st.just("warm_search_in_transaction"), _vector),
)


class _FailedError(Exception):
    pass


def _fail_after(store: SqliteStore, write: Callable[[], object]) -> None:
    """``write`` in a transaction that then fails (so it is rolled back)."""
    with store.atomic():
        write()
        raise _FailedError


def _memory(
    n: int, vector: tuple[float, ...], scope: tuple[str, str], model: str = MODEL
) -> Memory:
    return vector_memory(n, vector, scope[0], model, agent=scope[1])


def _search(store: SqliteStore, query: tuple[float, ...]) -> list[Any]:
    """Every filter's answer, in the order given (ids and exact scores), at two limits."""
    return [store.vector_search(MODEL, query, flt, limit) for flt in FILTERS for limit in (2, 50)]


def _fresh(path: Path, query: tuple[float, ...]) -> list[Any]:
    """The answers of a store that loads every vector from the rows (no cache file)."""
    VectorFiles(path).remove()
    store = SqliteStore(path)
    try:
        answers = _search(store, query)
        cached = store._vectors.get(MODEL)
        assert cached is None or cached[1] is None or cached[1].loaded_from == "sqlite"
        return answers
    finally:
        store.close()


def _cache(store: SqliteStore) -> tuple[int, Any]:
    return store._vectors[MODEL]


def _search_cache(vectors: ModelVectors | None, query: tuple[float, ...]) -> list[Any]:
    """What one cache object answers, without the store (for copy-on-write checks)."""
    if vectors is None:
        return []
    return [
        top_matches(vectors, query, flt.user_id, flt.agent_id, flt.archived, 50) for flt in FILTERS
    ]


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vlog")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Path, SqliteStore, SqliteStore]]:
    path = tmp_path / "m.db"
    warm, other = SqliteStore(path), SqliteStore(path)
    try:
        yield path, warm, other
    finally:
        warm.close()
        other.close()


def _apply(other: SqliteStore, op: str, arg: Any, ids: list[str], counter: list[int]) -> None:
    """One write by the second store."""

    def new(batch: list[tuple[tuple[float, ...], tuple[str, str]]]) -> list[Memory]:
        made = []
        for vector, scope in batch:
            counter[0] += 1
            made.append(_memory(counter[0], vector, scope))
        return made

    def pick(index: int) -> str | None:
        return ids[index % len(ids)] if ids else None

    if op == "add":
        batch = new(arg)
        other.add_many(batch)
        ids.extend(m.id for m in batch)
    elif op == "add_in_transaction":
        batch = new(arg)
        with other.atomic():
            for memory in batch:
                other.add(memory)
        ids.extend(m.id for m in batch)
    elif op == "add_then_fail":
        batch = new(arg)
        with pytest.raises(_FailedError):
            _fail_after(other, lambda: other.add_many(batch))
    elif op in ("revector", "other_model") and (target := pick(arg[0])):
        model = MODEL if op == "revector" else OTHER
        other.update(target, MemoryPatch(embedding=Embedding(model, arg[1])))
    elif op == "no_vector" and (target := pick(arg)):
        other.update(target, MemoryPatch(embedding=None))
    elif op == "archive" and (target := pick(arg)):
        other.update(
            target, MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=9))
        )
    elif op == "unarchive" and (target := pick(arg)):
        other.update(target, MemoryPatch(current_level=2, archived_at=None))
    elif op == "delete" and ids:
        doomed = list(dict.fromkeys(ids[i % len(ids)] for i in arg))
        other.delete_many(doomed)
        ids[:] = [i for i in ids if i not in doomed]
    elif op == "delete_then_fail" and (target := pick(arg)):
        with pytest.raises(_FailedError):
            _fail_after(other, lambda: other.delete(target))
    elif op == "mixed_transaction" and (target := pick(arg[0])):
        batch = new(arg[2])
        with other.atomic():
            other.update(target, MemoryPatch(embedding=Embedding(MODEL, arg[1])))
            other.add_many(batch)
            other.update(
                target, MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=3))
            )
        ids.extend(m.id for m in batch)
    elif op == "nothing_visible" and (target := pick(arg)):
        other.update(target, MemoryPatch(recall_count=arg))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    ops=st.lists(_op, min_size=1, max_size=10),
    queries=st.lists(_vector, min_size=1, max_size=2),
)
def test_a_warm_cache_catches_up_on_another_stores_writes(
    folder: Path, ops: list[Any], queries: list[tuple[float, ...]]
) -> None:
    path = folder / f"s{len(list(folder.iterdir()))}.db"
    warm, other = SqliteStore(path), SqliteStore(path)
    counter = [0]
    ids: list[str] = []
    try:
        # Enough rows that some dead ones are kept before the matrix is compacted.
        start = [((1.0, float(n % 3), 0.0, -1.0), ("ann", "a")) for n in range(24)]
        _apply(other, "add", start, ids, counter)
        _search(warm, queries[0])  # the cache is warm from here on
        assert _cache(warm)[1].loaded_from == "sqlite"
        for op, arg in ops:
            before, previous = _cache(warm)
            seen = _search_cache(previous, queries[0])
            if op == "warm_add":  # this store's own insert, carried (see .vector_delta)
                _apply(warm, "add", arg, ids, counter)
            elif op == "warm_search_in_transaction":  # a cache used, never kept
                with warm.atomic():
                    _search(warm, arg)
            else:
                _apply(other, op, arg, ids, counter)
            for query in queries:
                assert _search(warm, query) == _fresh(path, query), (op, arg)
            version, vectors = _cache(warm)
            if version != before and vectors is not None and op != "warm_add":
                # Caught up from the log: never a full load (the changes are few).
                assert vectors.loaded_from == "log", (op, arg)
            # Copy-on-write: the cache it started from answers as it did.
            assert _search_cache(previous, queries[0]) == seen
    finally:
        warm.close()
        other.close()


def test_a_search_after_another_process_writes_catches_up(
    pair: tuple[Path, SqliteStore, SqliteStore],
) -> None:
    path, warm, other = pair
    other.add_many([_memory(n, (1.0, float(n), 0.0, 0.0), ("ann", "a")) for n in range(1, 6)])
    query = (1.0, 0.5, 0.0, 0.0)
    _search(warm, query)
    loaded = _cache(warm)[1]
    other.add(_memory(6, (0.0, 0.0, 1.0, 0.0), ("ben", "a")))
    other.update(build_memory(2).id, MemoryPatch(embedding=Embedding(MODEL, (0.0, 0.0, 0.0, 1.0))))
    other.delete(build_memory(3).id)
    assert _search(warm, query) == _fresh(path, query)
    caught = _cache(warm)[1]
    assert caught.loaded_from == "log"
    assert sorted(caught.ids.tolist()) == sorted(build_memory(n).id for n in (1, 2, 4, 5, 6))
    # Copy-on-write: the cache it started from is as it was.
    assert loaded.size == 5
    assert build_memory(3).id in loaded.ids.tolist()
    assert warm.vector_search(MODEL, (0.0, 0.0, 1.0, 0.0), MemoryFilter(), 1)[0][0] == (
        build_memory(6).id
    )


def test_a_stale_cache_file_is_brought_up_to_date(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    query = (1.0, 1.0, 0.0, 0.0)
    with SqliteStore(path) as first:
        first.add_many([_memory(n, (1.0, float(n), 0.0, 0.0), ("ann", "a")) for n in range(1, 5)])
        _search(first, query)  # writes the file
    with SqliteStore(path) as writer:
        writer.add(_memory(5, (0.0, 1.0, 0.0, 0.0), ("ann", "b")))
        writer.update(
            build_memory(1).id,
            MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=2)),
        )
    with SqliteStore(path) as reader:
        answers = _search(reader, query)
        assert _cache(reader)[1].loaded_from == "log"
        # Written again, so the next process maps it as it is now.
        version = _cache(reader)[0]
        saved = VectorFiles(path).read(MODEL, version)
        assert saved is not None
        assert sorted(saved.ids.tolist()) == sorted(build_memory(n).id for n in range(1, 6))
        assert saved.archived.tolist() == [i == build_memory(1).id for i in saved.ids.tolist()]
    assert answers == _fresh(path, query)


def test_a_cache_caught_up_in_memory_is_written_when_asked(
    pair: tuple[Path, SqliteStore, SqliteStore],
) -> None:
    path, warm, other = pair
    other.add_many([_memory(n, (1.0, float(n), 0.0, 0.0), ("ann", "a")) for n in range(1, 21)])
    _search(warm, (1.0, 0.0, 0.0, 0.0))
    other.delete(build_memory(2).id)
    _search(warm, (1.0, 0.0, 0.0, 0.0))
    version, caught = _cache(warm)
    assert caught.loaded_from == "log"
    assert caught.dead is not None  # the deleted row is still in the matrix, never found
    assert build_memory(2).id in caught.ids.tolist()
    # Kept in memory only (a warm process); written when asked, as after the drain's writes.
    assert VectorFiles(path).read(MODEL, version) is None
    warm.save_vector_cache(MODEL)
    saved = VectorFiles(path).read(MODEL, version)
    assert saved is not None
    assert sorted(saved.ids.tolist()) == sorted(build_memory(n).id for n in range(1, 21) if n != 2)
    assert saved.dead is None


def test_a_pruned_log_means_a_full_load(
    pair: tuple[Path, SqliteStore, SqliteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, warm, other = pair
    monkeypatch.setattr(vector_version, "KEEP_ROWS", 3)
    other.add(_memory(1, (1.0, 0.0, 0.0, 0.0), ("ann", "a")))
    query = (1.0, 0.0, 0.0, 0.0)
    _search(warm, query)
    for n in range(2, 6):
        other.add(_memory(n, (1.0, float(n), 0.0, 0.0), ("ann", "a")))
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT COUNT(*) FROM vector_log").fetchone() == (3,)
    finally:
        raw.close()
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "sqlite"
    other.add(_memory(6, (0.0, 1.0, 0.0, 0.0), ("ann", "a")))  # within the window again
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "log"


def test_a_write_too_large_to_list_logs_a_reload(
    pair: tuple[Path, SqliteStore, SqliteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, warm, other = pair
    other.add(_memory(1, (1.0, 0.0, 0.0, 0.0), ("ann", "a")))
    query = (1.0, 1.0, 0.0, 0.0)
    _search(warm, query)
    monkeypatch.setattr(vector_version, "MAX_LOGGED_IDS", 2)
    other.add_many([_memory(n, (1.0, float(n), 0.0, 0.0), ("ben", "a")) for n in range(2, 5)])
    raw = sqlite3.connect(path)
    try:
        assert raw.execute(
            "SELECT memory_id, reload FROM vector_log ORDER BY seq DESC LIMIT 1"
        ).fetchone() == (None, 1)
    finally:
        raw.close()
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "sqlite"


def test_more_changes_than_the_share_means_a_full_load(
    pair: tuple[Path, SqliteStore, SqliteStore],
) -> None:
    path, warm, other = pair
    other.add_many([_memory(n, (1.0, float(n % 3), 0.0, 0.0), ("ann", "a")) for n in range(1, 11)])
    query = (1.0, 1.0, 0.0, 0.0)
    _search(warm, query)
    many = change_limit(10) + 1
    other.add_many(
        [_memory(n, (float(n % 5), 1.0, 0.0, 0.0), ("ben", "b")) for n in range(11, 11 + many)]
    )
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "sqlite"
    assert _cache(warm)[1].size == 10 + many


def test_a_vector_of_another_dimension_means_a_full_load(
    pair: tuple[Path, SqliteStore, SqliteStore],
) -> None:
    path, warm, other = pair
    other.add(_memory(1, (1.0, 0.0, 0.0, 0.0), ("ann", "a")))
    query = (1.0, 0.0, 0.0, 0.0)
    _search(warm, query)
    other.add(build_memory(2, embedding=Embedding(MODEL, (1.0, 0.0, 0.0, 0.0, 1.0))))
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "sqlite"
    # Two dimensions at one count each: the load keeps one and is never carried forward.
    other.add(_memory(3, (0.0, 1.0, 0.0, 0.0), ("ann", "a")))
    assert _search(warm, query) == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "sqlite"


def test_the_log_holds_ids_only_and_an_erasure_still_reaches_the_warm_cache(
    pair: tuple[Path, SqliteStore, SqliteStore],
) -> None:
    path, warm, other = pair
    secret = _memory(1, (1.0, 0.0, 0.0, 0.0), ("ann", "a"))
    other.add_many([secret, _memory(2, (0.0, 1.0, 0.0, 0.0), ("ann", "a"))])
    query = (1.0, 0.0, 0.0, 0.0)
    assert _search(warm, query)[0][0][0] == secret.id
    other.delete(secret.id)
    raw = sqlite3.connect(path)
    try:
        columns = [row[1] for row in raw.execute("PRAGMA table_info(vector_log)")]
        logged = raw.execute("SELECT memory_id FROM vector_log").fetchall()
    finally:
        raw.close()
    assert columns == ["seq", "version", "memory_id", "reload"]
    assert (secret.id,) in logged
    answers = _search(warm, query)
    assert all(found != secret.id for answer in answers for found, _ in answer)
    assert answers == _fresh(path, query)
    assert _cache(warm)[1].loaded_from == "log"
    assert secret.id not in _cache(warm)[1].ids.tolist()


def test_a_store_made_before_the_log_loads_once_then_catches_up(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite.connection import connect
    from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, migrate

    path = tmp_path / "m.db"
    conn = connect(path, 1000)
    try:
        assert migrate(conn, target=10)[-1] == 10
    finally:
        conn.close()
    raw = sqlite3.connect(path)
    try:
        assert (
            raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector_log'").fetchone() is None
        )
        raw.execute("INSERT INTO state (key, value) VALUES ('vectors_version', '77')")
        raw.commit()
    finally:
        raw.close()
    with SqliteStore(path) as warm, SqliteStore(path) as other:
        assert warm.schema_version == LATEST_VERSION >= 11
        query = (1.0, 0.0, 0.0, 0.0)
        assert _search(warm, query) == [[]] * len(FILTERS) * 2
        assert _cache(warm) == (77, None)
        other.add(_memory(1, (1.0, 0.0, 0.0, 0.0), ("ann", "a")))
        # Version 77 was set before the log existed: the log cannot say what changed since.
        assert _search(warm, query) == _fresh(path, query)
        assert _cache(warm)[1].loaded_from == "sqlite"
        other.add(_memory(2, (0.0, 1.0, 0.0, 0.0), ("ann", "a")))
        assert _search(warm, query) == _fresh(path, query)
        assert _cache(warm)[1].loaded_from == "log"


def _blob(*values: float) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()


def test_caches_made_from_one_cache_never_write_each_others_rows() -> None:
    base = build(
        MODEL, 1, DIM, ["a", "b"], ["ann"] * 2, ["a"] * 2, [False] * 2, [_blob(1, 0, 0, 0)] * 2
    )
    first = extended(base, 2, ["c"], [("ann", "a")], [False], [_blob(0, 1, 0, 0)], "log")
    second = extended(first, 3, ["d"], [("ben", "a")], [True], [_blob(0, 0, 1, 0)], "log")
    # The second grew the first's matrix in place (no copy of the old vectors) ...
    assert first.spare is not None
    assert second.spare is first.spare
    assert np.shares_memory(first.columns, second.columns)
    # ... so another cache made from the first must not write where the second reads.
    sibling = extended(first, 4, ["e"], [("ann", "b")], [False], [_blob(0, 0, 0, 1)], "log")
    assert not np.shares_memory(sibling.columns, second.columns)
    assert second.columns[:, 3].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert sibling.columns[:, 3].tolist() == [0.0, 0.0, 0.0, 1.0]
    assert (second.ids.tolist(), sibling.ids.tolist()) == (
        ["a", "b", "c", "d"],
        ["a", "b", "c", "e"],
    )
    assert base.size == 2
    assert first.size == 3


def test_a_salvaged_store_logs_a_reload(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite.recover import salvage

    source, target = tmp_path / "old.db", tmp_path / "new.db"
    with SqliteStore(source) as store:
        store.add_many([_memory(n, (1.0, float(n), 0.0, 0.0), ("ann", "a")) for n in (1, 2)])
    salvage(source, target)
    raw = sqlite3.connect(target)
    try:
        last = raw.execute(
            "SELECT version, memory_id, reload FROM vector_log ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        current = raw.execute("SELECT value FROM state WHERE key = 'vectors_version'").fetchone()
    finally:
        raw.close()
    assert (str(last[0]), last[1], last[2]) == (current[0], None, 1)
