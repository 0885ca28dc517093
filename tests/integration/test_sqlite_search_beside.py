"""A vector search on another thread runs beside the thread that holds the SQLite store's lock.

The SQLite store shares one connection between threads under a lock. A vector search that
finds the lock held by another thread (a recall's lexical search inside ``reading()``, or a
writer inside ``atomic()``) reads through a second connection instead of waiting
(adapters/store/sqlite/transactions.py, ``_beside``). These tests pin what that must give:
the search finishes while the other thread still holds the lock; it sees the last commit and
never a transaction still open; its answers, and the warm cache it shares with the rest of
the store afterwards, are those of a store opened afresh on the file; closing the store closes
the second connection too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy  # noqa: F401 (the SQLite store searches beside the caller once it is loaded)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import BASE_TIME, build_memory, vector_memory

MODEL = "test-model"
DIM = 4
#: Generous: only a search that waits for the lock holder (which waits for it) runs out.
_DEADLOCK_S = 60.0


def _search(store: SqliteStore, query: tuple[float, ...]) -> list[Any]:
    answers = []
    for flt in (
        MemoryFilter(),
        MemoryFilter(user_id="ann"),
        MemoryFilter(user_id="ben", archived=False),
        MemoryFilter(archived=True),
        MemoryFilter(kind="episode"),
    ):
        found = store.vector_search(MODEL, query, flt, 100)
        answers.append([(i, round(score, 9)) for i, score in found])
    return answers


def _on_thread(work: Callable[[], Any]) -> Any:
    """``work()`` on a new thread, while the caller goes on holding what it holds."""
    done: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as exc:  # reported to the caller
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(_DEADLOCK_S)
    assert not thread.is_alive(), "the search waited for the thread holding the store's lock"
    if failed:
        raise failed[0]
    return done[0]


def _fresh(path: Path, query: tuple[float, ...]) -> list[Any]:
    fresh = SqliteStore(path)
    try:
        return _search(fresh, query)
    finally:
        fresh.close()


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    opened = SqliteStore(tmp_path / "memories.db")
    opened.add_many(
        [
            vector_memory(1, (1.0, 0.0, 0.0, 0.0)),
            vector_memory(2, (0.0, 1.0, 0.0, 0.0), "ben"),
            vector_memory(3, (1.0, 1.0, 0.0, 0.0)),
        ]
    )
    return opened


def test_a_search_beside_a_snapshot_finishes_while_it_is_held(store: SqliteStore) -> None:
    query = (1.0, 0.2, 0.0, 0.0)
    try:
        expected = _search(store, query)
        with store.reading():
            assert store.parallel_search is False  # this thread's snapshot: not beside it
            beside = _on_thread(lambda: _search(store, query))
            seen = _on_thread(lambda: store.parallel_search)
        assert beside == expected
        assert seen is True
        assert store.parallel_search is True
    finally:
        store.close()


def test_a_search_beside_an_open_transaction_sees_the_last_commit(store: SqliteStore) -> None:
    query = (0.0, 0.0, 1.0, 0.0)
    path = store.path
    try:
        before = _fresh(path, query)
        with store.atomic():
            store.add(vector_memory(9, query))  # the best match once committed
            assert store.parallel_search is False
            beside = _on_thread(lambda: _search(store, query))
        assert beside == before
        assert all(memory_id != build_memory(9).id for memory_id, _ in beside[0])
        after = _on_thread(lambda: _search(store, query))
        assert after[0][0][0] == build_memory(9).id
        assert after == _fresh(path, query) == _search(store, query)
    finally:
        store.close()


def _descriptors(path: Path) -> int:
    """Open file descriptors of this process on the database file."""
    count = 0
    for entry in os.scandir("/proc/self/fd"):
        try:
            if os.readlink(entry.path) == str(path):
                count += 1
        except OSError:
            continue
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_closing_the_store_closes_the_second_connection(store: SqliteStore) -> None:
    path = store.path.resolve()
    one = _descriptors(path)
    with store.reading():
        _on_thread(lambda: _search(store, (1.0, 0.0, 0.0, 0.0)))
    assert _descriptors(path) == one + 1  # the second connection, kept for the next search
    store.close()
    assert _descriptors(path) == 0
    with pytest.raises(Exception, match="closed"):
        store.vector_search(MODEL, (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5)


def test_a_process_without_numpy_searches_in_line(tmp_path: Path) -> None:
    # A hook's fresh process searches through the pure-Python reader: a thread would only
    # add its start and a second connection.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kioku.adapters.store.sqlite.store import SqliteStore\n"
        "store = SqliteStore(Path(sys.argv[1]))\n"
        "print('numpy' in sys.modules, store.parallel_search)\n"
        "import numpy\n"
        "print(store.parallel_search)\n"
        "store.close()\n"
    )
    path = tmp_path / "memories.db"
    SqliteStore(path).close()  # made and migrated here, opened there as a hook opens it
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.split() == ["False", "False", "True"]


_vector = st.lists(st.integers(-3, 3), min_size=DIM, max_size=DIM).map(
    lambda values: tuple(float(v) for v in values)
)
_op = st.one_of(
    st.tuples(st.just("add"), st.tuples(_vector, st.sampled_from(["ann", "ben"]))),
    st.tuples(st.just("archive"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("search_beside"), _vector),
    st.tuples(st.just("search_beside_writer"), _vector),
    st.tuples(st.just("search"), _vector),
)


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("beside")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(_op, min_size=1, max_size=10))
def test_searches_beside_and_in_line_answer_as_a_fresh_store(folder: Path, ops: list[Any]) -> None:
    path = folder / f"s{len(list(folder.iterdir()))}.db"
    store = SqliteStore(path)
    ids: list[str] = []
    n = 0
    try:
        store.add(vector_memory(n := n + 1, (1.0, 0.0, 0.0, 0.0)))
        ids.append(build_memory(n).id)
        for op, arg in ops:
            if op == "add":
                vector, user = arg
                store.add(vector_memory(n := n + 1, vector, user))
                ids.append(build_memory(n).id)
            elif op == "archive":
                memory = store.get(ids[arg % len(ids)]) if ids else None
                if memory is not None and memory.archived_at is None:
                    patch = MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=9))
                    store.update(memory.id, patch)
            elif op == "delete" and ids:
                store.delete_many([ids.pop(arg % len(ids))])
            elif op == "search_beside":
                with store.reading():
                    beside = _on_thread(lambda q=arg: _search(store, q))
                assert beside == _fresh(path, arg)
            elif op == "search_beside_writer":
                # A write waits in the open transaction: the search sees what came before it.
                expected = _fresh(path, arg)
                with store.atomic():
                    store.add(vector_memory(n := n + 1, arg))
                    beside = _on_thread(lambda q=arg: _search(store, q))
                ids.append(build_memory(n).id)
                assert beside == expected
            elif op == "search":
                assert _search(store, arg) == _fresh(path, arg)
        final = (1.0, 1.0, 1.0, 1.0)
        assert _search(store, final) == _fresh(path, final)
    finally:
        store.close()
