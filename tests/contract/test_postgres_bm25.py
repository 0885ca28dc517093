"""BM25 on PostgreSQL, computed term by term over each term's own documents: every score is
the very float a sum over all the query's terms in plan order gives (absent terms adding 0),
the ranking breaks ties by id, the scope and the sampled window are honoured, and the scores
agree with SQLite's FTS5 ranking of the same memories.

The reference is written here in Python from the stored term arrays and the formula of FTS5
(k1 1.2, b 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` of at least 1e-6), in the order the
store's plan takes the terms (rarest first).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.postgres import lexical
from kioku.adapters.store.postgres.store import PostgresStore
from kioku.adapters.store.sqlite import open_sqlite_store
from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import build_memory, postgres_store

WORDS = [
    "harbor", "lantern", "violin", "orchard", "glacier", "pepper", "saddle", "meadow",
    "copper", "thistle", "walnut", "beacon", "quarry", "falcon", "ember", "juniper",
]  # fmt: skip
K1, B = 1.2, 0.75


def _memories(count: int, seed: int) -> list[Memory]:
    """Memories of a few common words, repeated at random (term frequencies above 1), in two
    owners' scopes."""
    rng = random.Random(seed)
    found = []
    for n in range(1, count + 1):
        words = [rng.choice(WORDS[: rng.randint(3, len(WORDS))]) for _ in range(rng.randint(2, 9))]
        found.append(
            build_memory(
                n,
                trigger=" ".join(words),
                content="ok",
                user_id="alice" if n % 3 else "bob",
            )
        )
    return found


@pytest.fixture
def store(tmp_path: Path, postgres_url: str) -> Iterator[PostgresStore]:
    with postgres_store(tmp_path, _memories(240, seed=11)) as opened:
        yield opened


def _reference(
    store: PostgresStore, terms: list[str], owner: str | None
) -> list[tuple[str, float]]:
    """BM25 of every memory (of ``owner``) holding any of ``terms``, best first, ties by id."""
    with store._reading() as conn:
        rows = conn.execute(
            "SELECT d.memory_id, d.terms, m.user_id FROM memory_terms AS d "
            "JOIN memories AS m ON m.id = d.memory_id"
        ).fetchall()
    docs = {str(i): (list(t), str(u)) for i, t, u in rows}
    total = len(docs)
    average = sum(len(t) for t, _ in docs.values()) / total
    counts = {term: sum(term in t for t, _ in docs.values()) for term in set(terms)}
    order = sorted((n, term) for term, n in counts.items() if n > 0)
    scored = []
    for memory_id, (held, user) in docs.items():
        if owner is not None and user != owner:
            continue
        score, hit = 0.0, False
        for n, term in order:
            tf = held.count(term)
            if not tf:
                continue
            hit = True
            idf = max(1e-6, math.log((total - n + 0.5) / (n + 0.5)))
            score += (K1 + 1) * idf * tf / (tf + K1 * (1 - B) + K1 * B / average * len(held))
        if hit:
            scored.append((memory_id, score))
    return sorted(scored, key=lambda hit: (-hit[1], hit[0]))


QUERIES = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(terms=QUERIES, owner=st.sampled_from([None, "alice", "bob"]), limit=st.integers(1, 60))
def test_scores_are_the_sum_over_the_query_terms_in_plan_order(
    store: PostgresStore, terms: list[str], owner: str | None, limit: int
) -> None:
    found = store.search_lexical(terms, MemoryFilter(user_id=owner), limit)
    expected = _reference(store, terms, owner)[:limit]
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == [s for _, s in expected]  # the very same floats


def test_a_sampled_window_ranks_its_own_matches_the_same_way(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 40)
    terms = ["harbor", "lantern"]
    with store._reading() as conn:
        plan = lexical._plan(conn, lexical.MEMORY_TERMS, terms, budget=True)
        assert plan is not None
        assert plan.window is not None
        low, high = plan.window
        inside = {
            str(row[0])
            for row in conn.execute(
                "SELECT memory_id FROM memory_terms WHERE slot BETWEEN %s AND %s", (low, high)
            )
        }
    found = store.search_lexical(terms, MemoryFilter(), 10)
    assert found
    assert {i for i, _ in found} <= inside
    expected = [hit for hit in _reference(store, plan.terms, None) if hit[0] in inside][:10]
    assert found == expected


def test_the_scores_agree_with_sqlite(store: PostgresStore, tmp_path: Path) -> None:
    other = open_sqlite_store(tmp_path / "sqlite" / "memories.db")
    try:
        other.add_many(_memories(240, seed=11))
        for terms in (["harbor"], ["violin", "ember"], WORDS[:6], ["juniper", "falcon", "copper"]):
            # Every match (ties at a cut may fall either way: SQLite breaks them by rowid).
            ours = store.search_lexical(terms, MemoryFilter(), 500)
            theirs = other.search_lexical(terms, MemoryFilter(), 500)
            assert {i for i, _ in ours} == {i for i, _ in theirs}, terms
            by_id = dict(theirs)
            for memory_id, score in ours:
                assert math.isclose(score, by_id[memory_id], rel_tol=1e-12), (terms, memory_id)
    finally:
        other.close()
