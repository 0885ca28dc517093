"""``Store.atomic(durable=False)``, the transaction recall marks are written in: on both stores
it commits and rolls back exactly as ``atomic()`` does; on PostgreSQL it turns
``synchronous_commit`` off for that transaction only, and inner levels join it as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kioku.ports.store import Store
from tests.contract.conftest import BASE_TIME, MakeMemory, open_store, pg_schema
from tests.postgres_server import admin


class BoomError(Exception):
    pass


def _adapter(store: Store) -> str:
    return "postgres" if type(store).__name__.startswith("Postgres") else "sqlite"


def _sync_commit(store: Store) -> str:
    """The ``synchronous_commit`` in force on the transaction the store holds now."""
    conn = store._held.conn  # type: ignore[attr-defined]
    assert conn is not None, "only inside atomic()"
    row = conn.execute("SHOW synchronous_commit").fetchone()
    return str(row[0])


def _then_fail(store: Store, durable: bool, write: Callable[[], object]) -> None:
    """``write`` in one ``atomic(durable=...)`` level, then BoomError inside it."""
    with store.atomic(durable=durable):
        write()
        raise BoomError


def test_a_relaxed_transaction_commits_for_other_connections(
    store: Store, make_memory: MakeMemory, tmp_path: Path
) -> None:
    first, second = make_memory(n=1), make_memory(n=2)
    store.add(first)
    with store.atomic(durable=False):
        store.mark_recalled([first.id], at=BASE_TIME)
        store.add(second)
        store.set_state("mood", "calm")
    other = open_store(_adapter(store), tmp_path)
    try:
        marked = other.get(first.id)
        assert marked is not None
        assert marked.recalled_since_last_batch
        assert other.get(second.id) is not None
        assert other.get_state("mood") == "calm"
    finally:
        other.close()


def test_a_relaxed_transaction_rolls_back_whole(store: Store, make_memory: MakeMemory) -> None:
    first = make_memory(n=1)
    store.add(first)
    with pytest.raises(BoomError):
        _then_fail(
            store,
            False,
            lambda: (store.mark_recalled([first.id], at=BASE_TIME), store.add(make_memory(n=2))),
        )
    marked = store.get(first.id)
    assert marked is not None
    assert not marked.recalled_since_last_batch
    assert store.get(make_memory(n=2).id) is None


def test_an_undone_inner_level_keeps_the_outer_writes(
    store: Store, make_memory: MakeMemory
) -> None:
    first = make_memory(n=1)
    with store.atomic(durable=False):
        store.add(first)
        with pytest.raises(BoomError):
            _then_fail(store, True, lambda: store.add(make_memory(n=2)))
        store.set_state("mood", "calm")
    assert store.get(first.id) is not None
    assert store.get(make_memory(n=2).id) is None
    assert store.get_state("mood") == "calm"


@pytest.fixture
def pg_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A PostgreSQL store alone: ``synchronous_commit`` is a setting of that server."""
    request.getfixturevalue("postgres_url")
    admin(f"DROP SCHEMA IF EXISTS {pg_schema(tmp_path)} CASCADE")
    admin(f"CREATE SCHEMA {pg_schema(tmp_path)}")
    opened = open_store("postgres", tmp_path)
    try:
        yield opened
    finally:
        opened.close()
        admin(f"DROP SCHEMA IF EXISTS {pg_schema(tmp_path)} CASCADE")


def test_postgres_relaxes_only_the_transaction_that_asks(pg_store: Store) -> None:
    with pg_store.atomic():
        assert _sync_commit(pg_store) == "on"
    with pg_store.atomic(durable=False):
        assert _sync_commit(pg_store) == "off"
        with pg_store.atomic(durable=False):
            assert _sync_commit(pg_store) == "off"
    # The pool gives the same connection back: the setting did not outlive its transaction.
    with pg_store.atomic():
        assert _sync_commit(pg_store) == "on"


def test_postgres_inner_levels_join_a_relaxed_transaction(pg_store: Store) -> None:
    with pg_store.atomic(durable=False):
        # Every store write opens an inner level: they must not make the marks durable.
        pg_store.set_state("mood", "calm")
        with pg_store.atomic():
            assert _sync_commit(pg_store) == "off"
        with pytest.raises(BoomError):
            _then_fail(pg_store, True, lambda: pg_store.set_state("mood", "low"))
        assert _sync_commit(pg_store) == "off"
    assert pg_store.get_state("mood") == "calm"


def test_postgres_a_durable_outer_level_is_never_relaxed(pg_store: Store) -> None:
    with pg_store.atomic():
        with pg_store.atomic(durable=False):
            assert _sync_commit(pg_store) == "on"
        assert _sync_commit(pg_store) == "on"
