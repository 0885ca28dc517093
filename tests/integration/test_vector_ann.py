"""The HNSW graph of a large SQLite store (adapters/store/sqlite/vector_ann.py, the ``ann`` extra).

Past ``ann_min_vectors`` vectors (set low here), a query with many non-zero components is
answered from the graph's candidates, scored exactly, and the rows the graph does not cover
yet. Each test compares with a second store on the same file that always searches exactly:
the ids found must be (nearly all) the same and the scores bit for bit those of exact search.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.adapters.store.sqlite.vector_ann import GRAPH_SUFFIX, MAP_SUFFIX, available
from kioku.adapters.store.sqlite.vector_file import VectorFiles
from kioku.core.model import Embedding, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import BASE_TIME, build_memory

pytestmark = pytest.mark.skipif(not available(), reason="usearch (the ann extra) is not installed")

MODEL = "ann-test-model"
DIM = 48
ROWS = 3000
THRESHOLD = 1000
EVERYONE = MemoryFilter()


def _vectors(rng: np.random.Generator, n: int, centres: np.ndarray) -> np.ndarray:
    """Points around a few centres (embeddings cluster; uniform noise would not)."""
    picked = centres[rng.integers(0, centres.shape[0], n)]
    return (picked + 0.6 * rng.standard_normal((n, DIM))).astype(np.float32)


def _memory(n: int, vector: np.ndarray, user: str = "ann") -> Memory:
    return build_memory(
        n,
        user_id=user,
        agent_id="a",
        embedding=Embedding(MODEL, tuple(float(v) for v in vector)),
    )


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A store of ROWS vectors in two scopes, and the centres they were drawn around."""
    path = tmp_path_factory.mktemp("ann") / "memories.db"
    rng = np.random.default_rng(18)
    centres = rng.standard_normal((12, DIM)).astype(np.float32) * 2
    points = _vectors(rng, ROWS, centres)
    with SqliteStore(path) as store:
        store.add_many([_memory(n, points[n], "ann" if n % 3 else "ben") for n in range(ROWS)])
    return path, centres


def _copy(seeded: tuple[Path, np.ndarray], tmp_path: Path) -> Path:
    """A private copy of the seeded store (its database only)."""
    target = tmp_path / "memories.db"
    target.write_bytes(seeded[0].read_bytes())
    return target


def _queries(centres: np.ndarray, n: int, seed: int = 5) -> list[tuple[float, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(float(v) for v in q) for q in _vectors(rng, n, centres)]


def _graph_files(path: Path) -> list[Path]:
    base = VectorFiles(path).path(MODEL)
    assert base is not None
    return [base.with_suffix(GRAPH_SUFFIX), base.with_suffix(MAP_SUFFIX)]


def _graph(store: SqliteStore) -> Any:
    anns = store._anns
    return None if anns is None else anns._graphs.get(MODEL)


def _ready(path: Path) -> SqliteStore:
    """A store with its graph built and saved."""
    store = SqliteStore(path, ann_min_vectors=THRESHOLD)
    store.save_vector_cache(MODEL, wait=True)
    assert all(part.is_file() for part in _graph_files(path))
    return store


def test_recall_at_10_is_at_least_099_of_exact_and_scores_are_exact(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 100)
    with _ready(path) as approximate, SqliteStore(path) as exact:
        graph = _graph(approximate)
        assert graph is not None
        assert graph.slots == ROWS
        assert graph.uncovered().size == 0
        found = wanted = 0
        for query in queries:
            got = approximate.vector_search(MODEL, query, EVERYONE, 10)
            truth = exact.vector_search(MODEL, query, EVERYONE, 10)
            # The graph answered: the same call through it alone gives the same result.
            version, cached = approximate._vectors[MODEL]
            assert approximate._ann_indexes.search(version, cached, query, EVERYONE, 10) == got
            tenth = truth[-1][1]
            found += sum(1 for _, score in got if score >= tenth)
            wanted += len(truth)
            every = dict(exact.vector_search(MODEL, query, EVERYONE, ROWS))
            assert all(score == every[memory_id] for memory_id, score in got)
            assert [score for _, score in got] == sorted((s for _, s in got), reverse=True)
        assert found / wanted >= 0.99


def test_a_new_process_maps_the_saved_graph_instead_of_building_it(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    _ready(path).close()
    query = _queries(seeded[1], 1)[0]
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as fresh, SqliteStore(path) as exact:
        truth = exact.vector_search(MODEL, query, EVERYONE, 10)
        assert fresh.vector_search(MODEL, query, EVERYONE, 10) == truth  # exact, meanwhile
        assert fresh.wait_vector_graphs(MODEL, timeout=60)
        assert fresh.vector_search(MODEL, query, EVERYONE, 10) == truth
        graph = _graph(fresh)
        assert graph is not None
        assert graph.viewed
        assert graph.slots == ROWS


def test_writes_after_the_build_are_found_without_a_rebuild(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    rng = np.random.default_rng(9)
    query = _queries(seeded[1], 1, seed=11)[0]
    with _ready(path) as store, SqliteStore(path) as exact:
        built = _graph(store).index
        near = np.asarray(query, dtype=np.float32)
        added = [
            _memory(ROWS + n, near + 0.01 * rng.standard_normal(DIM).astype(np.float32))
            for n in range(20)
        ]
        store.add_many(added)
        got = store.vector_search(MODEL, query, EVERYONE, 10)
        assert {memory_id for memory_id, _ in got} <= {m.id for m in added}
        assert got == exact.vector_search(MODEL, query, EVERYONE, 10)
        graph = _graph(store)
        assert graph.index is built
        assert graph.uncovered().size == 20
        # A save adds them once they are many; a few stay scanned beside the graph.
        store.save_vector_cache(MODEL, wait=True)
        assert _graph(store).index is built
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as fresh:
        assert fresh.vector_search(MODEL, query, EVERYONE, 10) == got
        assert fresh.wait_vector_graphs(MODEL, timeout=60)
        assert fresh.vector_search(MODEL, query, EVERYONE, 10) == got
        assert _graph(fresh).viewed


def test_deleted_and_archived_rows_are_never_returned(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 20, seed=3)
    active = MemoryFilter(archived=False)
    with _ready(path) as store, SqliteStore(path) as exact:
        gone: set[str] = set()
        archived: set[str] = set()
        for n, query in enumerate(queries):
            top = [memory_id for memory_id, _ in store.vector_search(MODEL, query, active, 3)]
            if n % 2:
                for memory_id in top:
                    store.delete(memory_id)
                gone.update(top)
            else:
                for memory_id in top:
                    store.update(
                        memory_id,
                        MemoryPatch(current_level=4, archived_at=BASE_TIME + timedelta(days=1)),
                    )
                archived.update(top)
        for query in queries:
            got = store.vector_search(MODEL, query, active, 10)
            assert not {memory_id for memory_id, _ in got} & (gone | archived)
            assert got == exact.vector_search(MODEL, query, active, 10)
            everyone = {
                memory_id for memory_id, _ in store.vector_search(MODEL, query, EVERYONE, 50)
            }
            assert not everyone & gone
        assert _graph(store) is not None


def test_a_cache_copied_into_a_new_matrix_keeps_the_graph(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 20, seed=13)
    with _ready(path) as store, SqliteStore(path) as exact:
        store.vector_search(MODEL, queries[0], EVERYONE, 10)
        built = _graph(store).index
        # More dead rows than an eighth of the cache: it is copied without them (vector_log).
        gone = [m.id for m in store.list(MemoryFilter(limit=ROWS))][::6]
        store.delete_many(gone)
        for query in queries:
            got = store.vector_search(MODEL, query, EVERYONE, 10)
            assert got == exact.vector_search(MODEL, query, EVERYONE, 10)
        graph = _graph(store)
        assert graph.vectors.dead is None  # a new matrix, rows matched by id
        assert graph.index is built
        assert graph.uncovered().size == 0
        assert graph.dead_slots() == len(gone)


def test_the_scope_filter_is_respected(seeded: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 30, seed=4)
    ben = MemoryFilter(user_id="ben")
    with _ready(path) as store, SqliteStore(path) as exact:
        owners = {m.id: m.user_id for m in store.list(MemoryFilter(limit=ROWS))}
        found = wanted = 0
        for query in queries:
            got = store.vector_search(MODEL, query, ben, 10)
            assert got
            assert all(owners[memory_id] == "ben" for memory_id, _ in got)
            truth = exact.vector_search(MODEL, query, ben, 10)
            found += len({i for i, _ in got} & {i for i, _ in truth})
            wanted += len(truth)
        assert found / wanted >= 0.99


@pytest.mark.parametrize("suffix", [GRAPH_SUFFIX, MAP_SUFFIX])
def test_a_damaged_file_is_ignored_and_built_again(
    seeded: tuple[Path, np.ndarray], tmp_path: Path, suffix: str
) -> None:
    path = _copy(seeded, tmp_path)
    _ready(path).close()
    damaged = next(part for part in _graph_files(path) if part.suffix == suffix)
    data = bytearray(damaged.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0x5A for b in data[middle : middle + 64])
    damaged.write_bytes(bytes(data))
    queries = _queries(seeded[1], 5, seed=6)
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as fresh, SqliteStore(path) as exact:
        for query in queries:
            assert fresh.vector_search(MODEL, query, EVERYONE, 10) == exact.vector_search(
                MODEL, query, EVERYONE, 10
            )
        assert fresh.wait_vector_graphs(MODEL, timeout=60)
        for query in queries:
            assert fresh.vector_search(MODEL, query, EVERYONE, 10) == exact.vector_search(
                MODEL, query, EVERYONE, 10
            )
        assert _graph(fresh) is None  # never trusted: exact search answered
        fresh.save_vector_cache(MODEL, wait=True)
        assert _graph(fresh) is not None
        assert not _graph(fresh).viewed
    with SqliteStore(path, ann_min_vectors=THRESHOLD) as again:
        again.vector_search(MODEL, queries[0], EVERYONE, 10)
        assert again.wait_vector_graphs(MODEL, timeout=60)
        again.vector_search(MODEL, queries[0], EVERYONE, 10)
        assert _graph(again) is not None
        assert _graph(again).viewed


def test_sparse_queries_and_small_stores_keep_the_exact_scan(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    with _ready(path) as store:
        version, cached = store._vectors[MODEL]
        sparse = tuple(1.0 if i < 4 else 0.0 for i in range(DIM))
        assert store._ann_indexes.search(version, cached, sparse, EVERYONE, 10) is None
    with SqliteStore(path, ann_min_vectors=ROWS + 1) as small:
        small.save_vector_cache(MODEL, wait=True)
        small.vector_search(MODEL, _queries(seeded[1], 1)[0], EVERYONE, 10)
        assert small._anns is None or _graph(small) is None


def test_an_erasure_removes_the_graph_and_no_file_keeps_the_erased_vector(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    query = _queries(seeded[1], 1, seed=8)[0]
    with _ready(path) as store:
        victim, _ = store.vector_search(MODEL, query, EVERYONE, 1)[0]
        graph = _graph(store)
        slot = int(graph.slot_of_row[graph.vectors.ids.tolist().index(victim)])
        # The graph's own copy of the vector, in the scalar type it stores.
        kept = {"I8": np.int8, "F16": np.float16, "F32": np.float32}[graph.index.dtype.name]
        stored = np.asarray(graph.index.get(slot, dtype=kept)).tobytes()
        assert len(stored) >= DIM
        assert stored in _graph_files(path)[0].read_bytes()
        store.delete(victim)
        assert not any(part.exists() for part in _graph_files(path))
        store.save_vector_cache(MODEL, wait=True)
        assert all(part.is_file() for part in _graph_files(path))
        assert victim not in {i for i, _ in store.vector_search(MODEL, query, EVERYONE, 10)}
        for part in path.parent.rglob("*"):
            if part.is_file():
                assert stored not in part.read_bytes(), part.name


_WITHOUT_USEARCH = """
import json, sys
sys.modules["usearch"] = None  # as if the ann extra were not installed
sys.modules["usearch.index"] = None
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.ports.store import MemoryFilter
path, model, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with SqliteStore(path, ann_min_vectors=1) as store:
    store.save_vector_cache(model, wait=True)
    found = [store.vector_search(model, q, MemoryFilter(), 10) for q in queries]
print(json.dumps({"found": found, "graph": store._anns is not None and bool(store._anns._graphs)}))
"""


_SPARSE_ONLY = """
import json, sys
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.ports.store import MemoryFilter
path, model, query = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with SqliteStore(path, ann_min_vectors=1) as store:
    found = store.vector_search(model, query, MemoryFilter(), 10)
print(json.dumps({"found": found, "usearch": "usearch" in sys.modules}))
"""


def test_a_process_with_only_short_queries_never_imports_usearch(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    _ready(path).close()
    sparse = [1.0 if i % 16 == 0 else 0.0 for i in range(DIM)]
    done = subprocess.run(
        [sys.executable, "-c", _SPARSE_ONLY, str(path), MODEL, json.dumps(sparse)],
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert not answer["usearch"]
    with SqliteStore(path) as exact:
        truth = exact.vector_search(MODEL, tuple(sparse), EVERYONE, 10)
    assert answer["found"] == [list(pair) for pair in truth]


def test_without_usearch_the_exact_scan_answers(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    queries = _queries(seeded[1], 5, seed=12)
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_USEARCH, str(path), MODEL, json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert not answer["graph"]
    assert not any(part.exists() for part in _graph_files(path))
    with SqliteStore(path) as exact:
        truth = [exact.vector_search(MODEL, q, EVERYONE, 10) for q in queries]
    assert answer["found"] == [[list(pair) for pair in result] for result in truth]


def test_the_graph_files_are_the_owners_only(
    seeded: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path = _copy(seeded, tmp_path)
    _ready(path).close()
    for part in _graph_files(path):
        assert stat.S_IMODE(part.stat().st_mode) == 0o600, part.name
    assert stat.S_IMODE(_graph_files(path)[0].parent.stat().st_mode) == 0o700
