"""Contract: the nightly batch's reads and bulk writes, and the lifecycle log."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from kioku.core.kinds import KnowledgeDetails
from kioku.core.lifecycle.links import Link
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import ArchiveSelect
from kioku.core.model import Embedding, Kind, Relation, RelationType
from kioku.ports.store import Store
from tests.contract.conftest import BASE_TIME, MakeMemory, archived

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def test_batch_snapshot_reads_episodes_as_columns(store: Store, make_memory: MakeMemory) -> None:
    first = make_memory(user_id="u1", memory_days=2.5, recall_count=3, retention_score=0.7)
    second = make_memory(
        user_id="u2",
        recalled_since_last_batch=True,
        protected=True,
        relations=(Relation(first.id, RelationType.REFERENCES),),
    )
    late = make_memory(created=BASE_TIME + timedelta(days=10))
    old = archived(make_memory(user_id="u2"), at=datetime(2025, 2, 1, 9, 0, tzinfo=UTC))
    requested = replace(
        archived(make_memory(user_id="u1")),
        revival_requested=True,
        revival_requested_at=datetime(2025, 3, 1, tzinfo=UTC),
    )
    knowledge = make_memory(kind=Kind.KNOWLEDGE, details=KnowledgeDetails())
    store.add_many([first, second, late, old, requested, knowledge])

    snap = store.batch_snapshot(BASE_TIME + timedelta(days=1))

    pop = snap.population
    assert list(pop.ids) == [first.id, second.id]
    assert [snap.scopes[c] for c in pop.scope] == [("u1", "default"), ("u2", "default")]
    assert list(pop.created) == [first.created.timestamp(), second.created.timestamp()]
    assert list(pop.memory_days) == [2.5, 0.0]
    assert list(pop.recall_count) == [3, 0]
    assert list(pop.recalled) == [False, True]
    assert list(pop.protected) == [False, True]
    assert list(pop.level) == [1, 1]
    assert pop.score[0] == pytest.approx(0.7)
    arch = snap.archived
    assert list(arch.ids) == [old.id, requested.id]
    assert [snap.scopes[c] for c in arch.scope] == [("u2", "default"), ("u1", "default")]
    assert arch.archived_at[0] == datetime(2025, 2, 1, 9, 0, tzinfo=UTC).timestamp()
    assert list(arch.revival_requested) == [False, True]
    assert np.isnan(arch.revival_requested_at[0])
    assert arch.revival_requested_at[1] == datetime(2025, 3, 1, tzinfo=UTC).timestamp()
    assert snap.links == ((second.id, first.id, "references"),)


def test_batch_snapshot_reads_only_the_archive_a_selection_names(
    store: Store, make_memory: MakeMemory
) -> None:
    active = make_memory(user_id="u1")
    at = datetime(2025, 2, 1, 9, 0, tzinfo=UTC)
    quiet = [archived(make_memory(user_id="u1"), at=at + timedelta(days=i)) for i in range(3)]
    shielded = replace(archived(make_memory(user_id="u3"), at=at), protected=True)
    asked = replace(
        archived(make_memory(user_id="u2"), at=at + timedelta(days=200)),
        revival_requested=True,
        revival_requested_at=datetime(2025, 9, 1, tzinfo=UTC),
    )
    linked = replace(
        archived(make_memory(user_id="u1"), at=at + timedelta(days=200)),
        relations=(Relation(active.id, RelationType.REFERENCES),),
    )
    target = archived(make_memory(user_id="u2"), at=at + timedelta(days=200))
    pointing = make_memory(user_id="u2", relations=(Relation(target.id, RelationType.CONTINUES),))
    store.add_many([active, *quiet, shielded, asked, linked, target, pointing])
    until = BASE_TIME + timedelta(days=1)

    whole = store.batch_snapshot(until)
    assert len(whole.archived) == 7
    assert whole.archived.in_scope is None  # counted from the rows

    def picked(select: ArchiveSelect) -> tuple[list[str], dict[tuple[str, str], tuple[int, int]]]:
        snap = store.batch_snapshot(until, select)
        every, free = snap.archived.scope_counts()
        counts = {snap.scopes[c]: (int(every[c]), int(free[c])) for c in range(every.size)}
        assert [snap.scopes[c] for c in snap.population.scope] == [
            ("u1", "default"),
            ("u2", "default"),
        ]
        return [str(i) for i in snap.archived.ids], {k: v for k, v in counts.items() if v[0]}

    expected_counts = {
        ("u1", "default"): (4, 4),
        ("u2", "default"): (2, 2),
        ("u3", "default"): (1, 0),
    }
    ids, counts = picked(ArchiveSelect())
    assert sorted(ids) == sorted([asked.id, linked.id, target.id])
    assert counts == expected_counts
    # Archived more than a day after `at`: the two later quiet ones stay out.
    ids, counts = picked(ArchiveSelect(erasable_before=(at + timedelta(hours=12)).timestamp()))
    assert sorted(ids) == sorted([asked.id, linked.id, target.id, quiet[0].id, shielded.id])
    assert counts == expected_counts
    ids, _ = picked(ArchiveSelect(erasable_before=float("inf")))
    assert sorted(ids) == sorted(str(i) for i in whole.archived.ids)


def test_batch_snapshot_of_an_empty_store(store: Store) -> None:
    snap = store.batch_snapshot(NOW)
    assert len(snap.population.ids) == 0
    assert len(snap.archived) == 0
    assert snap.scopes == ()
    assert snap.links == ()


def test_write_scores_sets_the_numbers_and_clears_the_recall_flag(
    store: Store, make_memory: MakeMemory
) -> None:
    one, two, other = (make_memory(recalled_since_last_batch=True) for _ in range(3))
    store.add_many([one, two, other])
    store.write_scores([one.id, two.id], [1.5, 3.0], [0.93, 0.95], [4, 0], [0.61, 0.2])
    store.write_scores([], [], [], [], [])
    got = {m.id: m for m in store.get_many([one.id, two.id, other.id])}
    assert got[one.id].memory_days == 1.5
    assert got[one.id].decay_coefficient == pytest.approx(0.93)
    assert got[one.id].recall_count == 4
    assert got[one.id].retention_score == pytest.approx(0.61)
    assert not got[one.id].recalled_since_last_batch
    assert got[two.id].memory_days == 3.0
    assert got[two.id].retention_score == pytest.approx(0.2)
    assert not got[two.id].recalled_since_last_batch
    assert got[other.id].recalled_since_last_batch  # not named: untouched
    assert got[other.id].memory_days == 0.0


def test_add_links_keeps_an_existing_pair_and_remove_links_removes_named_ones(
    store: Store, make_memory: MakeMemory
) -> None:
    a, b, c = make_memory(), make_memory(), make_memory()
    a = replace(a, relations=(Relation(b.id, RelationType.CONTINUES),))
    store.add_many([b, c, a])
    store.add_links(
        [Link(a.id, b.id, "references"), Link(a.id, c.id, "references"), Link(c.id, b.id, "x")],
        NOW,
    )
    store.add_links([], NOW)
    links = store.batch_snapshot(NOW).links
    assert links == tuple(
        sorted([(a.id, b.id, "continues"), (a.id, c.id, "references"), (c.id, b.id, "x")])
    )
    store.remove_links([(a.id, b.id), (b.id, a.id), (c.id, b.id)])
    store.remove_links([])
    assert store.batch_snapshot(NOW).links == ((a.id, c.id, "references"),)
    assert store.referencing(b.id) == []


def test_link_vectors_are_unit_vectors_of_one_model_and_scope(
    store: Store, make_memory: MakeMemory
) -> None:
    def emb(*values: float, model: str = "m") -> Embedding:
        return Embedding(model=model, vector=values)

    a = make_memory(embedding=emb(3.0, 4.0))
    b = make_memory(embedding=emb(0.0, 2.0))
    zero = make_memory(embedding=emb(0.0, 0.0))
    odd = make_memory(embedding=emb(1.0, 0.0, 0.0))  # the minority dimension
    other_model = make_memory(embedding=emb(1.0, 0.0, model="n"))
    other_user = make_memory(embedding=emb(1.0, 0.0), user_id="u2")
    gone = archived(make_memory(embedding=emb(1.0, 1.0)))
    bare = make_memory()
    store.add_many([a, b, zero, odd, other_model, other_user, gone, bare])

    ids, matrix = store.link_vectors("m", "default", "default", None)
    assert ids == sorted([a.id, b.id, zero.id])
    rows = dict(zip(ids, matrix.tolist(), strict=True))
    assert rows[a.id] == pytest.approx([0.6, 0.8])
    assert rows[b.id] == pytest.approx([0.0, 1.0])
    assert rows[zero.id] == [0.0, 0.0]
    assert matrix.dtype == np.float32

    some, part = store.link_vectors("m", "default", "default", [b.id, gone.id, "missing", b.id])
    assert some == [b.id]
    assert part.tolist() == [pytest.approx([0.0, 1.0])]

    none, empty = store.link_vectors("absent", "default", "default", None)
    assert none == []
    assert empty.size == 0


def _entry(n: int, **fields: object) -> LogEntry:
    values: dict[str, object] = {
        "event": Event.ARCHIVE,
        "memory_id": f"m{n}",
        "at": NOW + timedelta(hours=n),
        "user_id": "u1",
        "agent_id": "a",
    }
    values.update(fields)
    return LogEntry(**values)  # type: ignore[arg-type]


def test_append_log_and_read_log_round_trip_and_filter(store: Store) -> None:
    full = _entry(
        0,
        batch_day="2026-05-01",
        level_before=3,
        level_after=4,
        score_before=0.25,
        score_after=0.125,
        details={"reason": "低スコア", "n": 2, "ok": True, "list": [1, "x"]},
    )
    store.append_log(
        [
            full,
            _entry(1, event=Event.LINK, user_id="u2"),
            _entry(2, agent_id="b"),
            _entry(3, memory_id="m0", event=Event.REVIVE),
        ]
    )
    store.append_log([])
    everything = store.read_log()
    assert [e.memory_id for e in everything] == ["m0", "m1", "m2", "m0"]
    seqs = [e.seq for e in everything if e.seq is not None]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 4
    assert replace(everything[0], seq=None) == full
    assert everything[0].at == NOW
    assert everything[1].batch_day is None
    assert everything[1].level_before is None
    assert everything[1].details == {}

    assert [e.event for e in store.read_log(memory_id="m0")] == [Event.ARCHIVE, Event.REVIVE]
    assert [e.memory_id for e in store.read_log(user_id="u2")] == ["m1"]
    assert [e.memory_id for e in store.read_log(agent_id="b")] == ["m2"]
    assert [e.memory_id for e in store.read_log(since=NOW + timedelta(hours=2))] == ["m2", "m0"]
    assert [e.memory_id for e in store.read_log(events=["link", "revive"])] == ["m1", "m0"]
    assert [e.memory_id for e in store.read_log(limit=2)] == ["m2", "m0"]
    assert [e.memory_id for e in store.read_log(user_id="u1", agent_id="a", limit=1)] == ["m0"]
    assert store.read_log(user_id="nobody") == []


def test_append_log_is_undone_with_its_transaction(store: Store) -> None:
    def append_then_fail() -> None:
        with store.atomic():
            store.append_log([_entry(0)])
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        append_then_fail()
    assert store.read_log() == []
    store.append_log([_entry(1)])
    assert [e.memory_id for e in store.read_log()] == ["m1"]
