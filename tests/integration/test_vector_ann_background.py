"""The HNSW graph is built, checked and installed in the background
(adapters/store/sqlite/vector_ann_index.py): searches never wait for it, and an erasure
that lands while a graph is built never reaches the disk nor the installed graph.

The builder's steps are held with ``AnnIndexes.on_step``, a hook the worker calls with the
step's name (the test blocks it on an event); everything else is the real store on a real
file, and "another process" is a second store on the same file, or a real process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.adapters.store.sqlite.vector_ann import Graph, available
from tests.integration.test_vector_ann import (
    EVERYONE,
    MODEL,
    ROWS,
    THRESHOLD,
    _copy,
    _graph,
    _graph_files,
    _queries,
    _ready,
    seeded,
)

pytestmark = pytest.mark.skipif(not available(), reason="usearch (the ann extra) is not installed")

__all__ = ["seeded"]  # the module-scoped fixture, shared with test_vector_ann

#: How long a held step waits for the test at most (a guard against a hang, not a timing).
GUARD = 120.0


class Held:
    """Holds the worker at the first ``step``s it reaches until :meth:`release`."""

    def __init__(self, step: str, times: int = 1) -> None:
        self.step = step
        self.times = times
        self.seen: list[tuple[str, Graph | None]] = []
        self.reached = threading.Event()
        self.released = threading.Event()
        self.timed_out = False

    def __call__(self, step: str, graph: Graph | None) -> None:
        self.seen.append((step, graph))
        held = [s for s, _ in self.seen if s == self.step]
        if step == self.step and len(held) <= self.times:
            self.reached.set()
            if not self.released.wait(GUARD):
                self.timed_out = True

    def release(self) -> None:
        self.released.set()

    def graphs(self, step: str) -> list[Graph]:
        return [g for s, g in self.seen if s == step and g is not None]


def _stored_bytes(graph: Graph, memory_id: str) -> bytes:
    """The graph's own copy of a memory's vector (in the scalar type it stores)."""
    slot = int(graph.slot_of_row[graph.vectors.ids.tolist().index(memory_id)])
    kept = {"I8": np.int8, "F16": np.float16, "F32": np.float32}[graph.index.dtype.name]
    stored = np.asarray(graph.index.get(slot, dtype=kept)).tobytes()
    assert len(stored) >= 16
    return stored


def _files_holding(directory: Path, data: bytes) -> list[str]:
    return [p.name for p in directory.rglob("*") if p.is_file() and data in p.read_bytes()]


def test_a_save_returns_at_once_and_searches_are_exact_until_the_graph_is_installed(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 10, seed=21)
    held = Held("built")
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as store, SqliteStore(path) as exact:
        store._ann_indexes.on_step = held
        store.save_vector_cache(MODEL)  # returns while the builder is held
        assert held.reached.wait(GUARD)
        assert not store.wait_vector_graphs(MODEL, timeout=0)
        for query in queries:
            assert store.vector_search(MODEL, query, EVERYONE, 10) == exact.vector_search(
                MODEL, query, EVERYONE, 10
            )
        assert _graph(store) is None
        assert not any(part.exists() for part in _graph_files(path))
        held.release()
        assert store.wait_vector_graphs(MODEL, timeout=GUARD)
        assert not held.timed_out
        assert _graph(store) is not None
        assert _graph(store).slots == ROWS
        assert all(part.is_file() for part in _graph_files(path))
        assert not list(path.parent.rglob("*.tmp"))


@pytest.mark.parametrize("where", ["this store", "another store"])
def test_a_deletion_during_a_build_is_never_written_nor_installed(
    seeded: tuple[Path, np.ndarray], tmp_path: Path, where: str
) -> None:
    path = _copy(seeded, tmp_path)
    query = _queries(seeded[1], 1, seed=22)[0]
    held = Held("built")
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as store, SqliteStore(path) as other:
        victim = other.vector_search(MODEL, query, EVERYONE, 1)[0][0]
        store._ann_indexes.on_step = held
        store.save_vector_cache(MODEL)
        assert held.reached.wait(GUARD)
        first = held.graphs("built")[0]
        stored = _stored_bytes(first, victim)  # the victim's vector is in the graph built
        (store if where == "this store" else other).delete(victim)
        other.save_vector_cache(MODEL)  # a cache file again, which the graph's map can name
        held.release()
        assert store.wait_vector_graphs(MODEL, timeout=GUARD)
        assert not held.timed_out
        assert _files_holding(path.parent, stored) == []
        graph = _graph(store)
        assert graph is not None
        every = np.asarray(graph.index.get(np.arange(graph.slots, dtype=np.uint64), dtype=np.int8))
        assert stored not in {row.tobytes() for row in every.reshape(graph.slots, -1)}
        # Discarded after the build and built again from a snapshot without the victim.
        assert graph.slots == ROWS - 1
        assert len(held.graphs("built")) == 2
        assert all(part.is_file() for part in _graph_files(path))
        assert victim not in {i for i, _ in store.vector_search(MODEL, query, EVERYONE, 10)}


def test_a_deletion_after_the_files_are_written_keeps_them_out_of_place(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    query = _queries(seeded[1], 1, seed=23)[0]
    held = Held("written")
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as store, SqliteStore(path) as other:
        victim = other.vector_search(MODEL, query, EVERYONE, 1)[0][0]
        store._ann_indexes.on_step = held
        store.save_vector_cache(MODEL)
        assert held.reached.wait(GUARD)
        stored = _stored_bytes(held.graphs("written")[0], victim)
        temps = list(path.parent.rglob(".*.tmp"))
        assert temps  # written and synced under temporary names, not in place yet
        assert not any(part.exists() for part in _graph_files(path))
        other.delete(victim)  # an erasure removes the temporary files too
        assert not any(temp.exists() for temp in temps)
        held.release()
        assert store.wait_vector_graphs(MODEL, timeout=GUARD)
        assert not held.timed_out
        assert _graph(store).slots == ROWS - 1
        assert _files_holding(path.parent, stored) == []


def test_a_new_process_searches_exactly_until_the_saved_graph_is_checked(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    """The whole graph file's checksum is read in the background, not in the first search:
    the search answers (exactly) while that check is held."""
    path = _copy(seeded, tmp_path)
    _ready(path).close()
    queries = _queries(seeded[1], 5, seed=24)
    held = Held("verify")
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as fresh, SqliteStore(path) as exact:
        fresh._ann_indexes.on_step = held
        truth = [exact.vector_search(MODEL, q, EVERYONE, 10) for q in queries]
        assert fresh.vector_search(MODEL, queries[0], EVERYONE, 10) == truth[0]
        assert held.reached.wait(GUARD)
        for query, want in zip(queries, truth, strict=True):
            assert fresh.vector_search(MODEL, query, EVERYONE, 10) == want
        assert _graph(fresh) is None
        held.release()
        assert fresh.wait_vector_graphs(MODEL, timeout=GUARD)
        assert not held.timed_out
        assert [fresh.vector_search(MODEL, q, EVERYONE, 10) for q in queries] == truth
        graph = _graph(fresh)
        assert graph is not None
        assert graph.viewed


_KILLED_WHILE_WRITING = """
import sys, threading
from kioku.adapters.store.sqlite.store import SqliteStore
path, model, threshold = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = SqliteStore(path, ann_min_vectors=threshold)
def hold(step, graph):
    if step == "written":
        print("written", flush=True)
        threading.Event().wait()
store._ann_indexes.on_step = hold
store.save_vector_cache(model)
threading.Event().wait()
"""


def test_a_process_killed_while_it_writes_the_graph_leaves_nothing_trusted(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 3, seed=25)
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WHILE_WRITING, str(path), MODEL, str(THRESHOLD)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "written"
    finally:
        child.kill()
        child.wait()
    assert list(path.parent.rglob(".*.tmp"))  # left behind, never read
    assert not any(part.exists() for part in _graph_files(path))
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as fresh, SqliteStore(path) as exact:
        for query in queries:
            got: Any = fresh.vector_search(MODEL, query, EVERYONE, 10)
            assert got == exact.vector_search(MODEL, query, EVERYONE, 10)
        assert fresh.wait_vector_graphs(MODEL, timeout=GUARD)
        assert _graph(fresh) is None
        fresh.save_vector_cache(MODEL, wait=True)
        assert _graph(fresh) is not None
        assert all(part.is_file() for part in _graph_files(path))


def test_closing_the_store_stops_a_build_and_writes_nothing(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    held = Held("built")
    store = SqliteStore(path, ann_min_vectors=THRESHOLD)
    store._ann_indexes.on_step = held
    store.save_vector_cache(MODEL)
    assert held.reached.wait(GUARD)
    store.close()
    held.release()
    assert store.wait_vector_graphs(MODEL, timeout=GUARD)
    assert not held.timed_out
    assert _graph(store) is None
    assert not any(part.exists() for part in _graph_files(path))
    assert not list(path.parent.rglob("*.tmp"))
