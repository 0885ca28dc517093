"""Lexical search of the SQLite store in large stores: estimated document counts, a shrinking
postings budget, left-out ubiquitous terms and ranked samples of common terms.

Large stores are simulated by shrinking the module's thresholds, so a few hundred memories
stand for a few million. With the real thresholds a small store plans exactly as before.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kioku.adapters.store.sqlite import SqliteStore, lexical_cache, open_sqlite_store, search
from kioku.adapters.store.sqlite.queries import where_clause
from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import build_memory

COMMON = 300


def sampling_memories() -> list[Memory]:
    """Bob's COMMON memories with "coffee" (once to three times), Alice's five, and one
    with two rare terms; the PostgreSQL sampling tests use the same."""
    memories = [
        build_memory(n, content=f"coffee morning {'coffee ' * (n % 3)}note {n}", user_id="bob")
        for n in range(COMMON)
    ]
    memories += [
        build_memory(COMMON + n, content=f"coffee with alice {n}", user_id="alice")
        for n in range(5)
    ]
    memories.append(build_memory(COMMON + 5, content="harpsichord recital", user_id="bob"))
    return memories


@pytest.fixture(params=["snapshot", "fts5"])
def store(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SqliteStore]:
    """The store, ranking from the process's copy of the index or (too large a store for
    one) from FTS5 alone: every rule holds for both."""
    if request.param == "fts5":
        monkeypatch.setattr(lexical_cache, "MAX_MEMORIES", -1)
    else:
        monkeypatch.setattr(search, "_FTS5_SEARCHES", 0)  # copy at the first search
    opened = open_sqlite_store(tmp_path / "kioku" / "memories.db")
    opened.add_many(sampling_memories())
    try:
        yield opened
    finally:
        opened.close()


def _conn(store: SqliteStore) -> sqlite3.Connection:
    return store._connection()


def _slot(conn: sqlite3.Connection, memory_id: str) -> int:
    row = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memory_id = ?", (memory_id,)
    ).fetchone()
    return int(row[0])


def _scope(flt: MemoryFilter) -> tuple[str, tuple[object, ...]]:
    where, params = where_clause(flt)
    return (" AND " + where.removeprefix(" WHERE ") if where else ""), tuple(params)


def test_a_small_store_plans_as_before(store: SqliteStore) -> None:
    conn = _conn(store)
    assert search.scaled_budget(conn) == search.POSTINGS_BUDGET
    query = search.plan(conn, ["coffee", "harpsichord", "recital", "unknown"])
    assert query == search.LexicalQuery(
        '"harpsichord" OR "recital" OR "coffee"', terms=("harpsichord", "recital", "coffee")
    )
    assert search.plan(conn, ["coffee", "harpsichord"], budget=10) == search.LexicalQuery(
        '"harpsichord"', terms=("harpsichord",)
    )
    assert search.plan(conn, ["unknown"]) is None


def test_a_term_over_the_budget_ranks_a_window_of_its_matches(store: SqliteStore) -> None:
    conn = _conn(store)
    query = search.plan(conn, ["coffee"], budget=60)
    assert query is not None
    assert query.window is not None
    low, high = query.window
    assert search.plan(conn, ["coffee"], budget=60) == query  # the same sample every time
    # About 60 of the 305 matches fall in the window (a uniform sample of hashed slots).
    inside = [
        memory_id
        for (memory_id,) in conn.execute("SELECT memory_id FROM memories_fts").fetchall()
        if low <= _slot(conn, memory_id) <= high
    ]
    assert 25 <= len(inside) <= 110
    found = search.search(conn, query, "", (), 10)
    assert len(found) == 10
    assert all(low <= _slot(conn, memory_id) <= high for memory_id, _ in found)
    # Best of the sample first: the same order bm25 gives the whole window.
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)


def test_a_sample_too_small_for_the_scope_gives_way_to_every_match(store: SqliteStore) -> None:
    conn = _conn(store)
    query = search.plan(conn, ["coffee"], budget=60)
    assert query is not None
    assert query.window is not None
    scope, params = _scope(MemoryFilter(user_id="alice"))
    found = search.search(conn, query, scope, params, 10)
    assert sorted(memory_id for memory_id, _ in found) == [
        build_memory(COMMON + n).id for n in range(5)
    ]
    assert len(search.search(conn, query, "", (), 400)) == COMMON + 5


def test_a_probe_estimates_common_terms_and_counts_rare_ones(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "_PROBE_SHIFT", 1)  # probe half of the slots
    monkeypatch.setattr(search, "_PROBE_MIN", 8)
    conn = _conn(store)
    conn.execute(search._VOCAB)
    estimate = search._documents(conn, "coffee", 20)
    assert estimate % 2 == 0
    assert abs(estimate - (COMMON + 5)) < 0.35 * (COMMON + 5)
    assert search._documents(conn, "harpsichord", 20) == 1  # rare: the exact count
    assert search._documents(conn, "coffee", 1000) == COMMON + 5  # under 2 × budget: exact


def test_a_term_of_several_tokens_is_counted_by_the_vocabulary(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5 indexes "o'clock" as "o" and "clock": the vocabulary has no such term, so the
    term is left out, as it always was, however often the phrase "o clock" occurs."""
    monkeypatch.setattr(search, "_PROBE_SHIFT", 1)
    monkeypatch.setattr(search, "_PROBE_MIN", 8)
    store.add_many([build_memory(1000 + n, content=f"five o'clock tea {n}") for n in range(60)])
    conn = _conn(store)
    conn.execute(search._VOCAB)
    assert search._documents(conn, "o'clock", 1) == 0
    assert search.plan(conn, ["o'clock"], budget=1) is None


def test_terms_in_too_many_memories_are_left_out(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_TERM_DOCS", 100)
    conn = _conn(store)
    assert search.plan(conn, ["coffee"], budget=60) is None
    assert search.plan(conn, ["coffee", "harpsichord"], budget=60) == search.LexicalQuery(
        '"harpsichord"', terms=("harpsichord",)
    )
    assert store.search_lexical(["coffee"], MemoryFilter(), 10) == []


def test_the_budget_shrinks_with_the_square_root_of_a_large_store(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _conn(store)
    memories = COMMON + 6
    monkeypatch.setattr(search, "FULL_BUDGET_MEMORIES", memories)
    assert search.scaled_budget(conn, 10_000) == 10_000
    monkeypatch.setattr(search, "FULL_BUDGET_MEMORIES", 30)
    assert search.scaled_budget(conn, 10_000) == int(10_000 * math.sqrt(30 / memories))
    assert search.scaled_budget(conn, 100) == 100  # never below the smaller of budget, 2,000
    monkeypatch.setattr(search, "FULL_BUDGET_MEMORIES", 1)
    assert search.scaled_budget(conn, 10_000) == 2_000


def test_only_a_large_store_probes(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window is sized by the exact count in a small store, by the estimate in a large."""
    monkeypatch.setattr(search, "_PROBE_SHIFT", 1)
    monkeypatch.setattr(search, "_PROBE_MIN", 8)
    conn = _conn(store)

    def width() -> int:
        query = search.plan(conn, ["coffee"], budget=20)
        assert query is not None
        assert query.window is not None
        return query.window[1] - query.window[0] + 1

    assert width() == search._SLOTS * 20 // (COMMON + 5)
    monkeypatch.setattr(search, "PROBE_FROM_MEMORIES", 0)
    assert width() == search._SLOTS * 20 // search._documents(conn, "coffee", 20)
    assert search._documents(conn, "coffee", 20) != COMMON + 5  # an estimate: even, not 305
