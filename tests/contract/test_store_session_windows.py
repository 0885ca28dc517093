"""``session_windows``: the turns of many sessions' time windows in one read, the same
memories as one ``activity_fields`` call per window, on every store."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from kioku.core.model import Memory
from kioku.errors import ValidationError
from kioku.ports.store import MemoryFilter, Order, Store
from tests.contract.conftest import BASE_TIME, archived, build_memory, memory_id

Window = tuple[str, datetime, datetime]


def _one_by_one(
    store: Store, flt: MemoryFilter, windows: list[Window]
) -> list[list[tuple[str, datetime]]]:
    """What one ``activity_fields`` call per window reads, oldest first."""
    return [
        [
            (f.id, f.created)
            for f in store.activity_fields(
                replace(
                    flt,
                    session_id=session,
                    created_after=after,
                    created_before=before,
                    order=Order.CREATED_ASC,
                )
            )
        ]
        for session, after, before in windows
    ]


def _ids(found: list[list[tuple[str, datetime]]]) -> list[list[str]]:
    return [[key for key, _ in window] for window in found]


def _sessions(count: int, turns: int, **fields: object) -> list[Memory]:
    """``count`` sessions ``s0``, ``s1``, ... of ``turns`` turns each, a minute apart; the
    sessions interleave in time, so a time window alone never isolates one."""
    return [
        build_memory(
            1 + s * turns + t,
            session_id=f"s{s}",
            created=BASE_TIME + timedelta(minutes=t, seconds=s),
            **fields,
        )
        for s in range(count)
        for t in range(turns)
    ]


def _at(minutes: float) -> datetime:
    return BASE_TIME + timedelta(minutes=minutes)


def test_the_same_rows_as_one_read_per_window(store: Store) -> None:
    store.add_many(_sessions(4, 12))
    windows: list[Window] = [
        ("s2", _at(3), _at(7)),
        ("s0", _at(0), _at(12)),
        ("s2", _at(5), _at(9)),  # the same session again, overlapping the first
        ("s9", _at(0), _at(12)),  # no such session
        ("s1", _at(4), _at(4)),  # an empty span
        ("s3", _at(11), _at(30)),
    ]
    found = store.session_windows(MemoryFilter(), windows)
    assert found == _one_by_one(store, MemoryFilter(), windows)
    assert [len(w) for w in found] == [4, 12, 4, 0, 0, 1]
    made = {m.id: m.created for m in store.list(MemoryFilter())}
    assert all(at == made[key] for window in found for key, at in window)


def test_limit_and_offset_apply_to_each_window(store: Store) -> None:
    store.add_many(_sessions(3, 10))
    windows: list[Window] = [
        ("s0", _at(0), _at(10)),
        ("s1", _at(2), _at(9)),
        ("s2", _at(8), _at(9)),
    ]
    for limit, offset in ((3, 0), (2, 1), (None, 4), (0, 0), (100, 0)):
        flt = MemoryFilter(limit=limit, offset=offset)
        assert store.session_windows(flt, windows) == _one_by_one(store, flt, windows)
    capped = store.session_windows(MemoryFilter(limit=3), windows)
    assert [len(w) for w in capped] == [3, 3, 1]
    assert _ids(capped)[1] == [m.id for m in _sessions(3, 10)[12:15]]  # the oldest three


@pytest.mark.parametrize("order", list(Order))
def test_always_oldest_first(store: Store, order: Order) -> None:
    turns = _sessions(2, 8)
    # Retention scores out of creation order: no order of the filter's applies.
    store.add_many([replace(m, retention_score=(5 * i % 8) / 8) for i, m in enumerate(turns)])
    windows: list[Window] = [("s1", _at(1), _at(7)), ("s0", _at(0), _at(8))]
    found = store.session_windows(MemoryFilter(order=order, limit=4), windows)
    assert found == _one_by_one(store, MemoryFilter(limit=4), windows)
    for window in found:
        assert [at for _, at in window] == sorted(at for _, at in window)


def test_ties_in_time_go_by_id(store: Store) -> None:
    same = [build_memory(n, session_id="s", created=_at(2)) for n in (7, 3, 9, 5)]
    store.add_many([*same, build_memory(1, session_id="s", created=_at(1))])
    [found] = store.session_windows(MemoryFilter(limit=4), [("s", _at(0), _at(3))])
    assert [key for key, _ in found] == [memory_id(1), *sorted(m.id for m in same)[:3]]


def test_the_scope_is_respected(store: Store) -> None:
    mine = _sessions(2, 6, user_id="alice", agent_id="a1")
    theirs = [replace(m, id=m.id.replace("_0000", "_1000"), user_id="bob") for m in _sessions(2, 6)]
    other_agent = [
        replace(m, id=m.id.replace("_0000", "_2000"), user_id="alice", agent_id="a2")
        for m in _sessions(2, 6)
    ]
    gone = archived(build_memory(900, session_id="s0", user_id="alice", agent_id="a1"))
    gone = replace(gone, created=_at(2.5))
    store.add_many([*mine, *theirs, *other_agent, gone])
    windows: list[Window] = [("s0", _at(0), _at(6)), ("s1", _at(1), _at(3))]
    live = MemoryFilter(user_id="alice", agent_id="a1", archived=False)
    found = _ids(store.session_windows(live, windows))
    assert found == _ids(_one_by_one(store, live, windows))
    owned = {m.id for m in mine}
    assert all(key in owned for window in found for key in window)
    assert [len(w) for w in found] == [6, 2]
    anything = MemoryFilter(user_id="alice", agent_id="a1")
    with_archive = _ids(store.session_windows(anything, windows))
    assert gone.id in with_archive[0]
    assert with_archive == _ids(_one_by_one(store, anything, windows))
    everyone = _ids(store.session_windows(MemoryFilter(archived=False), windows))
    assert [len(w) for w in everyone] == [18, 6]


def test_the_filters_own_session_and_times_are_replaced(store: Store) -> None:
    store.add_many(_sessions(2, 5))
    flt = MemoryFilter(session_id="s1", created_after=_at(4), created_before=_at(5))
    found = store.session_windows(flt, [("s0", _at(0), _at(3))])
    assert found == _one_by_one(store, MemoryFilter(), [("s0", _at(0), _at(3))])
    assert len(found[0]) == 3


def test_no_windows_reads_nothing(store: Store) -> None:
    store.add_many(_sessions(1, 3))
    assert store.session_windows(MemoryFilter(), []) == []


def test_many_windows(store: Store) -> None:
    store.add_many(_sessions(30, 20))
    rng = random.Random(18)
    windows: list[Window] = []
    for _ in range(400):
        start = rng.uniform(-2, 22)
        windows.append((f"s{rng.randrange(32)}", _at(start), _at(start + rng.uniform(0, 6))))
    flt = MemoryFilter(archived=False, limit=4)
    found = store.session_windows(flt, windows)
    assert len(found) == 400
    assert found == _one_by_one(store, flt, windows)
    assert sum(len(w) for w in found) > 400


def test_a_window_needs_aware_times(store: Store) -> None:
    naive = datetime(2025, 1, 15, 14, 30)
    with pytest.raises(ValidationError):
        store.session_windows(MemoryFilter(), [("s0", naive, _at(3))])
    with pytest.raises(ValidationError):
        store.session_windows(MemoryFilter(limit=-1), [("s0", _at(0), _at(3))])


def test_each_window_is_read_through_the_session_index(
    store: Store, request: pytest.FixtureRequest
) -> None:
    """The windows are looked up by session and time, never by scanning the owner's
    memories (the plan of the statement itself, on a store large enough to tell)."""
    store.add_many(_sessions(60, 30, user_id="alice"))
    windows: list[Window] = [(f"s{n}", _at(3), _at(9)) for n in range(0, 60, 7)]
    flt = MemoryFilter(user_id="alice", agent_id="default", archived=False, limit=50)
    if request.node.callspec.params["store"] == "sqlite":
        conn = store._conn  # type: ignore[attr-defined]
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        try:
            store.session_windows(flt, windows)
        finally:
            conn.set_trace_callback(None)
        [statement] = [q for q in seen if "json_each" in q]
        plan = " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + statement))
    else:
        from kioku.adapters.store.postgres import activity
        from kioku.adapters.store.postgres.queries import and_clause

        rest, params = and_clause(MemoryFilter(user_id="alice", agent_id="default", archived=False))
        sql = activity._SELECT_WINDOWS.format(rest=rest)
        values = [[s for s, _, _ in windows], [a.timestamp() for _, a, _ in windows]]
        values.append([b.timestamp() for _, _, b in windows])
        with store._reading() as conn:  # type: ignore[attr-defined]
            conn.execute("ANALYZE memories")
            rows = conn.execute("EXPLAIN " + sql, (*values, *params, 50, 0)).fetchall()
        plan = " ".join(str(row[0]) for row in rows)
    assert "idx_memories_session" in plan
    assert [len(w) for w in store.session_windows(flt, windows)] == [6] * len(windows)
