"""Neighbour terms in recall: the scoring of a turn with its neighbours' terms (pure parts)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.recall import conversation_neighbours
from kioku.service.recall.neighbour_terms import SPAN, TURNS, _beside, neighbour_bm25

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
IDF = {"kid": 2.0, "exhibit": 3.0, "dinosaur": 3.0}

_terms = st.frozensets(st.sampled_from(["kid", "exhibit", "dinosaur", "cake", "rain", "bus"]))


@st.composite
def _memories(
    draw: st.DrawFn,
) -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]]:
    keys = [f"m{i}" for i in range(draw(st.integers(1, 8)))]
    terms = {key: draw(_terms) for key in keys}
    neighbours = {
        key: tuple(draw(st.lists(st.sampled_from(keys), max_size=4, unique=True))) for key in keys
    }
    return terms, neighbours


def test_a_reply_is_found_by_the_words_of_what_it_answers() -> None:
    terms = {
        "question": frozenset({"kid", "like", "dinosaur", "exhibit"}),
        "reply": frozenset({"stok", "stay", "closing"}),
        "elsewhere": frozenset({"rain", "bus"}),
    }
    neighbours = {"question": ("reply",), "reply": ("question",), "elsewhere": ()}
    scores = neighbour_bm25(["kid", "dinosaur", "exhibit"], terms, neighbours, IDF)
    assert scores["reply"] > 0
    assert scores["question"] > scores["reply"]  # its own words count more than lent ones
    assert scores["elsewhere"] == 0.0
    # Without the neighbours' weight, the reply holds nothing of the query.
    assert neighbour_bm25(["kid"], terms, neighbours, IDF, weight=0.0)["reply"] == 0.0


def test_nothing_to_score() -> None:
    assert neighbour_bm25([], {"a": frozenset({"kid"})}, {"a": ()}, IDF) == {"a": 0.0}
    assert neighbour_bm25(["kid"], {}, {}, IDF) == {}
    # A memory whose terms are unknown holds nothing; an unweighted term counts for nothing.
    assert neighbour_bm25(["kid", "bus"], {}, {"a": ("b",)}, IDF) == {"a": 0.0}


@given(_memories(), st.lists(st.sampled_from(["kid", "exhibit", "cake", "bus"]), max_size=4))
def test_scores_are_positive_only_where_the_query_is_held(
    memories: tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]], query: list[str]
) -> None:
    terms, neighbours = memories
    scores = neighbour_bm25(query, terms, neighbours, IDF)
    assert scores.keys() == neighbours.keys()
    for key, score in scores.items():
        assert math.isfinite(score)
        assert score >= 0.0
        held = terms[key].union(*(terms[n] for n in neighbours[key]))
        assert (score > 0) == any(IDF.get(t, 0.0) > 0 and t in held for t in query)


@given(_memories(), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_lending_more_never_lowers_a_score(
    memories: tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]], a: float, b: float
) -> None:
    terms, neighbours = memories
    query = ["kid", "exhibit", "dinosaur"]
    low = neighbour_bm25(query, terms, neighbours, IDF, weight=min(a, b))
    high = neighbour_bm25(query, terms, neighbours, IDF, weight=max(a, b))
    for key in neighbours:
        assert low[key] <= high[key] + 1e-12


@given(st.floats(0.0, 0.99))
def test_an_own_term_outweighs_the_same_term_lent(weight: float) -> None:
    terms = {"own": frozenset({"kid"}), "lent": frozenset({"rain"}), "other": frozenset({"kid"})}
    neighbours = {"own": ("x",), "lent": ("other",)}
    terms["x"] = frozenset({"rain"})
    scores = neighbour_bm25(["kid"], terms, neighbours, IDF, weight=weight)
    assert scores["own"] > scores["lent"]


@given(
    st.lists(st.integers(-9000, 9000), max_size=25),
    st.integers(-9000, 9000),
)
def test_beside_is_conversation_neighbours(offsets: list[int], at_s: int) -> None:
    turns = sorted((T0 + timedelta(seconds=s), f"m{i}") for i, s in enumerate(offsets))
    at = T0 + timedelta(seconds=at_s)
    before, after = conversation_neighbours(at, [(k, w) for w, k in turns], TURNS, SPAN)
    assert _beside(turns, at) == before + after


def test_beside_leaves_out_the_same_moment_and_the_far() -> None:
    turns = sorted(
        [
            (T0, "seed"),
            (T0, "twin"),
            (T0 + timedelta(minutes=1), "next"),
            (T0 - timedelta(minutes=1), "previous"),
            (T0 + 2 * SPAN, "far"),
        ]
    )
    assert _beside(turns, T0) == ("previous", "next")


@pytest.mark.parametrize("weight", [0.0, 0.5])
def test_length_counts_the_neighbours(weight: float) -> None:
    # Two memories holding the query term alike: the one with longer neighbours scores less.
    terms = {
        "short": frozenset({"kid"}),
        "long": frozenset({"kid"}),
        "chatty": frozenset({f"w{i}" for i in range(30)}),
    }
    scores = neighbour_bm25(["kid"], terms, {"short": (), "long": ("chatty",)}, IDF, weight)
    assert scores["short"] > scores["long"] > 0


def _plain_bm25(
    query: list[str],
    terms: dict[str, frozenset[str]],
    neighbours: dict[str, tuple[str, ...]],
    weight: float,
) -> dict[str, float]:
    """The scoring spelled out term by term, neighbour by neighbour."""
    empty: frozenset[str] = frozenset()
    wanted = list(dict.fromkeys(query))
    if not neighbours or not wanted:
        return dict.fromkeys(neighbours, 0.0)
    length = {
        key: len(terms.get(key, empty)) + sum(len(terms.get(n, empty)) for n in around)
        for key, around in neighbours.items()
    }
    mean = math.fsum(length.values()) / len(length)
    scores = {}
    for key, around in neighbours.items():
        norm = 1.0 - 0.75 + (0.75 * length[key] / mean if mean > 0 else 0.0)
        total = 0.0
        for term in wanted:
            count = float(term in terms.get(key, empty))
            count += weight * sum(1 for n in around if term in terms.get(n, empty))
            if count > 0:
                total += IDF.get(term, 0.0) * count * 2.2 / (count + 1.2 * norm)
        scores[key] = max(0.0, total)
    return scores


@given(
    _memories(),
    st.lists(st.sampled_from(["kid", "exhibit", "dinosaur", "cake", "bus", "kid"]), max_size=6),
    st.floats(0.0, 1.0),
)
def test_the_scores_are_those_of_the_plain_term_by_term_sum(
    memories: tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]],
    query: list[str],
    weight: float,
) -> None:
    terms, neighbours = memories
    assert neighbour_bm25(query, terms, neighbours, IDF, weight) == _plain_bm25(
        query, terms, neighbours, weight
    )
