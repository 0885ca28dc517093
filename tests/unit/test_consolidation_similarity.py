"""Term similarity and near-duplicate groups (spec 001 日次固定化)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime, timedelta
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms
from kioku.core.consolidation import similarity
from kioku.core.consolidation.model import Source
from kioku.core.consolidation.similarity import near_duplicates, term_similarity

T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


def item(sid: str, text: str, minute: int = 0) -> Source:
    return Source(sid, text, T0 + timedelta(minutes=minute))


def test_term_similarity_examples() -> None:
    assert term_similarity("Ken lives in Osaka", "Ken lives in Osaka", index_terms) == 1.0
    assert term_similarity("Ken lives in Osaka", "ken LIVES in osaka!", index_terms) == 1.0
    assert term_similarity("Ken lives in Osaka", "Mia eats sushi", index_terms) == 0.0
    assert term_similarity("the and of", "the and of", index_terms) == 0.0
    assert term_similarity("", "Ken", index_terms) == 0.0
    # {ken, live, osaka} against {ken, live, kyoto}: 2 / 3.
    assert term_similarity(
        "Ken lives in Osaka", "Ken lives in Kyoto", index_terms
    ) == pytest.approx(2 / 3)
    ja = term_similarity("田中さんは大阪に住んでいる", "田中さんは東京に住んでいる", index_terms)
    assert 0.5 < ja < 1.0


def test_near_duplicates_groups_by_single_linkage() -> None:
    items = [
        item("c", "Ken lives in Osaka with two cats", 2),
        item("a", "Mia prefers green tea", 0),
        item("b", "Ken lives in Osaka with two dogs", 1),
        item("d", "Ken lives in Osaka", 5),
        item("e", "Mia prefers green tea", 3),
        item("f", "The build uses the cache", 4),
    ]
    assert near_duplicates(items, index_terms, 0.75) == [("a", "e"), ("b", "c", "d")]
    assert near_duplicates(items, index_terms, 0.99) == [("a", "e")]
    assert near_duplicates(items, index_terms, 1.01) == []
    assert near_duplicates([], index_terms, 0.5) == []


def test_ids_in_a_group_follow_time_then_id() -> None:
    items = [item("z", "Ken lives in Osaka", 0), item("y", "Ken lives in Osaka", 0)]
    items.append(item("a", "Ken lives in Osaka", 9))
    assert near_duplicates(items, index_terms, 0.9) == [("y", "z", "a")]


WORDS = st.sampled_from("ken mia osaka tokyo tea cache build lives 大阪 東京 the".split())
TEXT = st.lists(WORDS, max_size=6).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(TEXT, TEXT)
def test_similarity_is_a_symmetric_cosine(a: str, b: str) -> None:
    ab = term_similarity(a, b, index_terms)
    assert 0.0 <= ab <= 1.0
    assert ab == term_similarity(b, a, index_terms)
    has_terms = bool(index_terms(a))
    assert term_similarity(a, a, index_terms) == (1.0 if has_terms else 0.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(TEXT, st.integers(0, 5)), max_size=7),
    st.floats(0.3, 1.0),
    st.randoms(use_true_random=False),
)
def test_near_duplicate_groups_are_disjoint_ordered_and_order_free(
    rows: list[tuple[str, int]], threshold: float, rng: Random
) -> None:
    items = [item(f"m{i}", text, minute) for i, (text, minute) in enumerate(rows)]
    groups = near_duplicates(items, index_terms, threshold)
    at = {s.id: s.at for s in items}
    seen: set[str] = set()
    for group in groups:
        assert len(group) >= 2
        assert list(group) == sorted(group, key=lambda i: (at[i], i))
        assert seen.isdisjoint(group)
        seen.update(group)
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)
    shuffled = list(items)
    rng.shuffle(shuffled)
    assert near_duplicates(shuffled, index_terms, threshold) == groups
    # Every linked pair is in one group.
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if term_similarity(a.text, b.text, index_terms) >= threshold:
                assert any(a.id in g and b.id in g for g in groups)


def _reference_cosine(left: Counter[str], right: Counter[str]) -> float:
    """The cosine written out plainly: every term of both, in floating point."""
    if not left or not right:
        return 0.0
    terms = set(left) | set(right)
    dot = sum(left[t] * right[t] for t in terms)
    return min(
        1.0, dot / math.sqrt(sum(v * v for v in left.values()) * sum(v * v for v in right.values()))
    )


@settings(max_examples=300, deadline=None)
@given(
    left=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 9), max_size=8),
    right=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 9), max_size=8),
)
def test_the_index_scores_the_plain_cosine(left: dict[str, int], right: dict[str, int]) -> None:
    a, b = Counter(left), Counter(right)
    assert similarity._cosine(a, b) == _reference_cosine(a, b) == similarity._cosine(b, a)
    if a:
        assert similarity._cosine(a, Counter(a)) == 1.0
    index = similarity.TermIndex(lambda text: text.split())
    index.add("r", " ".join(t for t, n in b.items() for _ in range(n)))
    query = " ".join(t for t, n in a.items() for _ in range(n))
    expected = _reference_cosine(a, b)
    assert index.alike(query) == ([(expected, "r")] if expected > 0 else [])


def test_a_repeated_term_is_not_lost_to_the_prefix_filter() -> None:
    """With counts above one, the terms past the rarest few can carry the whole cosine:
    "ken mia osaka osaka" and "osaka osaka tokyo tea" are at 4/6 through "osaka" alone."""
    rows = [item("a", "ken mia osaka osaka"), item("b", "osaka osaka tokyo tea")]
    assert term_similarity(rows[0].text, rows[1].text, index_terms) == pytest.approx(4 / 6)
    assert near_duplicates(rows, index_terms, 0.625) == [("a", "b")]


@settings(max_examples=300, deadline=None)
@given(
    left=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 9), min_size=1, max_size=8),
    right=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 9), min_size=1, max_size=8),
    min_score=st.floats(0.51, 1.0),
)
def test_the_index_finds_every_item_at_the_score_asked(
    left: dict[str, int], right: dict[str, int], min_score: float
) -> None:
    """The prefix filter never drops an item whose cosine reaches ``min_score``."""
    a, b = Counter(left), Counter(right)
    index = similarity.TermIndex(lambda text: text.split())
    index.add("r", " ".join(t for t, n in b.items() for _ in range(n)))
    for term in "abcdefgh":  # other items, so the query's terms differ in rarity
        index.add(f"x{term}", term)
    query = " ".join(t for t, n in a.items() for _ in range(n))
    found = {key: score for score, key in index.alike(query, min_score)}
    assert ("r" in found) == (_reference_cosine(a, b) >= min_score)
