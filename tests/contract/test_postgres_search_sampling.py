"""Lexical search of the PostgreSQL store in large stores: a term in more memories than the
postings budget ranks a window of slots only (schema version 9), as SQLite's index does.

A large store is simulated by shrinking the postings budget, so a few hundred memories stand
for a million.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kioku.adapters.store.postgres import lexical
from kioku.adapters.store.postgres.store import PostgresStore
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import build_memory, pg_schema, pg_store_url
from tests.contract.test_sqlite_search_sampling import COMMON, sampling_memories
from tests.postgres_server import admin

BUDGET = 60


@pytest.fixture
def store(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[PostgresStore]:
    from kioku.adapters.store.postgres import open_postgres_store

    schema = pg_schema(tmp_path)
    admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin(f"CREATE SCHEMA {schema}")
    opened = open_postgres_store(pg_store_url(tmp_path), pool_max=2)
    opened.add_many(sampling_memories())
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", BUDGET)
    try:
        yield opened
    finally:
        opened.close()
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _slots(store: PostgresStore) -> dict[str, int]:
    with store._reading() as conn:
        rows = conn.execute("SELECT memory_id, slot FROM memory_terms").fetchall()
    return {str(memory_id): int(str(slot)) for memory_id, slot in rows}


def _plan(store: PostgresStore, terms: list[str]) -> lexical._Plan | None:
    with store._reading() as conn:
        return lexical._plan(conn, lexical.MEMORY_TERMS, terms, budget=True)


def test_terms_within_the_budget_rank_every_match(store: PostgresStore) -> None:
    plan = _plan(store, ["harpsichord", "recital", "alice"])
    assert plan is not None
    assert plan.window is None
    assert plan.terms == ["harpsichord", "recital", "alice"]


def test_a_term_over_the_budget_ranks_a_window_of_its_matches(store: PostgresStore) -> None:
    plan = _plan(store, ["coffee"])
    assert plan is not None
    assert plan.window is not None
    assert _plan(store, ["coffee"]) == plan  # the same sample every time
    low, high = plan.window
    slots = _slots(store)
    assert len(set(slots.values())) == len(slots) == COMMON + 6
    # About 60 of the 305 matches fall in the window (a uniform sample of hashed ids).
    inside = {memory_id for memory_id, slot in slots.items() if low <= slot <= high}
    assert 25 <= len(inside) <= 110
    found = store.search_lexical(["coffee"], MemoryFilter(), 10)
    assert len(found) == 10
    assert {memory_id for memory_id, _ in found} <= inside
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    # Ranked with the whole corpus's statistics: the scores every match gets.
    with store._reading() as conn:
        everything = dict(
            lexical._ranked(conn, lexical.MEMORY_TERMS, plan, None, "", (), COMMON + 5)
        )
    assert len(everything) == COMMON + 5
    assert all(everything[memory_id] == pytest.approx(s) for memory_id, s in found)
    best_inside = sorted((everything[i] for i in inside), reverse=True)[:10]
    assert [s for _, s in found] == pytest.approx(best_inside)


def test_a_sample_too_small_for_the_scope_gives_way_to_every_match(store: PostgresStore) -> None:
    found = store.search_lexical(["coffee"], MemoryFilter(user_id="alice"), 10)
    assert sorted(memory_id for memory_id, _ in found) == [
        build_memory(COMMON + n).id for n in range(5)
    ]
    assert len(store.search_lexical(["coffee"], MemoryFilter(), 400)) == COMMON + 5


def test_a_version_8_store_gets_its_slots(tmp_path: Path, postgres_url: str) -> None:
    import psycopg

    from kioku.adapters.store.postgres import migrations, open_postgres_store, writes

    schema = pg_schema(tmp_path)
    admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin(f"CREATE SCHEMA {schema}")
    url = pg_store_url(tmp_path)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT set_config('kioku.all_users', 'on', false)")
            assert migrations.migrate(conn, target=8)[-1] == 8
            old = [build_memory(n, content=f"heron note {n}") for n in (1, 2, 3)]
            with conn.transaction():
                writes.insert_memories(conn, old)
        with open_postgres_store(url, pool_max=2) as store:
            assert store.schema_version == migrations.LATEST_VERSION >= 9
            slots = _slots(store)
            assert sorted(slots) == sorted(m.id for m in old)
            assert len(set(slots.values())) == 3
            assert store.search_lexical(["heron"], MemoryFilter(), 5)
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
