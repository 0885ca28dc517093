"""What recall reads in bulk: the session among the scoring fields, the memories pointing at
several memories in one call, and one snapshot for many reads, the same on every store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kioku.core.model import Relation, RelationType
from kioku.ports.store import MemoryFilter, Store
from tests.contract.conftest import MakeMemory, open_store


def test_scoring_fields_carry_the_session(store: Store, make_memory: MakeMemory) -> None:
    talk = make_memory(session_id="s-42")
    alone = make_memory(session_id=None)
    store.add_many([talk, alone])
    found = {f.id: f.session_id for f in store.scoring_fields([talk.id, alone.id])}
    assert found == {talk.id: "s-42", alone.id: None}


def test_referencing_many_is_referencing_of_each(store: Store, make_memory: MakeMemory) -> None:
    a, b, lonely = make_memory(), make_memory(), make_memory()
    to_a = [make_memory(relations=(Relation(a.id, RelationType.SAME_TOPIC),)) for _ in range(3)]
    to_both = make_memory(
        relations=(Relation(a.id, RelationType.CONTINUES), Relation(b.id, RelationType.REFERENCES))
    )
    store.add_many([a, b, lonely, *to_a, to_both])
    asked = [b.id, lonely.id, a.id, "mem_20990101_000000_00000000", a.id]
    found = store.referencing_many(asked)
    assert found == {a.id: store.referencing(a.id), b.id: [to_both.id]}
    assert sorted(found[a.id]) == sorted([*(m.id for m in to_a), to_both.id])
    assert store.referencing_many([]) == {}


def test_reading_sees_one_snapshot(
    store: Store, make_memory: MakeMemory, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    first, later, own = make_memory(), make_memory(), make_memory()
    store.add(first)
    other = open_store(str(request.node.callspec.params["store"]), tmp_path)
    try:
        with store.reading():
            assert store.count(MemoryFilter()) == 1
            other.add(later)  # another process's write, committed meanwhile
            assert store.get(later.id) is None
            assert [f.id for f in store.scoring_fields([first.id, later.id])] == [first.id]
            with store.reading():  # re-entrant: still the same snapshot
                assert store.count(MemoryFilter()) == 1
        assert store.get(later.id) == later
    finally:
        other.close()
    with store.atomic():
        store.add(own)
        with store.reading():  # inside a transaction, its reads see its writes
            assert store.get(own.id) == own
    assert store.count(MemoryFilter()) == 3
