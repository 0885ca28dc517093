"""The Store contract for search: lexical (BM25) and vector (cosine) search, on real stores.

Only the port is used here, so every adapter must pass the same tests. Lexical terms come
from :func:`kioku.adapters.text.lexical.index_terms`, as in the service.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms
from kioku.core.model import Embedding, Memory
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryFilter, MemoryPatch, Store
from tests.contract.conftest import MakeMemory, archived, build_memory, open_store

MODEL = "test:model-a"
OTHER_MODEL = "test:model-b"
VERSION_KEY = "vectors_version"
_FIXTURES = [HealthCheck.function_scoped_fixture]
#: Ids for memories made inside hypothesis examples, which share one store per test.
_ids = itertools.count(10_000)


class AbandonError(Exception):
    """Raised inside atomic() to roll it back."""


def lexical(
    store: Store, query: str, flt: MemoryFilter | None = None, limit: int = 10
) -> list[str]:
    terms = index_terms(query)
    assert terms, query
    return [memory_id for memory_id, _ in store.search_lexical(terms, flt or MemoryFilter(), limit)]


def nearest(
    store: Store,
    query: Sequence[float],
    flt: MemoryFilter | None = None,
    model: str = MODEL,
    limit: int = 10,
) -> list[str]:
    return [i for i, _ in store.vector_search(model, query, flt or MemoryFilter(), limit)]


def with_vector(make_memory: MakeMemory, vector: Sequence[float], **fields: object) -> Memory:
    model = str(fields.pop("model", MODEL))
    return make_memory(embedding=Embedding(model, tuple(float(v) for v in vector)), **fields)


def archive_patch(memory: Memory) -> MemoryPatch:
    return MemoryPatch(current_level=4, archived_at=memory.created + timedelta(days=1))


@pytest.fixture
def second_store(request: pytest.FixtureRequest, store: Store, tmp_path: Path) -> Iterator[Store]:
    """Another store on the same database, as another process would open it."""
    other = open_store(str(request.node.callspec.params["store"]), tmp_path)
    try:
        yield other
    finally:
        other.close()


# -- lexical search ----------------------------------------------------------------------


def test_a_japanese_two_character_word_is_found(store: Store, make_memory: MakeMemory) -> None:
    sushi = make_memory(trigger="夕食の話", content="昨日お寿司を食べた")
    store.add_many([sushi, make_memory(trigger="仕事", content="会議の資料を作った")])
    assert lexical(store, "寿司") == [sushi.id]
    assert lexical(store, "お寿司が好き") == [sushi.id]


def test_english_words_match_across_inflections(store: Store, make_memory: MakeMemory) -> None:
    painting = make_memory(trigger="weekend", content="I was painting the fence all day")
    paint = make_memory(trigger="shopping", content="bought blue paint")
    other = make_memory(trigger="work", content="reviewed the quarterly budget")
    store.add_many([painting, paint, other])
    assert set(lexical(store, "paint")) == {painting.id, paint.id}
    assert set(lexical(store, "painting")) == {painting.id, paint.id}


def test_keywords_are_searchable(store: Store, make_memory: MakeMemory) -> None:
    tagged = make_memory(trigger="t", content="c", keywords=("kubernetes", "移行"))
    store.add(tagged)
    assert lexical(store, "kubernetes") == [tagged.id]
    assert lexical(store, "移行") == [tagged.id]


def test_lexical_search_stays_in_its_scope(store: Store, make_memory: MakeMemory) -> None:
    mine = make_memory(content="espresso machine", user_id="alice", agent_id="a1")
    other_agent = make_memory(content="espresso beans", user_id="alice", agent_id="a2")
    other_user = make_memory(content="espresso cup", user_id="bob", agent_id="a1")
    store.add_many([mine, other_agent, other_user])
    assert lexical(store, "espresso", MemoryFilter(user_id="alice", agent_id="a1")) == [mine.id]
    assert set(lexical(store, "espresso", MemoryFilter(user_id="alice"))) == {
        mine.id,
        other_agent.id,
    }
    assert set(lexical(store, "espresso", MemoryFilter(agent_id="a1"))) == {mine.id, other_user.id}
    assert lexical(store, "espresso", MemoryFilter(user_id="carol")) == []


def test_lexical_search_honours_the_archived_filter(store: Store, make_memory: MakeMemory) -> None:
    active = make_memory(content="marathon training")
    old = archived(make_memory(content="marathon results"))
    store.add_many([active, old])
    assert set(lexical(store, "marathon")) == {active.id, old.id}
    assert lexical(store, "marathon", MemoryFilter(archived=False)) == [active.id]
    assert lexical(store, "marathon", MemoryFilter(archived=True)) == [old.id]


def test_japanese_proper_nouns_are_searchable(store: Store, make_memory: MakeMemory) -> None:
    trip = make_memory(trigger="旅行の話", content="田中さんと東京へ行った")
    cat = make_memory(trigger="猫", content="猫のタマが家出した")
    store.add_many([trip, cat])
    assert lexical(store, "東京") == [trip.id]
    assert lexical(store, "田中さんは元気？") == [trip.id]
    assert lexical(store, "タマ") == [cat.id]


def test_known_terms_are_those_of_the_scope(store: Store, make_memory: MakeMemory) -> None:
    store.add_many(
        [
            make_memory(content="Caroline painted a sunset", user_id="alice", agent_id="a1"),
            make_memory(content="Jon opened a dance studio", user_id="bob", agent_id="a1"),
            archived(make_memory(content="a trip to Kyoto", user_id="alice", agent_id="a1")),
            make_memory(content="東京で田中さんに会った", user_id="alice", agent_id="a2"),
        ]
    )
    alice = MemoryFilter(user_id="alice")
    asked = ["caroline", "jon", "kyoto", "東京", "nobody", "it's", '"quoted"', ""]
    assert store.known_terms(asked, alice) == {"caroline", "kyoto", "東京"}
    assert store.known_terms(asked, MemoryFilter(user_id="alice", archived=False)) == {
        "caroline",
        "東京",
    }
    assert store.known_terms(asked, MemoryFilter(user_id="alice", agent_id="a1")) == {
        "caroline",
        "kyoto",
    }
    assert store.known_terms(asked, MemoryFilter(user_id="bob")) == {"jon"}
    assert store.known_terms(asked, MemoryFilter(user_id="carol")) == frozenset()
    assert store.known_terms([], alice) == frozenset()
    # A limit stops the search once that many are found: any of them, never another's.
    for flt in (alice, MemoryFilter(user_id="alice", archived=False), MemoryFilter(user_id="bob")):
        whole = store.known_terms(asked, flt)
        for limit in (1, 2, 5):
            some = store.known_terms(asked, flt, limit=limit)
            assert some <= whole
            assert len(some) == min(limit, len(whole))
        assert store.known_terms(asked, flt, limit=0) == frozenset()
    assert store.known_terms(asked, MemoryFilter(user_id="carol"), limit=1) == frozenset()
    with pytest.raises(ValidationError, match="limit"):
        store.known_terms(asked, alice, limit=-1)


def test_document_counts_follow_every_write(
    store: Store, second_store: Store, make_memory: MakeMemory
) -> None:
    store.add(make_memory(content="kiwi smoothie"))
    assert store.term_documents(["kiwi"])[1] == {"kiwi": 1}
    store.search_lexical(["kiwi"], MemoryFilter(), 5)  # counts the terms for the search
    store.add(make_memory(content="kiwi tart"))  # a write through this store
    assert store.term_documents(["kiwi"])[1] == {"kiwi": 2}
    store.search_lexical(["kiwi"], MemoryFilter(), 5)
    second_store.add(make_memory(content="kiwi jam"))  # a write through another connection
    assert store.term_documents(["kiwi"])[1] == {"kiwi": 3}
    assert len(store.search_lexical(["kiwi"], MemoryFilter(), 5)) == 3


def test_more_mentions_rank_higher(store: Store, make_memory: MakeMemory) -> None:
    once = make_memory(content="guitar lesson with a new teacher today")
    thrice = make_memory(content="guitar guitar guitar practice all evening")
    store.add_many([once, thrice])
    results = store.search_lexical(index_terms("guitar"), MemoryFilter(), 10)
    assert [i for i, _ in results] == [thrice.id, once.id]
    assert results[0][1] > results[1][1] > 0


def test_a_rarer_term_ranks_higher(store: Store, make_memory: MakeMemory) -> None:
    common = [make_memory(content=f"coffee with colleague {n}") for n in range(8)]
    rare = make_memory(content="harpsichord with colleague")
    store.add_many([*common, rare])
    ranked = lexical(store, "coffee harpsichord", limit=20)
    assert ranked[0] == rare.id
    assert set(ranked) == {rare.id, *(m.id for m in common)}
    assert len(lexical(store, "coffee harpsichord", limit=3)) == 3
    assert store.search_lexical(index_terms("coffee"), MemoryFilter(), 0) == []


def test_a_small_scope_finds_its_matches_among_many_better_ones(
    store: Store, make_memory: MakeMemory
) -> None:
    crowd = [make_memory(content="lantern lantern lantern", user_id="crowd") for _ in range(3300)]
    mine = [
        make_memory(content=f"one lantern among many other words {n}", user_id="alice")
        for n in range(3)
    ]
    store.add_many([*crowd, *mine])
    found = lexical(store, "lantern", MemoryFilter(user_id="alice"), limit=2)
    assert len(found) == 2
    assert set(found) <= {m.id for m in mine}
    assert len(lexical(store, "lantern", MemoryFilter(user_id="alice"), limit=5)) == 3
    assert len(lexical(store, "lantern", MemoryFilter(user_id="crowd"), limit=50)) == 50


@pytest.mark.parametrize("field", ["trigger", "content", "keywords"])
def test_changing_the_text_reindexes_it(store: Store, make_memory: MakeMemory, field: str) -> None:
    before = {"trigger": "t", "content": "c", "keywords": ()}
    after = dict(before)
    if field == "keywords":
        before["keywords"], after["keywords"] = ("volcano",), ("glacier",)
    else:
        before[field], after[field] = "volcano hike", "glacier hike"
    memory = make_memory(**before)
    store.add(memory)
    assert lexical(store, "volcano") == [memory.id]
    assert store.update(memory.id, MemoryPatch(**after))  # type: ignore[arg-type]
    assert lexical(store, "volcano") == []
    assert lexical(store, "glacier") == [memory.id]


def test_other_updates_keep_the_index(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(content="sailing trip")
    store.add(memory)
    assert store.update(memory.id, MemoryPatch(retention_score=3.5, protected=True))
    assert store.mark_recalled([memory.id]) == 1
    assert lexical(store, "sailing") == [memory.id]


def test_deleting_removes_it_from_the_index(store: Store, make_memory: MakeMemory) -> None:
    gone, kept = make_memory(content="origami crane"), make_memory(content="origami frog")
    store.add_many([gone, kept])
    assert store.delete(gone.id)
    assert lexical(store, "origami") == [kept.id]
    assert lexical(store, "crane") == []


def test_a_rollback_leaves_the_index_unchanged(store: Store, make_memory: MakeMemory) -> None:
    edited, deleted = make_memory(content="tulip garden"), make_memory(content="tulip bulbs")
    store.add_many([edited, deleted])
    festival = make_memory(content="tulip festival")

    def abandoned_edits() -> None:
        with store.atomic():
            store.add(festival)
            store.update(edited.id, MemoryPatch(content="rose garden"))
            store.delete(deleted.id)
            assert lexical(store, "tulip") == [festival.id]
            raise AbandonError

    with pytest.raises(AbandonError):
        abandoned_edits()
    assert set(lexical(store, "tulip")) == {edited.id, deleted.id}
    assert lexical(store, "rose") == []
    assert lexical(store, "festival") == []


_NASTY = st.text(
    alphabet=st.sampled_from(list("\"'*:^()-+{}[]?!.,;NEARANDORNOT寿司 abcxyz\\%_\n\t")),
    max_size=40,
)


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURES)
@given(text=_NASTY)
def test_syntax_characters_in_user_text_never_raise(store: Store, text: str) -> None:
    store.add(build_memory(next(_ids), content=text or "empty"))
    store.search_lexical(index_terms(text), MemoryFilter(), 5)
    store.search_lexical([text], MemoryFilter(), 5)  # even raw text finds, at worst, nothing


@pytest.mark.parametrize("raw", ['"unterminated', "AND", "x:foo", "*", "NEAR(", "", "   ", "^"])
def test_syntax_as_a_term_is_just_a_term(store: Store, make_memory: MakeMemory, raw: str) -> None:
    store.add(make_memory(content='she said "AND" x:foo * NEAR( ^'))
    assert store.search_lexical([raw], MemoryFilter(), 5) == []


def test_very_common_terms_are_left_out_when_a_rare_one_is_asked_too(
    store: Store, make_memory: MakeMemory
) -> None:
    from kioku.adapters.store.sqlite import search

    common = [make_memory(content=f"coffee morning number {n}") for n in range(40)]
    rare = make_memory(content="harpsichord recital")
    store.add_many([*common, rare])
    if hasattr(store, "_connection"):  # the SQLite adapter's budget, made small
        with store._reading() as conn:  # type: ignore[attr-defined]
            assert search.match_for(conn, ["coffee", "harpsichord"], budget=10) == '"harpsichord"'
            assert search.match_for(conn, ["coffee"], budget=10) == '"coffee"'
            assert search.match_for(conn, ["unknown"], budget=10) is None


# -- vector search -----------------------------------------------------------------------

_VALUES = st.integers(min_value=-4, max_value=4).map(float)


@st.composite
def _matrices(draw: st.DrawFn) -> tuple[list[list[float]], list[float], int]:
    dim = draw(st.integers(min_value=1, max_value=6))
    rows = draw(st.lists(st.lists(_VALUES, min_size=dim, max_size=dim), min_size=1, max_size=25))
    query = draw(st.lists(_VALUES, min_size=dim, max_size=dim).filter(any))
    return rows, query, draw(st.integers(min_value=1, max_value=30))


def _cosine(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(query)
    safe = np.where(norms > 0, norms, 1.0)
    return np.where(norms > 0, rows @ query / safe, 0.0)


@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURES)
@given(case=_matrices())
def test_nearest_neighbours_match_brute_force(
    store: Store, case: tuple[list[list[float]], list[float], int]
) -> None:
    rows, query, limit = case
    scope = f"user-{next(_ids)}"  # each example in its own scope of the shared store
    model = f"{MODEL}-{len(query)}"  # one dimension per model
    memories = [
        build_memory(next(_ids), user_id=scope, embedding=Embedding(model, tuple(row)))
        for row in rows
    ]
    store.add_many(memories)
    found = store.vector_search(model, query, MemoryFilter(user_id=scope), limit)

    reference = _cosine(np.array(rows), np.array(query))
    by_id = {m.id: float(s) for m, s in zip(memories, reference, strict=True)}
    expected = sorted(reference, reverse=True)[:limit]
    assert len(found) == min(limit, len(rows))
    assert [s for _, s in found] == pytest.approx(expected, abs=1e-5)
    assert all(by_id[i] == pytest.approx(s, abs=1e-5) for i, s in found)
    assert len({i for i, _ in found}) == len(found)


def test_vectors_of_another_model_are_never_returned(store: Store, make_memory: MakeMemory) -> None:
    a = with_vector(make_memory, (1, 0, 0))
    b = with_vector(make_memory, (1, 0, 0), model=OTHER_MODEL)
    wide = with_vector(make_memory, (1, 0, 0, 0, 0), model="test:wide")
    plain = make_memory()
    store.add_many([a, b, wide, plain])
    assert nearest(store, (1, 0, 0)) == [a.id]
    assert nearest(store, (1, 0, 0), model=OTHER_MODEL) == [b.id]
    assert nearest(store, (0, 1, 0), model="test:unknown") == []


def test_a_query_of_the_wrong_dimension_says_to_reembed(
    store: Store, make_memory: MakeMemory
) -> None:
    store.add(with_vector(make_memory, (0.1, 0.2, 0.3)))
    with pytest.raises(StoreError) as raised:
        store.vector_search(MODEL, (0.1, 0.2), MemoryFilter(), 5)
    text = f"{raised.value.message} {raised.value.hint}"
    assert "2" in raised.value.message
    assert "3" in raised.value.message
    assert "kioku reembed" in text


@pytest.mark.parametrize("scale", [5.0e18, 1e-16])
def test_a_vector_too_long_or_too_short_for_single_precision_is_refused(
    store: Store, make_memory: MakeMemory, scale: float
) -> None:
    kept = with_vector(make_memory, (0.6, 0.8, 0.0))
    store.add(kept)
    bad = (0.6 * scale, 0.8 * scale, 0.0)
    refused_memory = with_vector(make_memory, bad)
    with pytest.raises(ValidationError) as refused:
        store.add_many([refused_memory])
    assert refused.value.field == "embedding"
    assert "unit length" in str(refused.value)
    with pytest.raises(ValidationError):
        store.update(kept.id, MemoryPatch(embedding=Embedding(MODEL, bad)))
    assert store.get(refused_memory.id) is None
    assert nearest(store, (0.0, 1.0, 0.0)) == [kept.id]
    assert nearest(store, (0.0, 0.0, 1.0)) == [kept.id]


@pytest.mark.parametrize("query_scale", [1e-200, 1e-30, 1.0, 1e30, 1e200])
def test_vectors_and_queries_of_any_storable_length_are_found(
    store: Store, make_memory: MakeMemory, query_scale: float
) -> None:
    """Cosine ignores length: a stored vector from 1e-14 to 1e17 times a unit vector, and a
    query of any finite length, rank as the unit vectors do on every store."""
    directions = {"a": (1.0, 2.0, 2.0), "b": (2.0, -1.0, 0.5), "c": (-1.0, 0.0, 3.0)}
    scales = (1e-14, 1e-5, 1.0, 1e10, 1e17)
    ids: dict[str, set[str]] = {name: set() for name in directions}
    memories = []
    for name, direction in directions.items():
        for scale in scales:
            memory = with_vector(make_memory, tuple(scale * v for v in direction))
            ids[name].add(memory.id)
            memories.append(memory)
    store.add_many(memories)
    for name, direction in directions.items():
        query = tuple(query_scale * v for v in direction)
        found = store.vector_search(MODEL, query, MemoryFilter(), len(scales))
        assert {i for i, _ in found} == ids[name]
        assert all(score == pytest.approx(1.0, abs=1e-5) for _, score in found)


def test_a_zero_query_finds_nothing(store: Store, make_memory: MakeMemory) -> None:
    store.add(with_vector(make_memory, (1, 2, 3)))
    assert store.vector_search(MODEL, (0.0, 0.0, 0.0), MemoryFilter(), 5) == []
    assert store.vector_search(MODEL, (1.0, 0.0, 0.0), MemoryFilter(), 0) == []


def test_vector_search_honours_scope_and_archived(store: Store, make_memory: MakeMemory) -> None:
    mine = with_vector(make_memory, (1, 0), user_id="alice", agent_id="a1")
    mine_old = archived(with_vector(make_memory, (1, 0.1), user_id="alice", agent_id="a1"))
    other_agent = with_vector(make_memory, (1, 0.2), user_id="alice", agent_id="a2")
    other_user = with_vector(make_memory, (1, 0.3), user_id="bob", agent_id="a1")
    store.add_many([mine, mine_old, other_agent, other_user])
    alice_a1 = MemoryFilter(user_id="alice", agent_id="a1")
    assert nearest(store, (1, 0), alice_a1) == [mine.id, mine_old.id]
    assert nearest(store, (1, 0), MemoryFilter(user_id="alice", archived=False)) == [
        mine.id,
        other_agent.id,
    ]
    assert nearest(store, (1, 0), MemoryFilter(archived=True)) == [mine_old.id]
    assert nearest(store, (1, 0), MemoryFilter(agent_id="a1", archived=False)) == [
        mine.id,
        other_user.id,
    ]
    assert nearest(store, (1, 0), MemoryFilter(user_id="carol")) == []
    scores = [s for _, s in store.vector_search(MODEL, (1, 0), MemoryFilter(), 10)]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(1.0)


def test_the_cache_follows_writes(store: Store, make_memory: MakeMemory) -> None:
    first = with_vector(make_memory, (1, 0, 0))
    store.add(first)
    active = MemoryFilter(archived=False)
    assert nearest(store, (0, 1, 0), active) == [first.id]

    added = with_vector(make_memory, (0, 1, 0))
    store.add(added)
    assert nearest(store, (0, 1, 0), active, limit=1) == [added.id]

    assert store.update(added.id, archive_patch(added))
    assert nearest(store, (0, 1, 0), active) == [first.id]
    assert nearest(store, (0, 1, 0), MemoryFilter(archived=True)) == [added.id]

    assert store.update(first.id, MemoryPatch(embedding=Embedding(MODEL, (0.0, 0.0, 1.0))))
    assert store.vector_search(MODEL, (0, 0, 1), active, 1)[0][1] == pytest.approx(1.0)
    assert store.update(first.id, MemoryPatch(embedding=None))
    assert nearest(store, (0, 0, 1), active) == []

    assert store.delete(added.id)
    assert nearest(store, (0, 1, 0)) == []


def test_recall_marks_and_score_updates_leave_the_vectors_version(
    store: Store, make_memory: MakeMemory
) -> None:
    memory = with_vector(make_memory, (1, 1))
    store.add(memory)
    version = store.get_state(VERSION_KEY)  # None for adapters that keep no such counter
    assert store.mark_recalled([memory.id]) == 1
    assert store.update(memory.id, MemoryPatch(retention_score=9.0, protected=True))
    store.add(make_memory(content="no vector at all"))
    assert store.get_state(VERSION_KEY) == version
    store.update(memory.id, archive_patch(memory))
    assert version is None or store.get_state(VERSION_KEY) != version


def test_a_rolled_back_write_leaves_no_trace_in_the_cache(
    store: Store, make_memory: MakeMemory
) -> None:
    kept = with_vector(make_memory, (1, 0))
    store.add(kept)
    assert nearest(store, (0, 1)) == [kept.id]
    ghost = with_vector(make_memory, (0, 1))

    def abandoned_add() -> None:
        with store.atomic():
            store.add(ghost)
            assert nearest(store, (0, 1)) == [ghost.id, kept.id]
            raise AbandonError

    with pytest.raises(AbandonError):
        abandoned_add()
    assert nearest(store, (0, 1)) == [kept.id]
    later = with_vector(make_memory, (0.5, 1))
    store.add(later)  # moves the version on again: the cache must not hold the ghost
    assert nearest(store, (0, 1)) == [later.id, kept.id]


def test_two_stores_on_one_database_see_each_others_vectors(
    store: Store, second_store: Store, make_memory: MakeMemory
) -> None:
    first = with_vector(make_memory, (1, 0))
    store.add(first)
    assert nearest(second_store, (0, 1)) == [first.id]
    added = with_vector(make_memory, (0, 1))
    second_store.add(added)
    assert nearest(store, (0, 1)) == [added.id, first.id]
    assert second_store.update(added.id, archive_patch(added))
    assert nearest(store, (0, 1), MemoryFilter(archived=False)) == [first.id]
    assert second_store.delete(first.id)
    assert nearest(store, (0, 1)) == [added.id]


def test_embedding_models_counts_vectors_per_model(store: Store, make_memory: MakeMemory) -> None:
    store.add_many(
        [
            with_vector(make_memory, (1, 0)),
            with_vector(make_memory, (0, 1)),
            archived(with_vector(make_memory, (1, 1))),
            with_vector(make_memory, (1, 0, 0), model=OTHER_MODEL),
            with_vector(make_memory, (1, 0), user_id="bob"),
            make_memory(),
            archived(make_memory()),
        ]
    )
    assert store.embedding_models(MemoryFilter()) == {MODEL: 4, OTHER_MODEL: 1, None: 2}
    assert store.embedding_models(MemoryFilter(user_id="default", archived=False)) == {
        MODEL: 2,
        OTHER_MODEL: 1,
        None: 1,
    }
    assert store.embedding_models(MemoryFilter(archived=True)) == {MODEL: 1, None: 1}
    assert store.embedding_models(MemoryFilter(user_id="nobody")) == {}


def test_scoring_fields_are_those_of_the_memories(store: Store, make_memory: MakeMemory) -> None:
    """What recall ranks by (and the mood limiter judges by), read without the whole memory."""
    from kioku.core.model import Valence

    sad = make_memory(
        emotional_valence=Valence.NEGATIVE,
        emotional_intensity=83,
        emotional_arousal=25,
        emotional_tags=("sadness",),
        category="emotional",
        recall_count=2,
        retention_score=61.5,
    )
    plain = archived(make_memory())
    store.add_many([sad, plain])
    found = {f.id: f for f in store.scoring_fields([plain.id, sad.id, sad.id, "mem_missing"])}
    assert set(found) == {sad.id, plain.id}
    got = found[sad.id]
    assert (got.valence, got.intensity, got.arousal, got.tags) == (
        Valence.NEGATIVE,
        83,
        25,
        ("sadness",),
    )
    assert (got.category, got.recall_count, got.retention_score, got.kind) == (
        "emotional",
        2,
        61.5,
        "episode",
    )
    assert got.created == sad.created
    assert not got.archived
    assert (found[plain.id].intensity, found[plain.id].archived) == (40, True)
