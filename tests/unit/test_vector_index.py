"""Exact vector search of the SQLite store against a brute-force reference.

The reference scores every row in pure Python (``math.fsum`` of the exact products of the
stored float32 components) and sorts by score, then id. The store's search screens with a
float32 product (over the whole matrix, or over the query's non-zero components only) and
decides exactly, so it must return the very same list, whichever screening runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import vector_scan, vectors
from kioku.errors import StoreError, ValidationError

USERS = ("alice", "bob", "carol")
AGENTS = ("a1", "a2")
FILTERS = [
    (None, None, None),
    (None, None, False),
    (None, None, True),
    ("alice", None, None),
    ("alice", "a1", False),
    (None, "a2", None),
    ("bob", "a2", True),
    ("nobody", None, None),
]


def _cache(
    rows: np.ndarray,
    rng: np.random.Generator,
    ids: Sequence[str] | None = None,
    archived_share: float = 0.2,
) -> vectors.ModelVectors:
    n, dim = rows.shape
    return vectors.build(
        model="test:model",
        version=1,
        dim=dim,
        ids=list(ids) if ids is not None else [f"mem_{i:05d}" for i in range(n)],
        users=[USERS[i] for i in rng.integers(0, len(USERS), n)],
        agents=[AGENTS[i] for i in rng.integers(0, len(AGENTS), n)],
        archived=[bool(x) for x in rng.random(n) < archived_share],
        blobs=[np.asarray(row, dtype="<f4").tobytes() for row in rows],
    )


def _reference(
    cache: vectors.ModelVectors,
    query: Sequence[float],
    flt: tuple[str | None, str | None, bool | None],
    limit: int,
) -> list[tuple[str, float]]:
    unit = cache.check_query(query)
    if unit is None or limit <= 0:
        return []
    mask = cache.mask(*flt)
    q = [float(x) for x in unit]
    scored = []
    for row in range(cache.size):
        if mask is not None and not mask[row]:
            continue
        column = cache.columns[:, row]
        score = math.fsum(float(column[j]) * q[j] for j in range(cache.dim))
        scored.append((-score, str(cache.ids[row])))
    scored.sort()
    return [(memory_id, min(1.0, max(-1.0, -neg))) for neg, memory_id in scored[:limit]]


def _search(
    cache: vectors.ModelVectors,
    query: Sequence[float],
    flt: tuple[str | None, str | None, bool | None],
    limit: int,
) -> list[tuple[str, float]]:
    return vectors.top_matches(cache, query, *flt, limit)


@pytest.fixture(params=["dense", "sparse", "split"])
def screening(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one screening path; small blocks so the sparse one crosses many of them. "split":
    the sparse one shared with the helper thread whatever its size (on a single CPU there is
    no helper, and it is the sparse one)."""
    monkeypatch.setattr(vector_scan, "SPARSE_SHARE", 0.0 if request.param == "dense" else 1.0)
    monkeypatch.setattr(vector_scan, "SPLIT_FROM", 1 if request.param == "split" else 1 << 62)
    monkeypatch.setattr(vector_scan, "_BLOCK_BYTES", 4096)
    monkeypatch.setattr(vector_scan, "_MIN_BLOCK", 7)
    # And the k-th best screening score found through a sample (see test_kth_best_*).
    monkeypatch.setattr(vector_scan, "_SAMPLE_FROM", 64)
    monkeypatch.setattr(vector_scan, "_SAMPLE_ROWS", 32)
    return str(request.param)


def _query(rng: np.random.Generator, dim: int, nonzero: int) -> list[float]:
    query = np.zeros(dim)
    picked = rng.choice(dim, nonzero, replace=False)
    query[picked] = rng.standard_normal(nonzero)
    return query.tolist()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limit", [1, 10, 60, 5000])
def test_random_vectors_match_brute_force(screening: str, seed: int, limit: int) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((1500, 24)).astype(np.float32)
    cache = _cache(rows, rng)
    for nonzero in (1, 3, 24):
        query = _query(rng, 24, nonzero)
        for flt in FILTERS:
            assert _search(cache, query, flt, limit) == _reference(cache, query, flt, limit)


def test_both_screenings_give_identical_results(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(42)
    cache = _cache(rng.standard_normal((4000, 64)).astype(np.float32), rng)
    for nonzero in (2, 10, 64):
        query = _query(rng, 64, nonzero)
        results = []
        for share in (0.0, 1.0):
            monkeypatch.setattr(vector_scan, "SPARSE_SHARE", share)
            results.append([_search(cache, query, flt, 25) for flt in FILTERS])
        assert results[0] == results[1]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 3000),
    nonzero=st.integers(1, 32),
    block_bytes=st.sampled_from([64, 4096, 1 << 19]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_split_screening_is_the_sparse_one_bit_for_bit(
    n: int, nonzero: int, block_bytes: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    columns = np.ascontiguousarray(rng.standard_normal((32, n)).astype(np.float32))
    unit = np.zeros(32, dtype=np.float32)
    unit[rng.choice(32, nonzero, replace=False)] = rng.standard_normal(nonzero)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_scan, "SPARSE_SHARE", 1.0)
        patch.setattr(vector_scan, "_BLOCK_BYTES", block_bytes)
        patch.setattr(vector_scan, "_MIN_BLOCK", 7)
        patch.setattr(vector_scan, "SPLIT_FROM", 1 << 62)
        whole = vector_scan.screen(columns, unit)
        patch.setattr(vector_scan, "SPLIT_FROM", 1)
        split = vector_scan.screen(columns, unit)
    assert split.tobytes() == whole.tobytes()
    reference = unit.astype(np.float64) @ columns.astype(np.float64)
    assert np.max(np.abs(split - reference)) <= vector_scan.error_bound(32) * max(
        1.0, float(np.abs(unit).sum() * np.abs(columns).max())
    )


def test_a_large_sparse_screening_is_shared_with_the_helper_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import threading

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cpus or 1) < 2:
        pytest.skip("one CPU: there is no helper thread")
    monkeypatch.setattr(vector_scan, "SPARSE_SHARE", 1.0)
    monkeypatch.setattr(vector_scan, "_MIN_BLOCK", 7)
    monkeypatch.setattr(vector_scan, "_BLOCK_BYTES", 256)
    monkeypatch.setattr(vector_scan, "SPLIT_FROM", 1)
    columns = np.ones((8, 1000), dtype=np.float32)
    unit = np.zeros(8, dtype=np.float32)
    unit[[1, 5]] = 0.5
    seen: set[str] = set()
    real_dot = np.dot

    def noting_dot(*args: object) -> object:
        seen.add(threading.current_thread().name)
        return real_dot(*args)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "dot", noting_dot)
    assert vector_scan.screen(columns, unit).tolist() == [1.0] * 1000
    assert threading.current_thread().name in seen
    assert any(name.startswith("kioku-screen") for name in seen)


def test_ties_are_broken_by_id_whatever_the_load_order(screening: str) -> None:
    """Duplicates and permutations of small-integer vectors tie exactly; ids decide."""
    rng = np.random.default_rng(7)
    base = rng.integers(-2, 3, size=(40, 6)).astype(np.float32)
    rows = np.vstack([base, base, base[:, ::-1], rng.permuted(base, axis=1)])
    ids = [f"mem_{i:04d}" for i in rng.permutation(len(rows))]
    cache = _cache(rows, rng, ids=ids)
    for query in ([1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0], [2, -1, 0, 0, 1, 3]):
        for flt in FILTERS:
            for limit in (1, 5, 17, 200):
                found = _search(cache, query, flt, limit)
                assert found == _reference(cache, query, flt, limit)
    # The all-ones query scores every permutation of a row the same: id order among them.
    found = _search(cache, [1, 1, 1, 1, 1, 1], (None, None, None), len(rows))
    for (a, score_a), (b, score_b) in itertools.pairwise(found):
        assert score_a > score_b or (score_a == score_b and a < b)


def test_a_large_group_tied_at_the_cut_keeps_the_smallest_ids(screening: str) -> None:
    rng = np.random.default_rng(3)
    rows = np.vstack([np.tile([1.0, 1.0, 0.0], (800, 1)), [[1.0, 0.0, 0.0]] * 5])
    ids = [f"mem_{i:04d}" for i in rng.permutation(len(rows))]
    cache = _cache(rows.astype(np.float32), rng, ids=ids, archived_share=0.0)
    found = _search(cache, [1.0, 0.0, 0.0], (None, None, None), 12)
    assert found == _reference(cache, [1.0, 0.0, 0.0], (None, None, None), 12)
    assert [s for _, s in found[:5]] == [1.0] * 5
    tied = sorted(ids[i] for i in range(800))[:7]
    assert [i for i, _ in found[5:]] == tied


def test_rows_sharing_nothing_with_the_query_score_zero_in_id_order(screening: str) -> None:
    rng = np.random.default_rng(5)
    rows = np.zeros((300, 16), dtype=np.float32)
    rows[:, 8:] = rng.standard_normal((300, 8))  # no row touches components 0-7
    rows[:4, 0] = [0.5, -0.5, 2.0, 1.0]
    cache = _cache(rows, rng, archived_share=0.0)
    query = [1.0] + [0.0] * 15
    found = _search(cache, query, (None, None, None), 10)
    assert found == _reference(cache, query, (None, None, None), 10)
    assert [s for _, s in found[3:]] == [0.0] * 7


def test_screening_stays_within_the_error_bound(screening: str) -> None:
    rng = np.random.default_rng(11)
    for dim in (8, 384):
        cache = _cache(rng.standard_normal((700, dim)).astype(np.float32), rng)
        unit = cache.check_query(_query(rng, dim, max(1, dim // 10)))
        assert unit is not None
        screened = vector_scan.screen(cache.columns, unit)
        rows = np.arange(cache.size)
        exact = np.array(vector_scan.exact_scores(cache.columns, unit, rows))
        assert np.max(np.abs(screened - exact)) <= vector_scan.error_bound(dim)


def test_a_zero_query_or_limit_finds_nothing() -> None:
    rng = np.random.default_rng(0)
    cache = _cache(rng.standard_normal((50, 4)).astype(np.float32), rng)
    assert _search(cache, [0.0, 0.0, 0.0, 0.0], (None, None, None), 5) == []
    assert _search(cache, [1.0, 0.0, 0.0, 0.0], (None, None, None), 0) == []


def test_a_query_of_another_dimension_is_refused() -> None:
    rng = np.random.default_rng(0)
    cache = _cache(rng.standard_normal((50, 4)).astype(np.float32), rng)
    with pytest.raises(StoreError, match="dimension 3"):
        _search(cache, [1.0, 0.0, 0.0], (None, None, None), 5)
    with pytest.raises(ValidationError):
        _search(cache, [1.0, math.nan, 0.0, 0.0], (None, None, None), 5)


def test_vectors_are_normalised_and_broken_ones_become_zero() -> None:
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((20, 5)).astype(np.float32) * 7
    rows[3, 1] = np.nan
    rows[9, 0] = np.inf
    rows[12] = 0.0
    cache = _cache(rows, rng, archived_share=0.0)
    norms = np.linalg.norm(cache.columns.astype(np.float64), axis=0)
    assert norms[[3, 9, 12]] == pytest.approx([0.0, 0.0, 0.0])
    others = np.delete(norms, [3, 9, 12])
    assert others == pytest.approx(np.ones(others.size), abs=1e-6)
    found = dict(_search(cache, [1, 1, 1, 1, 1], (None, None, None), 20))
    assert found["mem_00003"] == found["mem_00009"] == found["mem_00012"] == 0.0
    assert _search(cache, [1, 1, 1, 1, 1], (None, None, None), 20) == _reference(
        cache, [1, 1, 1, 1, 1], (None, None, None), 20
    )


def test_filter_masks_are_remembered() -> None:
    rng = np.random.default_rng(1)
    cache = _cache(rng.standard_normal((100, 4)).astype(np.float32), rng, archived_share=0.0)
    assert cache.excluded(None, None, False) == (None, 100)
    excluded, kept = cache.excluded("alice", None, None)
    assert excluded is not None
    assert kept == 100 - int(excluded.sum())
    assert cache.excluded("alice", None, None)[0] is excluded


def _ends(ids: list[str]) -> np.ndarray:
    lengths = [len(i.encode("utf-8")) for i in ids]
    return (np.cumsum(lengths) + np.arange(len(ids))).astype(np.uint32)


def test_an_id_column_decodes_joined_ids_one_row_at_a_time() -> None:
    ids = ["m-1", "記憶-2", "", "m-4"]
    column = vectors.IdColumn.joined("\x00".join(ids).encode("utf-8"), _ends(ids))
    assert len(column) == 4
    assert [column[row] for row in (3, 1, 0, 2)] == ["m-4", "記憶-2", "m-1", ""]
    assert column.tolist() == ids == list(column)
    assert vectors.IdColumn(ids).tolist() == ids


@pytest.mark.parametrize(
    ("joined", "ends"),
    [
        (b"a\x00b", [1, 2]),  # the last id does not end at the end
        (b"a\x00b", [2, 3]),  # an end not on a separator
        (b"ab\x00c", [1, 4]),
        (b"a\x00b", []),
    ],
)
def test_an_id_column_whose_ends_do_not_fit_is_refused(joined: bytes, ends: list[int]) -> None:
    with pytest.raises(ValueError, match="id ends"):
        vectors.IdColumn.joined(joined, np.asarray(ends, dtype=np.uint32))


SCORES = st.lists(
    st.one_of(
        st.sampled_from([0.0, 0.5, -0.25, 1.0, float("-inf")]),
        st.floats(-1.0, 1.0, width=32),
    ),
    min_size=1,
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(
    values=SCORES,
    limit=st.integers(1, 400),
    sample_from=st.integers(1, 200),
    sample_rows=st.integers(1, 64),
    margin=st.integers(1, 10),
)
def test_kth_best_is_the_kth_largest_whichever_way_it_is_found(
    values: list[float], limit: int, sample_from: int, sample_rows: int, margin: int
) -> None:
    scores = np.asarray(values, dtype=np.float32)
    limit = min(limit, scores.size)
    expected = float(np.sort(scores)[scores.size - limit])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_scan, "_SAMPLE_FROM", sample_from)
        patch.setattr(vector_scan, "_SAMPLE_ROWS", sample_rows)
        patch.setattr(vector_scan, "_SAMPLE_MARGIN", margin)
        assert vector_scan.kth_best(scores, limit) == expected


def test_kth_best_of_a_large_array_with_the_default_sample() -> None:
    rng = np.random.default_rng(3)
    scores = (rng.standard_normal(300_000) * 0.1).astype(np.float32)
    scores[rng.random(scores.size) < 0.4] = 0.0
    scores[rng.random(scores.size) < 0.1] = -np.inf
    for limit in (1, 10, 100, 1000, 150_000, 300_000):
        assert vector_scan.kth_best(scores, limit) == float(np.sort(scores)[scores.size - limit])


def test_kth_best_falls_back_when_the_sample_saw_only_the_best(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Rows 0 and 5 are the sample (stride 5) and hold the two best scores: the threshold,
    # the best sampled, is reached by one score only, fewer than the three asked for.
    monkeypatch.setattr(vector_scan, "_SAMPLE_FROM", 1)
    monkeypatch.setattr(vector_scan, "_SAMPLE_ROWS", 2)
    monkeypatch.setattr(vector_scan, "_SAMPLE_MARGIN", 1)
    scores = np.asarray([0.9, 0.1, 0.2, 0.3, 0.4, 0.8, 0.5, 0.6, 0.05, 0.0], dtype=np.float32)
    assert vector_scan.kth_best(scores, 3) == np.float32(0.6)
