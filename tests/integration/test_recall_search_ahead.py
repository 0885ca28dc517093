"""A recall's vector search on its own thread beside the lexical search (``Store.parallel_search``).

The vector search of a recall runs on a thread of its own while the lexical search runs on the
caller's: on PostgreSQL through a second pooled connection, on SQLite through the store's
second connection while the caller holds the lock. With ``[store] parallel_search`` off both
run in line (when a store allows it: tests/contract/test_store_parallel_search.py). These tests pin
what that must not change: the same recall as in line, a pool of one connection still serves
it, a recall inside the caller's own snapshot or transaction runs in line (its thread could
never get a connection, nor see that transaction), and an error on the thread reaches the
caller.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy  # noqa: F401 (the SQLite store searches beside the caller once it is loaded)
import pytest

from kioku import Kioku
from kioku.config.schema import Config
from kioku.errors import KiokuError
from kioku.ports.store import Store
from kioku.service.recall.search_ahead import SEARCH_THREADS, Ahead
from tests.contract.conftest import ADAPTERS, open_store, postgres_store
from tests.postgres_server import postgres_url  # noqa: F401 (a fixture)

JST = timezone(timedelta(hours=9))
TURNS = [
    ("My sister Hana is getting married in Kyoto on June 8.", "Congratulations to Hana!"),
    ("The Osaka office moves to Umeda in March.", "Umeda, from March."),
    ("I adopted a grey cat called Tama from the shelter.", "Tama sounds lovely."),
    ("We chose PostgreSQL for the billing service.", "PostgreSQL it is."),
    ("Hana asked me to give a speech at the reception.", "A speech for Hana, noted."),
    ("Tama knocked the coffee off my desk this morning.", "Cats will be cats."),
    ("Our team lunch is at the ramen place near Umeda station.", "Ramen near Umeda."),
    ("I am nervous about the billing migration next week.", "It will go fine."),
]
QUERIES = [
    "Hana wedding speech",
    "what is my cat called",
    "where does the Osaka office move",
    "billing service database",
    "ramen lunch",
]


def _fill(store: Store) -> Kioku:
    kioku = Kioku(store)
    for n, (user, assistant) in enumerate(TURNS):
        kioku.remember_turn(user, assistant, at=datetime(2025, 3, n + 1, 10, tzinfo=JST))
    return kioku


def _seen(kioku: Kioku, query: str) -> list[tuple[str, float, float]]:
    result = kioku.recall(query, mark=False, at=datetime(2025, 3, 20, 10, tzinfo=JST))
    return [
        (item.memory.id, round(item.final, 12), round(item.similarity, 12)) for item in result.items
    ]


def _in_line() -> Config:
    """The default configuration with ``[store] parallel_search`` off."""
    config = Config()
    return replace(config, store=replace(config.store, parallel_search=False))


@pytest.fixture
def pg_store(postgres_url: str, tmp_path: Path) -> Iterator[Store]:  # noqa: F811
    # One connection, and a short wait for it: a recall that needed two at once would fail.
    with postgres_store(tmp_path, pool_max=1, timeout_s=3) as store:
        yield store


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each store: PostgreSQL's with a pool of one connection (``pg_store``)."""
    if request.param == "postgres":
        yield request.getfixturevalue("pg_store")
        return
    opened = open_store(request.param, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def test_a_recall_with_its_vector_search_ahead_is_the_recall_in_line(store: Store) -> None:
    kioku = _fill(store)
    in_line = Kioku(store, _in_line())
    for query in QUERIES:
        ahead = _seen(kioku, query)
        assert ahead, query
        assert ahead == _seen(in_line, query), query


class Recording:
    """A store as it is, noting which thread ran each search."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.threads: dict[str, set[int]] = {"lexical": set(), "vector": set()}

    def search_lexical(self, *args: object) -> object:
        self.threads["lexical"].add(threading.get_ident())
        return self._store.search_lexical(*args)  # type: ignore[arg-type]

    def vector_search(self, *args: object) -> object:
        self.threads["vector"].add(threading.get_ident())
        return self._store.vector_search(*args)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


def test_the_vector_search_runs_on_its_own_thread(store: Store) -> None:
    _fill(store)
    recording = Recording(store)
    result = Kioku(recording).recall("Tama the cat", mark=False)  # type: ignore[arg-type]
    assert result.items
    caller = {threading.get_ident()}
    assert recording.threads["lexical"] == caller
    assert len(recording.threads["vector"]) == 1
    assert recording.threads["vector"] != caller
    # [store] parallel_search = false: in line on every store.
    in_line = Recording(store)
    assert Kioku(in_line, _in_line()).recall("Tama the cat", mark=False).items  # type: ignore[arg-type]
    assert in_line.threads["vector"] == caller


def test_a_recall_inside_the_callers_snapshot_runs_in_line(store: Store) -> None:
    kioku = _fill(store)
    expected = _seen(kioku, "Hana wedding speech")
    # On PostgreSQL the pool has one connection and this snapshot holds it: a search on
    # another thread would wait for it until the pool gives up.
    with store.reading():
        recording = Recording(store)
        seen = Kioku(recording).recall(  # type: ignore[arg-type]
            "Hana wedding speech", mark=False, at=datetime(2025, 3, 20, 10, tzinfo=JST)
        )
        assert recording.threads["vector"] == {threading.get_ident()}
    assert [(i.memory.id, round(i.final, 12)) for i in seen.items] == [
        (memory_id, final) for memory_id, final, _ in expected
    ]


def test_an_error_on_the_search_thread_reaches_the_caller() -> None:
    def fail() -> list[tuple[str, float]]:
        raise KiokuError("the vector index is unreadable")

    ahead = Ahead(fail)
    with pytest.raises(KiokuError, match="unreadable"):
        ahead.result()
    ahead.wait()  # and waiting on it again is quiet

    done = Ahead(lambda: [("m1", 0.5)])
    assert done.result() == [("m1", 0.5)]


def test_searches_run_on_a_pool_of_threads_that_outlive_a_recall() -> None:
    # Each search notes the thread that ran it; the thread objects are kept alive, so two
    # searches on the same object ran on one thread.
    seen: list[threading.Thread] = []

    def note() -> list[tuple[str, float]]:
        seen.append(threading.current_thread())
        return []

    for _ in range(3 * SEARCH_THREADS):
        Ahead(note).result()
    caller = threading.current_thread()
    assert caller not in seen
    assert len({id(thread) for thread in seen}) <= SEARCH_THREADS


def test_concurrent_searches_beyond_the_pool_wait_and_all_finish() -> None:
    gate = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def hold(n: int) -> Callable[[], list[tuple[str, float]]]:
        def work() -> list[tuple[str, float]]:
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
            gate.wait(30)
            with lock:
                running -= 1
            return [(f"m{n}", 1.0)]

        return work

    searches = [Ahead(hold(n)) for n in range(SEARCH_THREADS + 4)]
    gate.set()
    assert [a.result() for a in searches] == [[(f"m{n}", 1.0)] for n in range(len(searches))]
    assert most <= SEARCH_THREADS


FORKED = """
import os, sys
from kioku.service.recall.search_ahead import Ahead
assert Ahead(lambda: [("parent", 1.0)]).result() == [("parent", 1.0)]
pid = os.fork()
if pid == 0:
    ok = Ahead(lambda: [("child", 1.0)]).result() == [("child", 1.0)]
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_searches_on_threads_of_its_own() -> None:
    # The parent's threads are not in the child: a child using the parent's pool would wait
    # for ever.
    done = subprocess.run(
        [sys.executable, "-c", FORKED], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
