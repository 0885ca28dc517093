"""KiokuStore, LangGraph's BaseStore kept in kioku, on a real SQLite home.

The store is exercised the way LangGraph's own stores are: single operations and their
async twins, batches of mixed operations, namespace listing with prefixes, suffixes,
wildcards, depth and pages, filtered and paged search, and natural-language search. A
differential test runs one sequence of writes on LangGraph's InMemoryStore and on KiokuStore
and compares what every read returns.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed")

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from kioku import Kioku, KiokuError, ValidationError
from kioku.adapters.clock import FixedClock
from kioku.integrations.langgraph_store import KiokuStore
from kioku.ports.store import MemoryPatch
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock) -> Any:
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as opened:
        yield opened


@pytest.fixture
def store(memory: Kioku) -> KiokuStore:
    return KiokuStore(memory)


VALUE: dict[str, Any] = {
    "text": "The user drinks green tea every morning",
    "tags": ["tea", "morning", 3, 2.5, True, None],
    "nested": {"empty": {}, "list": [], "日本語": "緑茶が好き", "deep": {"n": -7}},
    "flag": False,
    "big": 12345678901234567890,
}


# -- put, get, update, delete ---------------------------------------------------------------


def test_a_value_reads_back_exactly_also_after_reopening(
    tmp_path: Path, memory: Kioku, store: KiokuStore, clock: FixedClock
) -> None:
    namespace = ("users", "u-1", "memories")
    store.put(namespace, "pref/tea", VALUE)
    item = store.get(namespace, "pref/tea")
    assert item is not None
    assert item.value == VALUE
    assert list(item.value) == list(VALUE)  # key order kept too
    assert (item.namespace, item.key) == (namespace, "pref/tea")
    assert item.created_at == item.updated_at == START
    memory.close()
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as again:
        reread = KiokuStore(again).get(namespace, "pref/tea")
    assert reread == item


def test_get_is_none_for_another_key_or_namespace(store: KiokuStore) -> None:
    store.put(("a", "b"), "k", {"x": 1})
    assert store.get(("a", "b"), "other") is None
    assert store.get(("a",), "k") is None
    assert store.get(("a", "b", "c"), "k") is None
    assert store.get(("a", "b"), "k") is not None


def test_a_put_to_an_existing_key_edits_the_memory_in_place(
    memory: Kioku, store: KiokuStore, clock: FixedClock
) -> None:
    store.put(("notes",), "k", {"text": "first words"})
    before = store.get(("notes",), "k")
    [stored] = memory.list(kind="knowledge")
    clock.advance(timedelta(hours=1))
    store.put(("notes",), "k", {"text": "second words", "n": 2})
    after = store.get(("notes",), "k")
    assert before is not None
    assert after is not None
    assert after.value == {"text": "second words", "n": 2}
    assert after.created_at == before.created_at
    assert after.updated_at > before.updated_at
    [edited] = memory.list(kind="knowledge")
    assert edited.id == stored.id
    assert edited.content == "second words"
    assert [v.content for v in memory.store.versions(stored.id)] == ["first words"]


def test_putting_the_same_value_again_writes_nothing(memory: Kioku, store: KiokuStore) -> None:
    store.put(("notes",), "k", {"text": "same"})
    before = store.get(("notes",), "k")
    store.put(("notes",), "k", {"text": "same"})
    assert store.get(("notes",), "k") == before
    [stored] = memory.list(kind="knowledge")
    assert memory.store.versions(stored.id) == []


def test_delete_and_put_none_erase_and_the_key_can_be_put_again(
    memory: Kioku, store: KiokuStore
) -> None:
    store.put(("n",), "a", {"text": "alpha"})
    store.put(("n",), "b", {"text": "beta"})
    store.delete(("n",), "a")
    store.put(("n",), "b", None)  # type: ignore[arg-type]  # LangGraph's delete-by-put
    assert store.get(("n",), "a") is None
    assert store.get(("n",), "b") is None
    assert memory.count(kind="knowledge") == 0
    store.delete(("n",), "never-there")  # deleting what is not there is no error
    store.put(("n",), "a", {"text": "alpha again"})
    again = store.get(("n",), "a")
    assert again is not None
    assert again.value == {"text": "alpha again"}


# -- batches -----------------------------------------------------------------------------------


def test_a_batch_answers_in_order_and_reads_before_it_writes(store: KiokuStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "first"}),
            PutOp(("test", "bar"), "key2", {"data": "last"}),
            GetOp(("test", "bar"), "key2"),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(),
            GetOp(("test",), "missing"),
        ]
    )
    assert len(results) == 7
    first = results[0]
    assert isinstance(first, Item)
    assert first.value == {"data": "value1"}
    assert results[1] is None
    assert results[2] is None
    assert results[3] is None  # the batch's puts come after its reads
    assert [i.key for i in results[4]] == ["key1"]  # type: ignore[union-attr]
    assert results[5] == [("test", "foo")]
    assert results[6] is None
    item = store.get(("test", "bar"), "key2")
    assert item is not None
    assert item.value == {"data": "last"}  # the last put of a key wins


def test_a_batch_with_a_bad_value_writes_nothing(memory: Kioku, store: KiokuStore) -> None:
    with pytest.raises(ValidationError, match="JSON values"):
        store.batch(
            [
                PutOp(("n",), "good", {"text": "fine"}),
                PutOp(("n",), "bad", {"when": datetime(2025, 1, 1, tzinfo=UTC)}),
            ]
        )
    assert store.get(("n",), "good") is None
    assert memory.count(kind="knowledge") == 0
    # a write refused inside the transaction takes the batch's earlier writes back with it
    with pytest.raises(ValidationError, match="shorter key"):
        store.batch([PutOp(("n",), "good", {"text": "fine"}), PutOp(("n",), "k" * 2000, {"x": 1})])
    assert store.get(("n",), "good") is None
    assert memory.count(kind="knowledge") == 0


# -- search ------------------------------------------------------------------------------------


def _three_docs(store: KiokuStore, clock: FixedClock) -> None:
    docs = [
        (("test", "docs"), "doc1", {"title": "First", "author": "Alice", "score": 2}),
        (("test", "docs"), "doc2", {"title": "Second", "author": "Bob", "score": 10}),
        (("test", "images"), "img1", {"title": "Image", "author": "Alice", "score": 9.5}),
    ]
    for namespace, key, value in docs:
        clock.advance(timedelta(minutes=1))
        store.put(namespace, key, value)


def test_search_without_query_filters_pages_and_puts_the_newest_first(
    store: KiokuStore, clock: FixedClock
) -> None:
    _three_docs(store, clock)

    def keys(**kwargs: Any) -> list[str]:
        return [i.key for i in store.search(("test",), **kwargs)]

    assert keys() == ["img1", "doc2", "doc1"]
    assert [i.key for i in store.search(("test", "docs"))] == ["doc2", "doc1"]
    assert store.search(("other",)) == []
    assert keys(filter={"author": "Alice"}) == ["img1", "doc1"]
    assert keys(filter={"score": {"$gt": 9}}) == ["img1", "doc2"]  # numbers as numbers
    assert keys(filter={"score": {"$gte": 2, "$lt": 10}}) == ["img1", "doc1"]
    assert keys(filter={"author": {"$ne": "Alice"}}) == ["doc2"]
    assert keys(filter={"title": {"$gt": "Image"}}) == ["doc2"]  # strings as strings
    assert keys(limit=2) == ["img1", "doc2"]
    assert keys(offset=2) == ["doc1"]
    assert all(i.score is None for i in store.search(("test",)))


def test_filters_match_nested_values_and_lists(store: KiokuStore) -> None:
    store.put(("f",), "a", {"meta": {"lang": "ja", "level": 3}, "tags": ["x", "y"]})
    store.put(("f",), "b", {"meta": {"lang": "en", "level": 1}, "tags": ["x"]})
    assert [i.key for i in store.search(("f",), filter={"meta": {"lang": "ja"}})] == ["a"]
    assert [i.key for i in store.search(("f",), filter={"tags": ["x"]})] == ["b"]
    assert store.search(("f",), filter={"missing": 1}) == []
    with pytest.raises(ValidationError, match=r"\$gt"):
        store.search(("f",), filter={"meta": {"$between": 1}})


def test_search_with_a_query_ranks_by_match_and_reaches_archived_items(
    memory: Kioku, store: KiokuStore, clock: FixedClock
) -> None:
    store.put(("users", "u1"), "tea", {"text": "likes green tea in the morning"})
    store.put(("users", "u1"), "cat", {"text": "has a cat called Momo"})
    store.put(("users", "u2"), "car", {"text": "drives an old red car"})
    store.put(("other",), "tea2", {"text": "green tea prices rose"})
    found = store.search(("users",), query="green tea")
    assert found[0].key == "tea"
    assert "tea2" not in [i.key for i in found]  # outside the prefix
    scores = [i.score for i in found]
    assert all(isinstance(s, float) and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert store.search((), query="Momo cat")[0].key == "cat"
    assert store.search(("users",), query="green tea", filter={"text": "nothing"}) == []
    # kioku's forgetting archives an item: it is still found and still read back
    [tea] = [m for m in memory.list(kind="knowledge") if "green tea in" in m.content]
    memory.store.update(tea.id, MemoryPatch(archived_at=clock.now(), current_level=4))
    assert memory.list(kind="knowledge", archived=True)[0].id == tea.id
    assert store.search(("users",), query="green tea")[0].key == "tea"
    assert store.get(("users", "u1"), "tea") is not None
    assert ("users", "u1") in store.list_namespaces()


def test_the_searchable_text_is_the_index_fields(memory: Kioku) -> None:
    store = KiokuStore(memory, index={"fields": ["summary", "notes[*].text"]})
    value = {"summary": "Trip to Kyoto", "notes": [{"text": "temples"}, {"text": "rain"}]}
    store.put(("t",), "indexed", value)
    store.put(("t",), "whole", {"a": "one", "b": {"c": "two"}}, index=["$"])
    store.put(("t",), "none", {"a": "hidden"}, index=False)
    texts = {m.content for m in memory.list(kind="knowledge")}
    assert texts == {"Trip to Kyoto\ntemples\nrain", "one\ntwo", "none"}
    assert store.search(("t",), query="temples Kyoto")[0].key == "indexed"
    default = KiokuStore(memory)
    default.put(("d",), "k", {"x": "every string", "n": 5, "y": ["counts"]})
    assert "every string\ncounts" in {m.content for m in memory.list(kind="knowledge")}


# -- namespaces --------------------------------------------------------------------------------


def test_list_namespaces_with_prefix_suffix_wildcards_depth_and_pages(store: KiokuStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
    ]
    store.batch([PutOp(ns, f"id{n}", {"n": n}) for n, ns in enumerate(namespaces)])
    assert store.list_namespaces() == sorted(namespaces)
    assert store.list_namespaces(prefix=("a", "b")) == sorted(namespaces[:4])
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",), ("users",)]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("nothing",)) == []
    only = [MatchCondition("suffix", "settings")]  # type: ignore[arg-type]  # a bare label
    assert store.batch([ListNamespacesOp(match_conditions=tuple(only))]) == [
        [("users", "456", "settings")]
    ]


def test_namespaces_are_checked_as_langgraph_checks_them(store: KiokuStore) -> None:
    for bad in [(), ("a", "b.c"), ("a", ""), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"x": 1})])
    # past the public put, as LangGraph's own stores allow it
    store.batch([PutOp(("langgraph", "foo"), "bar", {"x": 1})])
    item = store.get(("langgraph", "foo"), "bar")
    assert item is not None
    assert item.value == {"x": 1}


def test_values_and_options_kioku_cannot_keep_are_refused_clearly(memory: Kioku) -> None:
    store = KiokuStore(memory)
    with pytest.raises(ValidationError, match="finite numbers"):
        store.put(("n",), "k", {"x": float("nan")})
    with pytest.raises(ValidationError, match="string keys"):
        store.put(("n",), "k", {"x": {1: "one"}})
    with pytest.raises(ValidationError, match="a dict"):
        store.batch([PutOp(("n",), "k", ["not", "a", "dict"])])  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("n",), "k", {"x": 1}, ttl=5)
    with pytest.raises(ValidationError, match="ttl") as caught:
        store.batch([PutOp(("n",), "k", {"x": 1}, ttl=5)])
    assert "forgets by its own lifecycle" in str(caught.value)
    with pytest.raises(ValidationError, match="embed"):
        KiokuStore(memory, index={"dims": 3, "embed": lambda texts: [[0.0] * 3 for _ in texts]})
    with pytest.raises(ValidationError, match="user_label"):
        KiokuStore(memory, user_label=-1)
    with pytest.raises(ValidationError, match="shorter key"):
        store.put(("n",), "k" * 2000, {"x": 1})
    assert issubclass(ValidationError, KiokuError)
    assert memory.count(kind="knowledge") == 0
    # a mapping that is not a dict is kept as the dict it reads as
    store.put(("n",), "proxy", MappingProxyType({"inner": MappingProxyType({"a": (1, 2)})}))
    kept = store.get(("n",), "proxy")
    assert kept is not None
    assert kept.value == {"inner": {"a": [1, 2]}}


def test_an_item_whose_trigger_was_edited_by_hand_reads_as_its_text(
    memory: Kioku, store: KiokuStore
) -> None:
    store.put(("n",), "k", {"text": "original"})
    [stored] = memory.list(kind="knowledge")
    memory.edit_memory(stored.id, trigger="a title typed by a person")
    item = store.get(("n",), "k")
    assert item is not None
    assert item.value == {"text": "original"}


# -- owners ------------------------------------------------------------------------------------


def test_user_label_puts_each_users_items_in_their_own_scope(tmp_path: Path, memory: Kioku) -> None:
    store = KiokuStore(memory, user_label=1)
    store.put(("users", "alice", "memories"), "m1", {"text": "alice likes jazz"})
    store.put(("users", "bob", "memories"), "m1", {"text": "bob likes jazz too"})
    store.put(("shared",), "s", {"text": "shared jazz notes"})
    alice = Kioku.open(tmp_path / "home", env={}, user_id="alice")
    with alice:
        assert [m.content for m in alice.list(kind="knowledge")] == ["alice likes jazz"]
    assert [m.content for m in memory.list(kind="knowledge")] == ["shared jazz notes"]
    found = store.search(("users",), query="jazz")
    assert sorted(i.namespace[1] for i in found) == ["alice", "bob"]
    assert [i.value["text"] for i in store.search(("users", "bob"), query="jazz")] == [
        "bob likes jazz too"
    ]
    assert store.list_namespaces(prefix=("users",)) == [
        ("users", "alice", "memories"),
        ("users", "bob", "memories"),
    ]
    # erasing a user erases what the store kept for them
    plan = memory.plan_erasure("alice")
    memory.erase_user("alice", plan.token)
    assert store.get(("users", "alice", "memories"), "m1") is None
    assert store.get(("users", "bob", "memories"), "m1") is not None


# -- async -------------------------------------------------------------------------------------


def test_the_async_variants_run_the_same_operations(store: KiokuStore) -> None:
    async def run() -> tuple[Any, ...]:
        await asyncio.gather(
            *(store.aput(("a", str(n % 3)), f"k{n}", {"text": f"note {n}"}) for n in range(9))
        )
        got = await store.aget(("a", "1"), "k4")
        found = await store.asearch(("a",), filter={"text": "note 7"})
        names = await store.alist_namespaces(prefix=("a",))
        await store.adelete(("a", "1"), "k4")
        gone = await store.aget(("a", "1"), "k4")
        ranked = await store.asearch(("a",), query="note 5")
        return got, found, names, gone, ranked

    got, found, names, gone, ranked = asyncio.run(run())
    assert got is not None
    assert got.value == {"text": "note 4"}
    assert [i.key for i in found] == ["k7"]
    assert names == [("a", "0"), ("a", "1"), ("a", "2")]
    assert gone is None
    assert ranked[0].key == "k5"


# -- the same as LangGraph's InMemoryStore -------------------------------------------------------


def _writes(rng: random.Random) -> list[PutOp]:
    spaces = [("u", "1"), ("u", "2"), ("u", "2", "deep"), ("docs",), ("docs", "x", "y")]
    ops = []
    for n in range(40):
        namespace = rng.choice(spaces)
        key = f"k{rng.randrange(12)}"
        value = {
            "n": rng.randrange(20),
            "kind": rng.choice(["a", "b", "c"]),
            "meta": {"even": n % 2 == 0, "labels": rng.sample(["p", "q", "r"], 2)},
            "text": f"note {n}",
        }
        ops.append(PutOp(namespace, key, value if rng.random() > 0.1 else None))
    return ops


def test_every_read_agrees_with_langgraphs_in_memory_store(store: KiokuStore) -> None:
    _agrees_with_in_memory_store(store)


def _agrees_with_in_memory_store(store: KiokuStore) -> None:
    reference = InMemoryStore()
    rng = random.Random(20)
    writes = _writes(rng)
    for chunk in (writes[:15], writes[15:16], writes[16:]):
        reference.batch(chunk)
        store.batch(chunk)

    def entries(items: list[Any]) -> list[tuple[Any, ...]]:
        return sorted((i.namespace, i.key, repr(i.value)) for i in items)

    keys = {(op.namespace, op.key) for op in writes}
    for namespace, key in sorted(keys):
        ours, theirs = store.get(namespace, key), reference.get(namespace, key)
        assert (ours is None) == (theirs is None)
        assert ours is None or theirs is None or ours.value == theirs.value
    searches: list[dict[str, Any]] = [
        {},
        {"filter": {"kind": "a"}},
        {"filter": {"n": {"$gte": 10}, "kind": {"$ne": "c"}}},
        {"filter": {"meta": {"even": True}}},
    ]
    for prefix in [(), ("u",), ("u", "2"), ("docs", "x")]:
        for options in searches:
            found = store.search(prefix, limit=100, **options)
            expected = reference.search(prefix, limit=100, **options)
            assert entries(found) == entries(expected), (prefix, options)
    # LangGraph's in-memory store keeps a namespace whose items were all deleted
    live = {ns for ns, items in reference._data.items() if items}
    assert set(store.list_namespaces(limit=100)) == live
    assert set(store.list_namespaces(prefix=("u",), max_depth=2)) == {
        ns[:2] for ns in live if ns[0] == "u"
    }


# -- on PostgreSQL -------------------------------------------------------------------------------


def test_the_store_works_the_same_on_postgresql(
    postgres_url: str,  # noqa: F811 (the fixture)
    tmp_path: Path,
    clock: FixedClock,
) -> None:
    schema = "lg_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    env = {"KIOKU_STORE_URL": postgres_url, "KIOKU_STORE__SCHEMA": schema}
    try:
        with Kioku.open(tmp_path / "home", env=env, clock=clock) as memory:
            store = KiokuStore(memory, user_label=1)
            _agrees_with_in_memory_store(store)
            store.put(("users", "carol", "m"), "k", VALUE)
            item = store.get(("users", "carol", "m"), "k")
            assert item is not None
            assert item.value == VALUE
            store.delete(("users", "carol", "m"), "k")
            store.put(("users", "carol", "m"), "k", {"text": "green tea again"})
            assert store.search(("users",), query="green tea")[0].key == "k"
            assert not (tmp_path / "home" / "memories.db").exists()
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
