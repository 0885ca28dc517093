"""``Store.parallel_search``: whether a search started on another thread may run now beside
this thread's reads. On both stores, outside this thread's ``atomic()`` and ``reading()``: the
other thread would see neither (and on PostgreSQL this one would hold a connection while it
waits). On SQLite such a search reads through the store's second connection while this
thread holds the lock (tests/integration/test_sqlite_search_beside.py), once numpy is loaded
(imported here; a process without it is tested there).
"""

from __future__ import annotations

import threading

import numpy  # noqa: F401 (the SQLite store searches beside the caller once it is loaded)

from kioku.ports.store import Store


def test_parallel_search_only_outside_the_callers_transactions(store: Store) -> None:
    assert store.parallel_search is True
    with store.reading():
        assert store.parallel_search is False
    with store.atomic():
        assert store.parallel_search is False
        with store.reading():
            assert store.parallel_search is False
    with store.atomic(durable=False):
        assert store.parallel_search is False
    assert store.parallel_search is True
    seen: list[bool] = []
    with store.reading():
        other = threading.Thread(target=lambda: seen.append(store.parallel_search))
        other.start()
        other.join()
    assert seen == [True]  # another thread holds nothing of this one's
