"""Half-precision HNSW indexes on PostgreSQL (``[store] hnsw_type``).

On pgvector 0.7 and newer an index may hold ``halfvec``: the walk orders by half-precision
distance, and what it returns is ranked again by the exact distance of the stored vectors, so
a search ranks what it finds as a full-precision one does, including neighbours closer than
half precision can tell apart. "auto" (the default) builds ``vector`` up to 2,000 values and
``halfvec`` past that (``vector`` indexes stop at 2,000, and such models were searched
exactly). An index keeps the type it was built with when the setting changes. The tests need
the server's pgvector to be 0.7 or newer (the one the suite starts is) and skip, saying so, on
an older one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kioku import Kioku
from kioku.core.validate import MAX_VECTOR_LENGTH
from kioku.ports.store import MemoryFilter
from tests.integration.pg_vector_helpers import exact_ids, open_with, store_rows
from tests.postgres_server import admin, postgres_url, schema_fixture  # noqa: F401 (a fixture)

vectors = pytest.importorskip("kioku.adapters.store.postgres.vectors")

MODEL = "test-halfvec"


pg_env = schema_fixture("half_")


def _open(env: dict[str, str], home: Path, **settings: str) -> Kioku:
    kioku = open_with(env, home, **settings)
    with kioku.store._reading() as conn:  # type: ignore[attr-defined]
        version = vectors.pgvector_version(conn)
    if version < vectors.HALFVEC_SINCE:
        kioku.close()
        pytest.skip(f"the server's pgvector {version} has no halfvec (0.7 or newer needed)")
    return kioku


def _opclass(kioku: Kioku, dim: int) -> str | None:
    """The operator class of the model's HNSW index, as the server's catalogue keeps it."""
    with kioku.store._reading() as conn:  # type: ignore[attr-defined]
        row = conn.execute(
            "SELECT c.opcname FROM pg_index AS x JOIN pg_opclass AS c "
            "ON c.oid = x.indclass[0] WHERE x.indexrelid = to_regclass(%s)",
            (vectors.index_name(MODEL, dim),),
        ).fetchone()
    return None if row is None else str(row[0])


def _store(kioku: Kioku, matrix: np.ndarray, first: int = 0) -> list[str]:
    return store_rows(kioku, MODEL, matrix, first)


_exact = exact_ids


def _search(kioku: Kioku, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    return kioku.store.vector_search(MODEL, [float(v) for v in query], MemoryFilter(), k)


def _near_ties(rng: np.random.Generator, dim: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """A query and ``count`` vectors around it whose cosines to it step by about 1e-6, far
    below what half precision (11 significant bits) tells apart, among random others."""
    query = rng.standard_normal(dim).astype(np.float32)
    query /= np.linalg.norm(query)
    side = rng.standard_normal(dim).astype(np.float32)
    side -= side @ query * query
    side /= np.linalg.norm(side)
    angles = 0.05 + 0.0014 * np.arange(count)  # cos steps of about 7e-5 ... 1e-6 apart
    near = np.cos(angles)[:, None] * query + np.sin(angles)[:, None] * side
    others = rng.standard_normal((300, dim)).astype(np.float32)
    matrix = np.concatenate([near.astype(np.float32), others])
    return query, matrix[rng.permutation(len(matrix))]


def test_auto_builds_a_full_precision_index_and_halfvec_one_on_request(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((40, 32)).astype(np.float32)
    with _open(pg_env, tmp_path / "a") as kioku:
        _store(kioku, matrix)
        assert _opclass(kioku, 32) == "vector_cosine_ops"
    admin(f"DROP SCHEMA IF EXISTS {pg_env['KIOKU_STORE__SCHEMA']} CASCADE")
    with _open(pg_env, tmp_path / "b", hnsw_type="halfvec") as kioku:
        _store(kioku, matrix)
        assert _opclass(kioku, 32) == "halfvec_cosine_ops"


@pytest.mark.parametrize("kind", ["halfvec", "vector"])
def test_near_ties_come_back_in_exact_order(
    pg_env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    rng = np.random.default_rng(11)
    query, matrix = _near_ties(rng, 64, 40)
    with _open(pg_env, tmp_path / "a", hnsw_type=kind) as kioku:
        ids = _store(kioku, matrix)
        assert _opclass(kioku, 64) == f"{kind}_cosine_ops"
        for k in (1, 5, 20):
            found = _search(kioku, query, k)
            assert [memory_id for memory_id, _ in found] == _exact(matrix, ids, query, k)
            sims = [similarity for _, similarity in found]
            assert sims == sorted(sims, reverse=True)
            exact = {memory_id: n for n, memory_id in enumerate(ids)}
            for memory_id, similarity in found:
                row = matrix[exact[memory_id]].astype(np.float64)
                cosine = row @ query / (np.linalg.norm(row) * np.linalg.norm(query))
                assert similarity == pytest.approx(cosine, abs=1e-6)


def test_a_model_of_3000_values_gets_a_halfvec_index_and_finds_the_same(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((60, 3000)).astype(np.float32)
    queries = rng.standard_normal((5, 3000)).astype(np.float32)
    answers = {}
    for kind in ("auto", "vector"):
        home = tmp_path / kind
        with _open(pg_env, home, hnsw_type=kind) as kioku:
            ids = _store(kioku, matrix)
            with kioku.store._reading() as conn:  # type: ignore[attr-defined]
                row = conn.execute(
                    "SELECT index_name FROM vector_indexes WHERE model = %s", (MODEL,)
                ).fetchone()
            if kind == "auto":
                assert row is not None
                assert row[0] == vectors.index_name(MODEL, 3000)
                assert _opclass(kioku, 3000) == "halfvec_cosine_ops"
            else:  # too large for a vector index: searched exactly
                assert row is not None
                assert row[0] is None
                assert _opclass(kioku, 3000) is None
            answers[kind] = [[i for i, _ in _search(kioku, q, 5)] for q in queries]
            assert answers[kind] == [_exact(matrix, ids, q, 5) for q in queries]
        admin(f"DROP SCHEMA IF EXISTS {pg_env['KIOKU_STORE__SCHEMA']} CASCADE")
    assert answers["auto"] == answers["vector"]


def test_an_index_keeps_its_type_when_the_setting_changes(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((80, 48)).astype(np.float32)
    with _open(pg_env, tmp_path / "a", hnsw_type="halfvec") as kioku:
        ids = _store(kioku, matrix[:40])
        assert _opclass(kioku, 48) == "halfvec_cosine_ops"
    with _open(pg_env, tmp_path / "b", hnsw_type="vector") as kioku:  # the index is kept
        ids += _store(kioku, matrix[40:], first=40)
        assert _opclass(kioku, 48) == "halfvec_cosine_ops"
        for query in rng.standard_normal((4, 48)).astype(np.float32):
            found = [memory_id for memory_id, _ in _search(kioku, query, 10)]
            assert found == _exact(matrix, ids, query, 10)


def test_values_past_half_precision_are_stored_and_found_by_direction(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    # A halfvec holds at most ±65,504; the index holds the unit vector, so any vector of a
    # storable length is stored (without it, the insert fails as out of range for halfvec).
    # Sixteen values of 2.4e17 make a length just under kioku's bound (MAX_VECTOR_LENGTH).
    biggest = 0.99 * MAX_VECTOR_LENGTH / 4
    rng = np.random.default_rng(9)
    matrix = rng.standard_normal((30, 16)).astype(np.float32)
    matrix[0] = np.float32(biggest) * np.sign(matrix[0])
    direction = rng.standard_normal(16).astype(np.float32)
    matrix[1] = direction * np.float32(1e6)  # values past ±65,504
    with _open(pg_env, tmp_path / "a", hnsw_type="halfvec") as kioku:
        ids = _store(kioku, matrix)
        assert _opclass(kioku, 16) == "halfvec_cosine_ops"
        assert kioku.store.count(MemoryFilter()) == 30
        (first, similarity), *_ = _search(kioku, direction, 3)
        assert first == ids[1]
        assert similarity == pytest.approx(1.0, abs=1e-6)
        query = rng.standard_normal(16).astype(np.float32)
        found = [memory_id for memory_id, _ in _search(kioku, query, 5)]
        assert found == _exact(matrix[1:], ids[1:], query, 5)
