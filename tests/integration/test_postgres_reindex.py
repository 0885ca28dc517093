"""``kioku reindex`` on PostgreSQL: each model's HNSW index built again with the current
settings, beside the one in use, then swapped in.

An index keeps the ``m``, ``ef_construction`` and type it was built with; these tests change
the settings, rebuild, and read the server's catalogue to see what the index now holds, check
that searches find what an exact search finds before, during and after, and that vectors
written while the new index is built are in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kioku import Kioku
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryFilter
from tests.integration.pg_vector_helpers import exact_ids, open_with, store_rows
from tests.postgres_server import postgres_url, schema_fixture  # noqa: F401 (a fixture)

vectors = pytest.importorskip("kioku.adapters.store.postgres.vectors")
reindex_module = pytest.importorskip("kioku.adapters.store.postgres.reindex")

MODEL = "test-reindex"


pg_env = schema_fixture("reindex_")


_open = open_with
_exact = exact_ids


def _index(kioku: Kioku, dim: int, suffix: str = "") -> tuple[str, list[str], int] | None:
    """The operator class, options and oid of the model's index (or of ``<name><suffix>``)."""
    with kioku.store._reading() as conn:  # type: ignore[attr-defined]
        row = conn.execute(
            "SELECT c.opcname, i.reloptions, i.oid FROM pg_index AS x "
            "JOIN pg_class AS i ON i.oid = x.indexrelid "
            "JOIN pg_opclass AS c ON c.oid = x.indclass[0] "
            "WHERE x.indexrelid = to_regclass(%s)",
            (vectors.index_name(MODEL, dim) + suffix,),
        ).fetchone()
    return None if row is None else (str(row[0]), sorted(row[1] or []), int(row[2]))


def _registered(kioku: Kioku, dim: int) -> str | None:
    with kioku.store._reading() as conn:  # type: ignore[attr-defined]
        row = conn.execute(
            "SELECT index_name FROM vector_indexes WHERE model = %s AND dim = %s", (MODEL, dim)
        ).fetchone()
    assert row is not None
    return None if row[0] is None else str(row[0])


def _store(kioku: Kioku, matrix: np.ndarray, first: int = 0) -> list[str]:
    return store_rows(kioku, MODEL, matrix, first)


def _found(kioku: Kioku, query: np.ndarray, k: int) -> list[str]:
    hits = kioku.store.vector_search(MODEL, [float(v) for v in query], MemoryFilter(), k)
    return [memory_id for memory_id, _ in hits]


def test_new_settings_take_effect_only_when_rebuilt(pg_env: dict[str, str], tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((300, 24)).astype(np.float32)
    home = tmp_path / "home"
    with _open(pg_env, home, hnsw_m="8", hnsw_ef_construction="32") as kioku:
        ids = _store(kioku, matrix)
        assert _index(kioku, 24)[:2] == ("vector_cosine_ops", ["ef_construction=32", "m=8"])  # type: ignore[index]
    with _open(pg_env, home, hnsw_m="12", hnsw_ef_construction="48") as kioku:
        # The setting alone changes nothing: the index keeps what it was built with.
        assert _index(kioku, 24)[:2] == ("vector_cosine_ops", ["ef_construction=32", "m=8"])  # type: ignore[index]
        (planned,) = kioku.store.reindex(dry_run=True)
        assert (planned.model, planned.dim, planned.vectors, planned.rebuilt) == (
            MODEL,
            24,
            300,
            True,
        )
        assert planned.before == "hnsw vector m=8 ef_construction=32"
        assert planned.after == "hnsw vector m=12 ef_construction=48"
        assert _index(kioku, 24)[:2] == ("vector_cosine_ops", ["ef_construction=32", "m=8"])  # type: ignore[index]

        (report,) = kioku.store.reindex()
        assert report.rebuilt
        assert report.after == "hnsw vector m=12 ef_construction=48"
        assert _index(kioku, 24)[:2] == ("vector_cosine_ops", ["ef_construction=48", "m=12"])  # type: ignore[index]
        assert _registered(kioku, 24) == vectors.index_name(MODEL, 24)
        assert _index(kioku, 24, "_next") is None
        for query in rng.standard_normal((5, 24)):
            assert _found(kioku, query, 10) == _exact(matrix, ids, query, 10)

        # Now up to date: nothing is built again unless forced.
        (again,) = kioku.store.reindex()
        assert not again.rebuilt
        assert again.before == again.after
        oid = _index(kioku, 24)[2]  # type: ignore[index]
        (forced,) = kioku.store.reindex(force=True)
        assert forced.rebuilt
        assert _index(kioku, 24)[2] != oid


def test_type_changes_and_models_past_two_thousand_values(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(7)
    small = rng.standard_normal((60, 16)).astype(np.float32)
    large = rng.standard_normal((40, 2500)).astype(np.float32)
    home = tmp_path / "home"
    with _open(pg_env, home, hnsw_type="vector") as kioku:
        with kioku.store._reading() as conn:  # type: ignore[attr-defined]
            if vectors.pgvector_version(conn) < vectors.HALFVEC_SINCE:
                pytest.skip("the server's pgvector has no halfvec (0.7 or newer needed)")
        small_ids = _store(kioku, small)
        large_ids = _store(kioku, large, first=100)
        # "vector" cannot index 2,500 values: registered without an index, searched exactly.
        assert _registered(kioku, 2500) is None
        assert _index(kioku, 2500) is None
    with _open(pg_env, home, hnsw_type="auto") as kioku:
        reports = {r.dim: r for r in kioku.store.reindex()}
        assert reports[16].rebuilt is False
        assert reports[16].after.startswith("hnsw vector")
        assert (reports[2500].before, reports[2500].rebuilt) == ("exact", True)
        assert reports[2500].after == "hnsw halfvec m=32 ef_construction=200"
        assert _index(kioku, 2500)[0] == "halfvec_cosine_ops"  # type: ignore[index]
        assert _registered(kioku, 2500) == vectors.index_name(MODEL, 2500)
        for query in rng.standard_normal((3, 2500)):
            assert _found(kioku, query, 5) == _exact(large, large_ids, query, 5)
    with _open(pg_env, home, hnsw_type="halfvec") as kioku:
        (report,) = [r for r in kioku.store.reindex(model=MODEL) if r.dim == 16]
        assert report.after == "hnsw halfvec m=32 ef_construction=200"
        assert _index(kioku, 16)[0] == "halfvec_cosine_ops"  # type: ignore[index]
        for query in rng.standard_normal((3, 16)):
            assert _found(kioku, query, 10) == _exact(small, small_ids, query, 10)
    with _open(pg_env, home, hnsw_type="vector") as kioku:
        reports = {r.dim: r for r in kioku.store.reindex()}
        # Back to "vector": the large model's index is dropped, and it is searched exactly.
        assert (reports[2500].after, reports[2500].rebuilt) == ("exact", True)
        assert _registered(kioku, 2500) is None
        assert _index(kioku, 2500) is None
        assert _index(kioku, 16)[0] == "vector_cosine_ops"  # type: ignore[index]
        for query in rng.standard_normal((3, 2500)):
            assert _found(kioku, query, 5) == _exact(large, large_ids, query, 5)


def test_a_leftover_of_an_interrupted_build_is_replaced(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(9)
    matrix = rng.standard_normal((80, 12)).astype(np.float32)
    with _open(pg_env, tmp_path / "home") as kioku:
        ids = _store(kioku, matrix)
        leftover = vectors.index_name(MODEL, 12) + "_next"
        with kioku.store._writing() as conn:  # type: ignore[attr-defined]
            # What a killed build leaves: an index of that name, here of another type.
            conn.execute(
                f'CREATE INDEX "{leftover}" ON memory_vectors USING hnsw '
                "((embedding::vector(12)) vector_l2_ops) WHERE dim = 12"
            )
        (report,) = kioku.store.reindex(force=True)
        assert report.rebuilt
        assert _index(kioku, 12)[0] == "vector_cosine_ops"  # type: ignore[index]
        assert _index(kioku, 12, "_next") is None
        query = rng.standard_normal(12)
        assert _found(kioku, query, 10) == _exact(matrix, ids, query, 10)


def _building(kioku: Kioku, worker: threading.Thread) -> bool:
    """Wait until the server reports an index build on ``memory_vectors``; False if the
    worker ended first."""
    while worker.is_alive():
        with kioku.store._reading() as conn:  # type: ignore[attr-defined]
            row = conn.execute(
                "SELECT 1 FROM pg_stat_progress_create_index "
                "WHERE relid = to_regclass('memory_vectors') AND command LIKE '%%CONCURRENTLY%%'"
            ).fetchone()
        if row is not None:
            return True
        time.sleep(0.005)
    return False


def test_vectors_written_during_the_build_are_in_the_new_index(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(13)
    matrix = rng.standard_normal((3000, 48)).astype(np.float32)
    extra = rng.standard_normal((40, 48)).astype(np.float32)
    with _open(pg_env, tmp_path / "home", hnsw_m="4", hnsw_ef_construction="8") as kioku:
        _store(kioku, matrix)
    with _open(pg_env, tmp_path / "home", hnsw_ef_construction="400") as kioku:
        results: list[object] = []
        heard: list[tuple[str, int, int]] = []

        def progress(label: str, done: int, total: int) -> None:
            heard.append((label, done, total))

        worker = threading.Thread(
            target=lambda: results.append(kioku.store.reindex(progress=progress))
        )
        worker.start()
        assert _building(kioku, worker)
        added = _store(kioku, extra[:1], first=10_000)
        # The first write came while the new index was being built.
        assert worker.is_alive()
        for n in range(1, len(extra)):
            added += _store(kioku, extra[n : n + 1], first=10_000 + n)
        worker.join()
        (report,) = results[0]  # type: ignore[misc]
        assert heard[0] == (f"{MODEL} (48)", 0, 1)
        assert heard[-1] == (f"{MODEL} (48)", 1, 1)
        assert report.rebuilt
        assert report.after == "hnsw vector m=32 ef_construction=400"
        # Each vector's own nearest neighbour is itself, found by walking the new index.
        for memory_id, row in zip(added, extra, strict=True):
            assert _found(kioku, row, 1) == [memory_id]
        assert kioku.store.reindex()[0].rebuilt is False


def test_one_reindex_at_a_time_and_bad_input(pg_env: dict[str, str], tmp_path: Path) -> None:
    rng = np.random.default_rng(17)
    with _open(pg_env, tmp_path / "home") as kioku:
        _store(kioku, rng.standard_normal((20, 8)).astype(np.float32))
        with kioku.store.exclusive("reindex") as taken:  # type: ignore[attr-defined]
            assert taken
            with pytest.raises(StoreError, match="another `kioku reindex`"):
                kioku.store.reindex()
            # Only reading, a dry run goes beside a build.
            assert [r.vectors for r in kioku.store.reindex(dry_run=True)] == [20]
        with pytest.raises(ValidationError, match="test-reindex"):
            kioku.store.reindex(model="no-such-model")
        with kioku.store.atomic(), pytest.raises(StoreError, match="inside atomic"):
            kioku.store.reindex()
        assert kioku.store.reindex()[0].rebuilt is False


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kioku", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command(pg_env: dict[str, str], tmp_path: Path) -> None:
    env = {**pg_env, "KIOKU_STORE__HNSW_M": "8", "KIOKU_STORE__HNSW_EF_CONSTRUCTION": "32"}
    assert _cli(env, "init").returncode == 0
    added = _cli(env, "remember", "--user", "The night train to Aomori left at ten")
    assert added.returncode == 0, added.stderr
    planned = _cli(pg_env, "reindex", "--dry-run", "--json")
    assert planned.returncode == 0, planned.stderr
    (entry,) = json.loads(planned.stdout)["indexes"]
    assert (entry["before"], entry["after"], entry["rebuilt"]) == (
        "hnsw vector m=8 ef_construction=32",
        "hnsw vector m=32 ef_construction=200",
        True,
    )
    doctor = _cli(pg_env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    # A setting not applied yet is said, not a problem.
    assert checks["indexes"]["ok"] is True
    assert "1 of 1 differ from the settings" in checks["indexes"]["detail"]
    assert "run `kioku reindex`" in checks["indexes"]["detail"]
    done = _cli(pg_env, "reindex")
    assert done.returncode == 0, done.stderr
    assert "built 1 of 1 again" in done.stdout
    doctor = _cli(pg_env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["indexes"]["detail"] == "1 model(s), every index as the settings ask"
    assert "nothing to build" in _cli(pg_env, "reindex").stdout
    refused = _cli(pg_env, "reindex", "--model", "no-such-model")
    assert refused.returncode == 2
    assert "no-such-model" in refused.stderr
    assert "offline:" in refused.stderr


def test_doctor_says_whether_shared_buffers_holds_the_indexes(pg_env: dict[str, str]) -> None:
    import psycopg

    from kioku.interfaces.cli.admin_cmds import _buffers_line, _human_size

    assert _cli(pg_env, "init").returncode == 0
    doctor = _cli(pg_env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["buffers"]["detail"].startswith("no HNSW index yet; shared_buffers ")
    added = _cli(pg_env, "remember", "--user", "The ferry to Sado leaves at nine")
    assert added.returncode == 0, added.stderr
    with psycopg.connect(pg_env["KIOKU_STORE_URL"]) as conn:
        row = conn.execute(
            psycopg.sql.SQL(
                "SELECT pg_relation_size(to_regclass({} || '.' || index_name)), "
                "pg_size_bytes(current_setting('shared_buffers')) FROM {}"
            ).format(
                psycopg.sql.Literal(pg_env["KIOKU_STORE__SCHEMA"]),
                psycopg.sql.Identifier(pg_env["KIOKU_STORE__SCHEMA"], "vector_indexes"),
            )
        ).fetchone()
    assert row is not None
    index, buffers = int(row[0]), int(row[1])
    assert 0 < index < buffers
    doctor = _cli(pg_env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["buffers"]["ok"] is True
    assert checks["buffers"]["detail"] == (
        f"the HNSW indexes ({_human_size(index)}) fit in shared_buffers {_human_size(buffers)}"
    )
    # A server whose shared_buffers is smaller than the indexes is told to raise it (the
    # test server's own setting cannot change while other tests use it).
    larger = _buffers_line({"vector_index_bytes": 2 * 1024**3, "shared_buffers_bytes": 1024**3})
    assert larger is not None
    assert "larger than shared_buffers 1.0 GB" in larger
    assert "raise shared_buffers above 2.0 GB" in larger
    assert _buffers_line({}) is None


def test_a_build_that_fails_leaves_the_old_index_and_nothing_else(
    pg_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(19)
    matrix = rng.standard_normal((3000, 48)).astype(np.float32)
    with _open(pg_env, tmp_path / "home", hnsw_m="4", hnsw_ef_construction="8") as kioku:
        ids = _store(kioku, matrix)
    with _open(pg_env, tmp_path / "home", hnsw_ef_construction="400") as kioku:
        old = _index(kioku, 48)
        query = rng.standard_normal(48)
        walked = _found(kioku, query, 10)  # by the old, sparse index
        errors: list[BaseException] = []
        heard: list[tuple[str, int, int]] = []
        reported = threading.Event()

        def progress(label: str, done: int, total: int) -> None:
            heard.append((label, done, total))
            if "building index" in label:
                reported.set()

        def run() -> None:
            try:
                kioku.store.reindex(progress=progress)
            except StoreError as exc:
                errors.append(exc)

        monkeypatch.setattr(reindex_module, "POLL_SECONDS", 0.05)
        worker = threading.Thread(target=run)
        worker.start()
        # The server's own report of the build reaches the caller while it runs.
        assert reported.wait(60)
        assert heard[0] == (f"{MODEL} (48)", 0, 1)
        label, done, total = next(h for h in heard if "building index" in h[0])
        assert label.startswith(f"{MODEL} (48): building index")
        assert 0 <= done <= total
        with kioku.store._reading() as conn:  # type: ignore[attr-defined]
            # The administrator cancels the build.
            conn.execute(
                "SELECT pg_cancel_backend(pid) FROM pg_stat_progress_create_index "
                "WHERE relid = to_regclass('memory_vectors')"
            )
        worker.join()
        assert len(errors) == 1
        assert _index(kioku, 48) == old
        assert _index(kioku, 48, "_next") is None
        assert _found(kioku, query, 10) == walked
        (report,) = kioku.store.reindex()
        assert report.after == "hnsw vector m=32 ef_construction=400"
        assert _found(kioku, query, 10) == _exact(matrix, ids, query, 10)
