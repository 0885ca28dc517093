"""The Store contract: what every adapter must do, checked on a real database.

Conventions every adapter follows (and this suite pins down):
- timestamps keep their offset and are stored to the second;
- embeddings come back within float32 precision;
- a memory's relations come back ordered by when they were made, then by target id;
- ``created_after`` is inclusive, ``created_before`` exclusive, compared as instants;
- creation order follows the full instant (memories made within one second keep their
  order, though ``created`` reads back to the second); order ties are broken by id in the
  same direction, so every order is total;
- ``count`` ignores ``limit``/``offset``; ``get_many`` keeps the order asked.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.core.kinds import KnowledgeDetails
from kioku.core.model import Embedding, Kind, Memory, Relation, RelationType, Valence
from kioku.errors import DuplicateIdError, StoreError
from kioku.ports.store import MemoryFilter, MemoryPatch, Order, Store
from tests.contract.conftest import BASE_TIME, TOKYO, MakeMemory, archived, build_memory

MINUTE = timedelta(minutes=1)


def test_adapter_satisfies_the_protocol(store: Store) -> None:
    assert isinstance(store, Store)


# -- round trips -----------------------------------------------------------------------


def _full_memory(make_memory: MakeMemory, store: Store) -> Memory:
    first, second = make_memory(), make_memory()
    store.add_many([first, second])
    new_york = timezone(timedelta(hours=-5))
    return make_memory(
        trigger="記憶システムについて相談された 🧠",
        content="SQLite移行について議論した。" + "長文" * 50_000,  # 100 KB of text
        emotional_intensity=85,
        emotional_valence=Valence.NEGATIVE,
        emotional_arousal=70,
        category="decision",
        decay_coefficient=0.987654321,
        memory_days=12.25,
        retention_score=42.5,
        current_level=4,
        emotional_tags=("anxiety", "determination"),
        keywords=("SQLite", "移行", "バックアップ"),
        recalled_since_last_batch=True,
        recall_count=7,
        relations=tuple(
            sorted(
                (
                    Relation(first.id, RelationType.DERIVED_FROM),
                    Relation(second.id, RelationType.CONTRADICTS),
                ),
                key=lambda r: r.id,
            )
        ),
        archived_at=datetime(2025, 3, 1, 3, 0, 0, tzinfo=TOKYO),
        protected=True,
        revival_requested=True,
        revival_requested_at=datetime(2025, 3, 2, 12, 0, 0, tzinfo=UTC),
        embedding=Embedding("test:float32", (0.5, -0.25, 1.0, 0.0, -2.0, 0.125)),
        user_id="ユーザー",
        agent_id="agent-7",
        kind=Kind.SEMANTIC,
        session_id="session-ß",
        source_ids=("turn-1", "turn-2"),
        source_timestamps=(
            datetime(2025, 1, 15, 14, 0, 0, tzinfo=TOKYO),
            datetime(2025, 1, 15, 0, 1, 2, tzinfo=new_york),
        ),
    )


def test_every_field_round_trips(store: Store, make_memory: MakeMemory) -> None:
    memory = _full_memory(make_memory, store)
    store.add(memory)
    got = store.get(memory.id)
    assert got == memory
    assert got is not None
    assert len(got.content) == len(memory.content)
    assert got.created.utcoffset() == timedelta(hours=9)
    assert got.revival_requested_at is not None
    assert got.revival_requested_at.utcoffset() == timedelta(0)
    assert [ts.utcoffset() for ts in got.source_timestamps] == [
        timedelta(hours=9),
        timedelta(hours=-5),
    ]


def test_defaults_round_trip(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory()
    store.add(memory)
    assert store.get(memory.id) == memory


def test_embedding_is_float32_with_its_model(store: Store, make_memory: MakeMemory) -> None:
    vector = tuple((i - 768) / 997.0 for i in range(1536))
    memory = make_memory(embedding=Embedding("openai:text-embedding-3-small", vector))
    store.add(memory)
    got = store.get(memory.id)
    assert got is not None
    assert got.embedding is not None
    assert got.embedding.model == "openai:text-embedding-3-small"
    assert got.embedding.dim == 1536
    assert got.embedding.vector == pytest.approx(vector, rel=1e-6, abs=1e-7)


_EXAMPLES = itertools.count(10_000)
_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=200,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(trigger=_TEXT, content=_TEXT, keywords=st.lists(_TEXT, max_size=5))
def test_any_text_round_trips(
    store: Store, trigger: str, content: str, keywords: list[str]
) -> None:
    memory = build_memory(
        next(_EXAMPLES), trigger=trigger, content=content, keywords=tuple(keywords)
    )
    store.add(memory)
    assert store.get(memory.id) == memory


# -- adding ------------------------------------------------------------------------------


def test_duplicate_id_is_refused_and_the_original_kept(
    store: Store, make_memory: MakeMemory
) -> None:
    memory = make_memory()
    store.add(memory)
    with pytest.raises(DuplicateIdError) as raised:
        store.add(replace(memory, content="another"))
    assert raised.value.memory_id == memory.id
    assert store.get(memory.id) == memory


def test_add_many_is_all_or_nothing(store: Store, make_memory: MakeMemory) -> None:
    taken = make_memory()
    store.add(taken)
    fresh = make_memory()
    with pytest.raises(DuplicateIdError):
        store.add_many([fresh, taken])
    assert store.get(fresh.id) is None
    twice = make_memory()
    with pytest.raises(DuplicateIdError):
        store.add_many([twice, twice])
    assert store.get(twice.id) is None
    assert store.count(MemoryFilter()) == 1


def test_relations_may_point_within_one_batch(store: Store, make_memory: MakeMemory) -> None:
    target = make_memory()
    source = make_memory(relations=(Relation(target.id, RelationType.CONTINUES),))
    store.add_many([source, target])
    assert store.get(source.id) == source
    assert store.referencing(target.id) == [source.id]


@pytest.mark.parametrize("problem", ["missing target", "self link", "repeated target"])
def test_bad_relations_are_refused_and_nothing_is_written(
    store: Store, make_memory: MakeMemory, problem: str
) -> None:
    existing = make_memory()
    store.add(existing)
    memory = make_memory()
    links = {
        "missing target": (Relation("mem_20990101_000000_deadbeef", RelationType.REFERENCES),),
        "self link": (Relation(memory.id, RelationType.SAME_TOPIC),),
        "repeated target": (
            Relation(existing.id, RelationType.SAME_TOPIC),
            Relation(existing.id, RelationType.CONTINUES),
        ),
    }[problem]
    with pytest.raises(StoreError) as raised:
        store.add(replace(memory, relations=links))
    assert memory.id in str(raised.value)
    assert store.get(memory.id) is None
    assert store.referencing(existing.id) == []


def test_get_and_get_many(store: Store, make_memory: MakeMemory) -> None:
    a, b, c = make_memory(), make_memory(), make_memory()
    store.add_many([a, b, c])
    assert store.get("mem_20990101_000000_00000000") is None
    got = store.get_many([c.id, "mem_20990101_000000_00000000", a.id, c.id])
    assert [m.id for m in got] == [c.id, a.id]
    assert store.get_many([]) == []


# -- reading with filters ----------------------------------------------------------------


def _population() -> dict[int, Memory]:
    def mem(n: int, **kw: Any) -> Memory:
        return build_memory(n, **kw)

    return {
        1: mem(1, user_id="alice", agent_id="a1", session_id="s1", retention_score=10.0),
        2: mem(
            2,
            user_id="alice",
            agent_id="a1",
            current_level=2,
            category="casual",
            protected=True,
            recalled_since_last_batch=True,
            session_id="s1",
            retention_score=50.0,
        ),
        3: mem(
            3,
            user_id="alice",
            agent_id="a2",
            current_level=3,
            category="decision",
            kind=Kind.SEMANTIC,
            session_id="s2",
            retention_score=50.0,
        ),
        4: archived(
            mem(
                4,
                user_id="alice",
                agent_id="a1",
                category="emotional",
                revival_requested=True,
                revival_requested_at=BASE_TIME + timedelta(days=2),
                retention_score=5.0,
            )
        ),
        5: mem(
            5,
            user_id="bob",
            agent_id="a1",
            kind=Kind.PROCEDURAL,
            recalled_since_last_batch=True,
            session_id="s3",
            retention_score=70.0,
        ),
        # Later instant (14:40 JST) though its UTC text sorts before the others.
        6: mem(
            6,
            user_id="alice",
            agent_id="a1",
            created=datetime(2025, 1, 15, 5, 40, 0, tzinfo=UTC),
            retention_score=20.0,
        ),
        # The same instant as memory 2, written with another offset.
        7: mem(
            7,
            user_id="alice",
            agent_id="a1",
            category="casual",
            created=(BASE_TIME + 2 * MINUTE).astimezone(UTC),
            retention_score=30.0,
        ),
    }


@pytest.fixture
def population(store: Store) -> dict[int, Memory]:
    memories = _population()
    store.add_many(list(memories.values()))
    return memories


FILTER_CASES: list[tuple[str, MemoryFilter, set[int]]] = [
    ("everything", MemoryFilter(), {1, 2, 3, 4, 5, 6, 7}),
    ("level 1", MemoryFilter(levels=(1,)), {1, 5, 6, 7}),
    ("levels 2 and 3", MemoryFilter(levels=(2, 3)), {2, 3}),
    ("no levels", MemoryFilter(levels=()), set()),
    ("work", MemoryFilter(categories=("work",)), {1, 5, 6}),
    ("casual or decision", MemoryFilter(categories=("casual", "decision")), {2, 3, 7}),
    ("archived", MemoryFilter(archived=True), {4}),
    ("active", MemoryFilter(archived=False), {1, 2, 3, 5, 6, 7}),
    ("protected", MemoryFilter(protected=True), {2}),
    ("unprotected", MemoryFilter(protected=False), {1, 3, 4, 5, 6, 7}),
    ("recalled", MemoryFilter(recalled_since_last_batch=True), {2, 5}),
    ("not recalled", MemoryFilter(recalled_since_last_batch=False), {1, 3, 4, 6, 7}),
    ("revival requested", MemoryFilter(revival_requested=True), {4}),
    ("semantic", MemoryFilter(kind="semantic"), {3}),
    ("procedural", MemoryFilter(kind=Kind.PROCEDURAL), {5}),
    ("session s1", MemoryFilter(session_id="s1"), {1, 2}),
    ("after (inclusive)", MemoryFilter(created_after=BASE_TIME + 3 * MINUTE), {3, 4, 5, 6}),
    ("before (exclusive)", MemoryFilter(created_before=BASE_TIME + 2 * MINUTE), {1}),
    (
        "after, given in UTC",
        MemoryFilter(created_after=(BASE_TIME + 2 * MINUTE).astimezone(UTC)),
        {2, 3, 4, 5, 6, 7},
    ),
    (
        "range",
        MemoryFilter(created_after=BASE_TIME + 2 * MINUTE, created_before=BASE_TIME + 4 * MINUTE),
        {2, 3, 7},
    ),
    ("user alice", MemoryFilter(user_id="alice"), {1, 2, 3, 4, 6, 7}),
    ("user bob", MemoryFilter(user_id="bob"), {5}),
    ("agent a2", MemoryFilter(agent_id="a2"), {3}),
    ("alice with a1", MemoryFilter(user_id="alice", agent_id="a1"), {1, 2, 4, 6, 7}),
    ("nobody", MemoryFilter(user_id="carol"), set()),
    (
        "combined",
        MemoryFilter(user_id="alice", archived=False, levels=(1,)),
        {1, 6, 7},
    ),
]


@pytest.mark.parametrize(
    ("flt", "expected"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filters_and_count(
    store: Store, population: dict[int, Memory], flt: MemoryFilter, expected: set[int]
) -> None:
    listed = store.list(flt)
    assert {m.id for m in listed} == {population[n].id for n in expected}
    assert len(listed) == len(expected)
    assert store.count(flt) == len(listed)
    assert [m.id for m in store.iter(flt, batch_size=2)] == [m.id for m in listed]


ORDER_CASES = {
    Order.CREATED_DESC: [6, 5, 4, 3, 7, 2, 1],
    Order.CREATED_ASC: [1, 2, 7, 3, 4, 5, 6],
    Order.SCORE_DESC: [5, 3, 2, 7, 6, 1, 4],
    Order.SCORE_ASC: [4, 1, 6, 7, 2, 3, 5],
}


@pytest.mark.parametrize("order", list(ORDER_CASES))
def test_orders_are_total_and_by_instant(
    store: Store, population: dict[int, Memory], order: Order
) -> None:
    expected = [population[n].id for n in ORDER_CASES[order]]
    assert [m.id for m in store.list(MemoryFilter(order=order))] == expected
    for batch_size in (1, 3, 100):
        ids = [m.id for m in store.iter(MemoryFilter(order=order), batch_size=batch_size)]
        assert ids == expected


@pytest.mark.parametrize("order", list(ORDER_CASES))
@pytest.mark.parametrize(("limit", "offset"), [(3, 0), (3, 2), (None, 4), (0, 0), (10, 6)])
def test_limit_and_offset(
    store: Store,
    population: dict[int, Memory],
    order: Order,
    limit: int | None,
    offset: int,
) -> None:
    everything = [population[n].id for n in ORDER_CASES[order]]
    expected = everything[offset:] if limit is None else everything[offset : offset + limit]
    flt = MemoryFilter(order=order, limit=limit, offset=offset)
    assert [m.id for m in store.list(flt)] == expected
    assert [m.id for m in store.iter(flt, batch_size=2)] == expected
    assert store.count(flt) == len(everything)


def test_memories_made_within_one_second_keep_their_order(store: Store) -> None:
    # The earlier memory has the larger id, so a tie broken by id would reverse them.
    earlier = build_memory(0xFF, created=BASE_TIME.replace(microsecond=100_000))
    later = build_memory(0x01, created=BASE_TIME.replace(microsecond=200_000))
    store.add_many([earlier, later])
    assert [m.id for m in store.list(MemoryFilter())] == [later.id, earlier.id]
    oldest_first = store.list(MemoryFilter(order=Order.CREATED_ASC))
    assert [m.id for m in oldest_first] == [earlier.id, later.id]
    assert oldest_first[0].created == BASE_TIME  # stored to the second


def test_same_text_matches_exactly_within_the_filter(store: Store, make_memory: MakeMemory) -> None:
    same = make_memory(trigger="lunch", content="ramen with Aiko", session_id="s1")
    store.add_many(
        [
            same,
            make_memory(trigger="lunch", content="ramen with Aiko!", session_id="s1"),
            make_memory(trigger="Lunch", content="ramen with Aiko", session_id="s1"),
            make_memory(trigger="lunch", content="ramen with Aiko", user_id="bob"),
        ]
    )
    flt = MemoryFilter(user_id=same.user_id, agent_id=same.agent_id)
    assert store.same_text("lunch", "ramen with Aiko", flt) == [same.id]
    assert store.same_text("lunch", "ramen with Aiko", MemoryFilter(session_id="s2")) == []
    assert len(store.same_text("lunch", "ramen with Aiko", MemoryFilter())) == 2
    assert store.same_text("lunch", "soba", flt) == []


def test_source_ids_of_a_filter(store: Store, make_memory: MakeMemory) -> None:
    store.add_many(
        [
            make_memory(source_ids=("s:1", "s:2")),
            make_memory(source_ids=("s:3",), user_id="bob"),
            archived(make_memory(source_ids=("s:4",))),
            make_memory(),
        ]
    )
    assert store.source_ids(MemoryFilter()) == {"s:1", "s:2", "s:3", "s:4"}
    assert store.source_ids(MemoryFilter(user_id="bob")) == {"s:3"}
    assert store.source_ids(MemoryFilter(archived=False)) == {"s:1", "s:2", "s:3"}
    assert store.source_ids(MemoryFilter(user_id="carol")) == set()


def test_default_order_is_newest_first(store: Store, population: dict[int, Memory]) -> None:
    assert store.list(MemoryFilter())[0].id == population[6].id


def test_scope_isolation(store: Store, make_memory: MakeMemory) -> None:
    for i in range(30):
        store.add(make_memory(user_id="alice" if i % 2 else "bob", agent_id=f"agent{i % 3}"))
    for user in ("alice", "bob"):
        for agent in (None, "agent0", "agent1", "agent2"):
            flt = MemoryFilter(user_id=user, agent_id=agent)
            got = store.list(flt)
            assert got, (user, agent)
            assert all(m.user_id == user for m in got)
            assert agent is None or all(m.agent_id == agent for m in got)
            assert all(m.user_id == user for m in store.iter(flt, batch_size=4))
            assert store.count(flt) == len(got)
    assert store.stats("alice", None).total == 15
    assert store.stats("bob", "agent0").total == 5


# -- updating ----------------------------------------------------------------------------

#: One new value for every MemoryPatch field; a field added to MemoryPatch must be added here.
PATCH_VALUES: dict[str, tuple[dict[str, Any], Any]] = {
    # field: (how the stored memory starts, the value the patch sets)
    "trigger": ({}, "新しいきっかけ"),
    "content": ({}, "新しい内容"),
    "memory_days": ({}, 3.5),
    "recalled_since_last_batch": ({}, True),
    "recall_count": ({}, 4),
    "emotional_intensity": ({}, 99),
    "emotional_valence": ({}, "negative"),
    "emotional_arousal": ({}, 1),
    "emotional_tags": ({}, ("joy", "relief")),
    "decay_coefficient": ({}, 0.5),
    "category": ({}, "emotional"),
    "keywords": ({}, ("キーワード", "kw")),
    "current_level": ({}, 3),
    "retention_score": ({}, 77.25),
    "archived_at": (
        {"current_level": 4, "archived_at": BASE_TIME + timedelta(days=1)},
        BASE_TIME + timedelta(days=9),
    ),
    "protected": ({}, True),
    "revival_requested": ({}, True),
    "revival_requested_at": ({}, BASE_TIME + timedelta(days=3)),
    "embedding": ({}, Embedding("m", (0.5, 0.25, -1.0))),
    "relations": ({}, "RELATIONS"),  # filled in by the test: needs real targets
    "details": (
        {"kind": Kind.KNOWLEDGE},
        KnowledgeDetails(confidence=0.9, source_episodes=("mem_a",), version=2),
    ),
    "last_access": ({}, BASE_TIME + timedelta(days=2)),
    "low_activity_since": ({}, BASE_TIME + timedelta(days=4)),
}


def test_patch_values_cover_every_patch_field() -> None:
    assert set(PATCH_VALUES) == {f.name for f in fields(MemoryPatch)}


@pytest.mark.parametrize("field", sorted(PATCH_VALUES))
def test_update_each_patchable_field(store: Store, make_memory: MakeMemory, field: str) -> None:
    start, value = PATCH_VALUES[field]
    other = make_memory()
    store.add(other)
    memory = make_memory(**start)
    store.add(memory)
    if field == "relations":
        value = (Relation(other.id, RelationType.SAME_TOPIC),)
    assert store.update(memory.id, MemoryPatch(**{field: value})) is True
    got = store.get(memory.id)
    assert got is not None
    assert getattr(got, field) == value
    assert got == replace(memory, **{field: getattr(got, field)})
    assert got.updated_at is not None
    assert abs(got.updated_at - datetime.now(UTC)) < timedelta(minutes=5)
    assert store.get(other.id) == other


def test_update_to_none_clears(store: Store, make_memory: MakeMemory) -> None:
    memory = archived(make_memory(embedding=Embedding("m", (1.0,))))
    memory = replace(memory, revival_requested_at=BASE_TIME)
    store.add(memory)
    patch = MemoryPatch(
        embedding=None, revival_requested_at=None, archived_at=None, current_level=3
    )
    assert store.update(memory.id, patch)
    got = store.get(memory.id)
    assert got is not None
    assert (got.embedding, got.revival_requested_at, got.archived_at) == (None, None, None)
    assert got.current_level == 3


def test_update_of_a_missing_id_is_false(store: Store) -> None:
    assert store.update("mem_20990101_000000_00000000", MemoryPatch(content="x")) is False
    assert store.update("mem_20990101_000000_00000000", MemoryPatch()) is False


def test_update_relations_replaces_outgoing_only(store: Store, make_memory: MakeMemory) -> None:
    a, b, c = make_memory(), make_memory(), make_memory()
    store.add_many([a, b, c])
    source = make_memory(relations=(Relation(a.id, RelationType.CONTINUES),))
    store.add(source)
    store.update(a.id, MemoryPatch(relations=(Relation(source.id, RelationType.REFERENCES),)))
    new = (Relation(b.id, RelationType.SAME_TOPIC), Relation(c.id, RelationType.REFERENCES))
    assert store.update(source.id, MemoryPatch(relations=new))
    got = store.get(source.id)
    assert got is not None
    assert got.relations == new
    assert store.referencing(a.id) == []
    assert store.referencing(source.id) == [a.id]
    assert store.update(source.id, MemoryPatch(relations=()))
    assert store.referencing(b.id) == []


def test_update_breaking_the_rules_changes_nothing(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory()
    store.add(memory)
    with pytest.raises(StoreError):
        store.update(memory.id, MemoryPatch(current_level=4, content="half"))
    with pytest.raises(StoreError):
        store.update(memory.id, MemoryPatch(emotional_intensity=101))
    with pytest.raises(StoreError):
        store.update(memory.id, MemoryPatch(emotional_valence="ecstatic"))
    missing = Relation("mem_20990101_000000_00000000", RelationType.CONTINUES)
    with pytest.raises(StoreError):
        store.update(memory.id, MemoryPatch(content="half", relations=(missing,)))
    assert store.get(memory.id) == memory


def test_archiving_needs_level_and_time_together(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory()
    store.add(memory)
    when = BASE_TIME + timedelta(days=30)
    assert store.update(memory.id, MemoryPatch(current_level=4, archived_at=when))
    assert store.list(MemoryFilter(archived=True))[0].archived_at == when


# -- deleting and relations ---------------------------------------------------------------


def test_delete_removes_relations_both_ways(store: Store, make_memory: MakeMemory) -> None:
    low = make_memory()
    middle = make_memory(relations=(Relation(low.id, RelationType.CONTINUES),))
    high = make_memory(relations=(Relation(middle.id, RelationType.DERIVED_FROM),))
    store.add_many([low, middle, high])
    assert store.referencing(middle.id) == [high.id]
    assert store.delete(middle.id) is True
    assert store.get(middle.id) is None
    assert store.referencing(low.id) == []
    got = store.get(high.id)
    assert got is not None
    assert got.relations == ()
    assert store.delete(middle.id) is False
    assert store.check_integrity().ok


def test_referencing_lists_sources(store: Store, make_memory: MakeMemory) -> None:
    target = make_memory()
    store.add(target)
    sources = [
        make_memory(relations=(Relation(target.id, RelationType.SAME_TOPIC),)) for _ in range(3)
    ]
    store.add_many(sources)
    store.add(make_memory())
    assert store.referencing(target.id) == sorted(m.id for m in sources)
    assert store.referencing(sources[0].id) == []


# -- recall flags and state ---------------------------------------------------------------


def test_mark_recalled_skips_archived(store: Store, make_memory: MakeMemory) -> None:
    active, old = make_memory(), archived(make_memory())
    store.add_many([active, old])
    assert store.mark_recalled([active.id, old.id, "mem_20990101_000000_00000000"]) == 1
    got_active, got_old = store.get(active.id), store.get(old.id)
    assert got_active is not None
    assert got_active.recalled_since_last_batch is True
    assert got_old is not None
    assert got_old.recalled_since_last_batch is False
    assert store.mark_recalled([]) == 0


def test_state_upsert(store: Store) -> None:
    assert store.get_state("last_compression_run") is None
    store.set_state("last_compression_run", "2026-01-20T03:00:00+09:00")
    store.set_state("last_compression_run", "2026-01-21T03:00:00+09:00")
    assert store.get_state("last_compression_run") == "2026-01-21T03:00:00+09:00"
    store.set_state("空", "")
    assert store.get_state("空") == ""


# -- stats and health ----------------------------------------------------------------------


def test_stats(store: Store, population: dict[int, Memory]) -> None:
    everything = store.stats(None, None)
    # Levels, categories and protection count episodes (the spec 000 lifecycle); every kind
    # is counted in by_kind (memory 3 is knowledge, 5 a procedure).
    assert everything.total == 5
    assert everything.by_kind == {"episode": 5, "knowledge": 1, "procedure": 1}
    assert everything.by_level == {1: 3, 2: 1, 3: 0, 4: 1}
    assert everything.by_category == {"casual": 2, "emotional": 1, "work": 2}
    assert (everything.protected, everything.archived, everything.revival_requested) == (1, 1, 1)
    assert everything.size_bytes > 0
    alice_a1 = store.stats("alice", "a1")
    assert alice_a1.total == 5
    assert alice_a1.by_level == {1: 3, 2: 1, 3: 0, 4: 1}
    empty = store.stats("nobody", None)
    assert (empty.total, empty.by_level, empty.by_category) == (0, {1: 0, 2: 0, 3: 0, 4: 0}, {})


def test_check_integrity_of_a_healthy_store(store: Store, population: dict[int, Memory]) -> None:
    report = store.check_integrity()
    assert report.ok, report.problems
    assert report.schema_version == report.expected_schema_version


# -- transactions ------------------------------------------------------------------------


class BoomError(Exception):
    pass


def _fail_after(store: Store, *writes: Callable[[], object]) -> None:
    """Run ``writes`` in one ``atomic()`` block, then raise BoomError inside it."""
    with store.atomic():
        for write in writes:
            write()
        raise BoomError


def test_atomic_rolls_back_everything(store: Store, make_memory: MakeMemory) -> None:
    kept = make_memory()
    store.add(kept)
    fresh = make_memory()
    seen: list[Memory | None] = []
    with pytest.raises(BoomError):
        _fail_after(
            store,
            lambda: store.add(fresh),
            lambda: store.update(kept.id, MemoryPatch(content="changed")),
            lambda: store.mark_recalled([kept.id]),
            lambda: store.set_state("k", "v"),
            lambda: store.delete(kept.id),
            lambda: seen.append(store.get(kept.id)),
        )
    assert seen == [None]  # reads inside saw the transaction
    assert store.get(fresh.id) is None
    assert store.get(kept.id) == kept
    assert store.get_state("k") is None


def test_atomic_nests_and_commits_at_the_end(store: Store, make_memory: MakeMemory) -> None:
    a, b = make_memory(), make_memory()
    with store.atomic():
        store.add(a)
        with store.atomic():
            store.add(b)
        assert store.count(MemoryFilter()) == 2
    assert {m.id for m in store.list(MemoryFilter())} == {a.id, b.id}


def test_inner_failure_undoes_only_the_inner_block(store: Store, make_memory: MakeMemory) -> None:
    a, b, c = make_memory(), make_memory(), make_memory()
    with store.atomic():
        store.add(a)
        with pytest.raises(BoomError):
            _fail_after(store, lambda: store.add(b))
        missing = Relation("mem_20990101_000000_00000000", RelationType.CONTINUES)
        with pytest.raises(StoreError):
            store.add(replace(c, relations=(missing,)))  # a failed call leaves nothing
        store.add(c)
    assert {m.id for m in store.list(MemoryFilter())} == {a.id, c.id}


def test_outer_failure_undoes_committed_inner_blocks(store: Store, make_memory: MakeMemory) -> None:
    a = make_memory()

    def nested_add() -> None:
        with store.atomic():
            store.add(a)

    with pytest.raises(BoomError):
        _fail_after(store, nested_add)
    assert store.get(a.id) is None
    store.add(a)  # the store is usable afterwards
    assert store.get(a.id) == a


def test_a_memory_breaking_the_rules_is_refused_by_name(
    store: Store, make_memory: MakeMemory
) -> None:
    good = make_memory()
    bad = make_memory(current_level=4)  # level 4 without archived_at
    with pytest.raises(StoreError) as raised:
        store.add_many([good, bad])
    assert bad.id in str(raised.value)
    assert store.count(MemoryFilter()) == 0
