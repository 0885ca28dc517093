"""What recall reads in bulk: the session among the scoring fields, and the memories pointing
at several memories in one call, the same on every store."""

from __future__ import annotations

from kioku.core.model import Relation, RelationType
from kioku.ports.store import Store
from tests.contract.conftest import MakeMemory


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
