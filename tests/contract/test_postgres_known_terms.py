"""``known_terms`` on PostgreSQL: a common term is first looked for in a window of slots, and
only where the window finds none of its memories in scope is the GIN index asked. The answer
must be what a plain check of every term gives, whatever the windows hold: a window that
finds a term in scope proves it known, one that does not proves nothing.

The reference is computed here from the stored term arrays and the memories' owners and
archive flags. Windows are made to hold every match, a few, or none (by the share of a
term's documents each is sized for), and every term counts as common.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.postgres import lexical
from kioku.adapters.store.postgres.store import PostgresStore
from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import BASE_TIME, build_memory, postgres_store

WORDS = ["harbor", "lantern", "violin", "orchard", "glacier", "pepper", "saddle", "meadow"]
OWNERS = ["alice", "bob", "carol"]


def _memories(count: int, seed: int) -> list[Memory]:
    """Owners get different words: alice the first ones, carol the last ones, bob all; a
    third of them archived."""
    rng = random.Random(seed)
    found = []
    for n in range(1, count + 1):
        owner = OWNERS[n % 3]
        pool = {"alice": WORDS[:5], "bob": WORDS, "carol": WORDS[4:]}[owner]
        words = [rng.choice(pool) for _ in range(rng.randint(1, 4))]
        archived = BASE_TIME + timedelta(days=3) if rng.random() < 0.33 else None
        found.append(
            build_memory(
                n,
                trigger=" ".join(words),
                content="ok",
                user_id=owner,
                archived_at=archived,
                current_level=4 if archived else 1,
            )
        )
    return found


@pytest.fixture
def store(tmp_path: Path, postgres_url: str) -> Iterator[PostgresStore]:
    with postgres_store(tmp_path, _memories(150, seed=5)) as opened:
        yield opened


def _reference(store: PostgresStore, terms: list[str], flt: MemoryFilter) -> frozenset[str]:
    with store._reading() as conn:
        rows = conn.execute(
            "SELECT d.terms, m.user_id, m.archived_at IS NOT NULL FROM memory_terms AS d "
            "JOIN memories AS m ON m.id = d.memory_id"
        ).fetchall()
    held: set[str] = set()
    for stored, owner, archived in rows:
        if flt.user_id is not None and owner != flt.user_id:
            continue
        if flt.archived is not None and archived != flt.archived:
            continue
        held.update(str(t) for t in stored)
    return frozenset(t.lower() for t in terms if t.lower() in held)


_flt = st.builds(
    MemoryFilter,
    user_id=st.sampled_from([None, *OWNERS, "dave"]),
    archived=st.sampled_from([None, True, False]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    terms=st.lists(st.sampled_from([*WORDS, "absent", "Harbor"]), min_size=1, max_size=6),
    flt=_flt,
    matches=st.sampled_from([1, 4, 64, 10_000]),
    limit=st.sampled_from([None, 1, 2]),
)
def test_known_terms_with_windows_are_the_plain_check(
    store: PostgresStore,
    terms: list[str],
    flt: MemoryFilter,
    matches: int,
    limit: int | None,
) -> None:
    expected = _reference(store, terms, flt)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexical, "_PROBE_FROM_DOCS", 1)
        patch.setattr(lexical, "_PROBE_MATCHES", matches)
        found = store.known_terms(terms, flt, limit=limit)
    if limit is None:
        assert found == expected
    else:
        assert found <= expected
        assert len(found) == min(limit, len(expected))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexical, "_PROBE_FROM_DOCS", 1 << 40)  # the GIN index alone
        assert store.known_terms(terms, flt) == expected
