"""The numpy-free search of a vector cache file gives exactly the numpy search's answer."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import vector_layout, vector_lite, vectors
from kioku.adapters.store.sqlite.vector_file import VectorFiles

MODEL = "test:model"
VERSION = 12345


def _write(
    directory: Path,
    matrix: np.ndarray,
    scopes: list[tuple[str, str]],
    archived: list[bool],
    ids: list[str] | None = None,
    quantised_max_rows: int = vector_layout.QUANTISED_MAX_ROWS,
) -> tuple[vectors.ModelVectors, Path]:
    db = directory / "m.db"
    db.touch()
    n, dim = matrix.shape
    ids = ids or [f"m-{i:05d}" for i in range(n)]
    built = vectors.build(
        MODEL,
        VERSION,
        dim,
        ids,
        [user for user, _ in scopes],
        [agent for _, agent in scopes],
        archived,
        [row.astype("<f4").tobytes() for row in matrix],
    )
    path = VectorFiles(db, quantised_max_rows=quantised_max_rows).write(built)
    assert path is not None
    return built, path


def _query(rng: np.random.Generator, dim: int, nonzero: int) -> list[float]:
    query = np.zeros(dim, dtype=np.float32)
    picked = rng.choice(dim, size=nonzero, replace=False)
    query[picked] = rng.normal(size=nonzero).astype(np.float32)
    return [float(v) for v in query]


def _both(
    built: vectors.ModelVectors,
    path: Path,
    query: list[float],
    flt: tuple[str | None, str | None, bool | None],
    limit: int,
) -> tuple[list[tuple[str, float]], list[tuple[str, float]] | None]:
    expected = vectors.top_matches(built, query, *flt, limit)
    found = vector_lite.search(path, MODEL, VERSION, query, *flt, limit)
    return expected, found


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 400),
    dim=st.sampled_from([16, 48, 96]),
    share=st.floats(0.0, 1.0 / 3.0),
    limit=st.integers(1, 60),
    duplicates=st.booleans(),
    sparse_rows=st.booleans(),
    flt=st.sampled_from(
        [
            (None, None, None),
            ("u0", None, None),
            ("u1", "a1", None),
            (None, None, False),
            (None, None, True),
            ("u0", "a0", False),
            ("nobody", None, None),
        ]
    ),
)
def test_the_lite_search_equals_the_numpy_search(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n: int,
    dim: int,
    share: float,
    limit: int,
    duplicates: bool,
    sparse_rows: bool,
    flt: tuple[str | None, str | None, bool | None],
) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, dim)).astype(np.float32)
    if sparse_rows:
        matrix[rng.random(size=(n, dim)) < 0.8] = 0.0
    if duplicates and n > 3:
        matrix[n // 2 :] = matrix[: n - n // 2]  # many exact ties, broken by id
    scopes = [(f"u{i % 2}", f"a{i % 3}") for i in range(n)]
    archived = [bool(x) for x in rng.random(n) < 0.3]
    built, path = _write(tmp_path_factory.mktemp("lite"), matrix, scopes, archived)
    nonzero = max(1, int(share * dim))
    query = _query(rng, dim, nonzero)
    expected, found = _both(built, path, query, flt, limit)
    assert found == expected


def test_a_large_store_with_a_short_query_is_answered_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    n, dim = 20_000, 384
    matrix = np.zeros((n, dim), dtype=np.float32)
    for row in matrix:  # like the offline embedder: a few dozen signed components per text
        picked = rng.choice(dim, size=60, replace=False)
        row[picked] = rng.normal(size=60)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    scopes = [("default", "default")] * (n - 500) + [("other", "default")] * 500
    archived = [bool(x) for x in rng.random(n) < 0.5]
    built, path = _write(tmp_path, matrix, scopes, archived)
    for trial in range(5):
        query = _query(np.random.default_rng(trial), dim, 40)
        for flt in [("default", "default", False), ("default", "default", None)]:
            expected, found = _both(built, path, query, flt, 100)
            assert found == expected
            assert len(found) == 100


def test_scores_are_the_exact_dot_products(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(50, 24)).astype(np.float32)
    built, path = _write(tmp_path, matrix, [("u", "a")] * 50, [False] * 50)
    query = _query(rng, 24, 6)
    found = vector_lite.search(path, MODEL, VERSION, query, None, None, None, 50)
    assert found is not None
    unit = np.asarray(query, dtype=np.float64)
    unit = (unit / math.sqrt(math.fsum(v * v for v in unit.tolist()))).astype(np.float32)
    for memory_id, score in found:
        row = built.columns[:, int(memory_id.split("-")[1])].astype(np.float64)
        assert score == math.fsum((row * unit.astype(np.float64)).tolist())


def test_ids_in_any_script_come_back_whole(tmp_path: Path) -> None:
    matrix = np.eye(6, 18, dtype=np.float32)
    ids = ["記憶-1", "m-2", "ü-3", "a" * 300, "x", "🙂"]
    built, path = _write(tmp_path, matrix, [("u", "a")] * 6, [False] * 6, ids)
    query = [0.0] * 18
    query[0], query[5] = 1.0, 0.5
    expected, found = _both(built, path, query, (None, None, None), 6)
    assert found == expected
    assert [memory_id for memory_id, _ in found[:2]] == ["記憶-1", "🙂"]


def test_it_declines_what_it_cannot_answer(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(30, 30)).astype(np.float32)
    _, path = _write(tmp_path, matrix, [("u", "a")] * 30, [False] * 30)
    sparse = _query(rng, 30, 5)
    assert vector_lite.search(path, MODEL, VERSION, sparse, None, None, None, 5) is not None
    dense = _query(rng, 30, 20)
    assert vector_lite.search(path, MODEL, VERSION, dense, None, None, None, 5) is None
    assert vector_lite.search(path, MODEL, VERSION + 1, sparse, None, None, None, 5) is None
    assert vector_lite.search(path, "other", VERSION, sparse, None, None, None, 5) is None
    assert vector_lite.search(path, MODEL, VERSION, sparse[:-1], None, None, None, 5) is None
    bad = [*sparse[:-1], math.nan]
    assert vector_lite.search(path, MODEL, VERSION, bad, None, None, None, 5) is None
    assert (
        vector_lite.search(tmp_path / "none.vec", MODEL, VERSION, sparse, None, None, None, 5)
        is None
    )
    assert vector_lite.search(None, MODEL, VERSION, sparse, None, None, None, 5) is None
    assert vector_lite.search(path, MODEL, VERSION, [0.0] * 30, None, None, None, 5) == []


def test_a_damaged_file_is_declined(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    matrix = rng.normal(size=(40, 30)).astype(np.float32)
    _, path = _write(tmp_path, matrix, [("u", "a")] * 40, [False] * 40)
    query = _query(rng, 30, 4)
    data = bytearray(path.read_bytes())
    layout = vector_layout.Layout.of(memoryview(bytes(data)))
    data[layout.at["ids"] + 2] ^= 0xFF  # an id byte: under the CRC
    path.write_bytes(bytes(data))
    assert vector_lite.search(path, MODEL, VERSION, query, None, None, None, 5) is None


def test_more_than_256_scopes_go_to_numpy(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    n = 300
    matrix = rng.normal(size=(n, 30)).astype(np.float32)
    scopes = [(f"user-{i}", "a") for i in range(n)]
    _, path = _write(tmp_path, matrix, scopes, [False] * n)
    query = _query(rng, 30, 4)
    assert vector_lite.search(path, MODEL, VERSION, query, "user-3", None, None, 5) is None


def test_a_file_past_the_quantised_limit_keeps_no_levels_and_goes_to_numpy(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(30, 24)).astype(np.float32)
    built, path = _write(tmp_path, matrix, [("u", "a")] * 30, [False] * 30, quantised_max_rows=10)
    layout = vector_layout.Layout.of(memoryview(path.read_bytes()), deep=True)
    assert layout.header["quantised"] is False
    assert layout.span("levels") == (layout.at["levels"], layout.at["levels"])
    assert vector_lite.search(path, MODEL, VERSION, _query(rng, 24, 3), None, None, None, 5) is None
    mapped = VectorFiles(tmp_path / "m.db").read(MODEL, VERSION)
    assert mapped is not None
    assert np.array_equal(mapped.columns, built.columns)
    assert VectorFiles(tmp_path / "m.db").verify(MODEL)
