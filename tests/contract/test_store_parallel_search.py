"""``Store.parallel_search``: whether a search started on another thread may run now beside
this thread's reads. On PostgreSQL, outside this thread's ``atomic()`` and ``reading()`` (the
other thread would see neither, and this one would hold a connection while it waits); on
SQLite, never (one connection per store).
"""

from __future__ import annotations

import threading

from kioku.ports.store import Store


def test_parallel_search_only_outside_the_callers_transactions(store: Store) -> None:
    postgres = type(store).__name__.startswith("Postgres")
    assert store.parallel_search is postgres
    with store.reading():
        assert store.parallel_search is False
    with store.atomic():
        assert store.parallel_search is False
        with store.reading():
            assert store.parallel_search is False
    with store.atomic(durable=False):
        assert store.parallel_search is False
    assert store.parallel_search is postgres
    seen: list[bool] = []
    with store.reading():
        other = threading.Thread(target=lambda: seen.append(store.parallel_search))
        other.start()
        other.join()
    assert seen == [postgres]  # another thread holds nothing of this one's
