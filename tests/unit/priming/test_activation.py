"""Spreading activation of spec 001 (拡散活性化による記憶検索)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.priming import (
    HALF_LIFE_DAYS,
    WEIGHT_FREQUENCY,
    WEIGHT_PAGERANK,
    WEIGHT_RECENCY,
    activation_score,
    frequency_boost,
    personalized_pagerank,
    recency_factor,
)
from kioku.errors import ValidationError

#: Property tests check logic, not speed: no deadline; the costlier ones draw fewer examples.
QUICK = settings(deadline=None)
SMALL = settings(QUICK, max_examples=40)
similarities = st.floats(min_value=-1.0, max_value=1.0)
ages = st.floats(min_value=0.0, max_value=10_000.0)
counts = st.integers(min_value=0, max_value=1_000_000)
ranks = st.floats(min_value=0.0, max_value=1.0)


def test_constants_are_the_spec_values() -> None:
    assert (WEIGHT_RECENCY, WEIGHT_FREQUENCY, HALF_LIFE_DAYS, WEIGHT_PAGERANK) == (
        0.2,
        0.1,
        30.0,
        0.5,
    )


def test_the_spec_formula_on_worked_values() -> None:
    # 0.8 + 0.2·0.5^(60/30) + 0.1·ln(1+3) + 0.5·0.2
    expected = 0.8 + 0.2 * 0.25 + 0.1 * math.log(4) + 0.1
    assert activation_score(0.8, 60, 3, pagerank=0.2) == pytest.approx(expected)
    assert activation_score(0.5, 0, 0) == pytest.approx(0.7)


def test_half_life_is_exact_at_30_days() -> None:
    assert recency_factor(0) == 1.0
    assert recency_factor(30) == 0.5
    assert recency_factor(90) == 0.125
    assert activation_score(0.0, 30, 0) == pytest.approx(0.1, abs=1e-15)


@settings(QUICK)
@given(similarities, ages, counts)
def test_recency_term_is_bounded_by_its_weight(sim: float, age: float, count: int) -> None:
    recency = activation_score(sim, age, count) - sim - WEIGHT_FREQUENCY * math.log1p(count)
    assert -1e-9 <= recency <= WEIGHT_RECENCY + 1e-9


@settings(QUICK)
@given(similarities, similarities, ages, counts)
def test_monotone_in_similarity(a: float, b: float, age: float, count: int) -> None:
    low, high = sorted((a, b))
    assert activation_score(low, age, count) <= activation_score(high, age, count)


@settings(QUICK)
@given(similarities, ages, ages, counts)
def test_older_is_never_more_active(sim: float, a: float, b: float, count: int) -> None:
    young, old = sorted((a, b))
    assert activation_score(sim, old, count) <= activation_score(sim, young, count)


@settings(QUICK)
@given(similarities, ages, counts, counts)
def test_more_use_is_never_less_active(sim: float, age: float, a: int, b: int) -> None:
    few, many = sorted((a, b))
    assert activation_score(sim, age, few) <= activation_score(sim, age, many)


@settings(QUICK)
@given(similarities, ages, counts, ranks, ranks)
def test_monotone_in_pagerank(sim: float, age: float, count: int, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert activation_score(sim, age, count, low) <= activation_score(sim, age, count, high)
    assert activation_score(sim, age, count, 0.0) == activation_score(sim, age, count)


@settings(QUICK)
@given(similarities, st.floats(min_value=-1e6, max_value=0.0), counts)
def test_negative_age_counts_as_now(sim: float, age: float, count: int) -> None:
    assert activation_score(sim, age, count) == activation_score(sim, 0.0, count)


def test_frequency_is_a_natural_log_boost() -> None:
    assert frequency_boost(0) == 0.0
    assert frequency_boost(1) == pytest.approx(math.log(2))
    assert frequency_boost(9) == pytest.approx(math.log(10))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"similarity": math.nan}, "similarity"),
        ({"similarity": math.inf}, "similarity"),
        ({"age_days": math.nan}, "age_days"),
        ({"age_days": math.inf}, "age_days"),
        ({"access_count": -1}, "access_count"),
        ({"access_count": 1.5}, "access_count"),
        ({"access_count": True}, "access_count"),
        ({"pagerank": math.nan}, "pagerank"),
        ({"pagerank": -0.1}, "pagerank"),
    ],
)
def test_bad_inputs_are_rejected(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"similarity": 0.5, "age_days": 1.0, "access_count": 1}
    args.update(kwargs)
    with pytest.raises(ValidationError) as caught:
        activation_score(**args)  # type: ignore[arg-type]
    assert caught.value.field == field


# -- Personalized PageRank -----------------------------------------------------------------


def star(center: str, leaves: int, *, both_ways: bool) -> dict[str, list[tuple[str, float]]]:
    names = [f"leaf{i}" for i in range(leaves)]
    edges: dict[str, list[tuple[str, float]]] = {center: [(n, 1.0) for n in names]}
    if both_ways:
        edges.update({n: [(center, 1.0)] for n in names})
    return edges


names = st.sampled_from([f"n{i}" for i in range(8)])
weights = st.floats(min_value=0.0, max_value=10.0)
graphs = st.dictionaries(names, st.lists(st.tuples(names, weights), max_size=5), max_size=8)
seed_maps = st.dictionaries(names, st.floats(min_value=0.01, max_value=5.0), min_size=1)
dampings = st.floats(min_value=0.0, max_value=0.95)


@settings(SMALL)
@given(graphs, seed_maps, dampings)
def test_pagerank_is_a_distribution_over_every_node(
    edges: dict[str, list[tuple[str, float]]], seeds: dict[str, float], damping: float
) -> None:
    rank = personalized_pagerank(edges, seeds, damping=damping)
    named = set(edges) | set(seeds) | {t for out in edges.values() for t, _ in out}
    assert set(rank) == named
    assert all(v >= 0 for v in rank.values())
    assert math.fsum(rank.values()) == pytest.approx(1.0, abs=1e-9)


@settings(QUICK)
@given(st.integers(min_value=1, max_value=20), dampings, st.booleans())
def test_the_seed_at_the_centre_of_a_star_gets_the_most(
    leaves: int, damping: float, both_ways: bool
) -> None:
    rank = personalized_pagerank(star("hub", leaves, both_ways=both_ways), {"hub": 1.0}, damping)
    assert all(rank["hub"] > v for node, v in rank.items() if node != "hub")


@settings(SMALL)
@given(graphs, seed_maps)
def test_without_damping_the_walk_never_leaves_the_seeds(
    edges: dict[str, list[tuple[str, float]]], seeds: dict[str, float]
) -> None:
    rank = personalized_pagerank(edges, seeds, damping=0.0)
    total = sum(seeds.values())
    for node, value in rank.items():
        assert value == pytest.approx(seeds.get(node, 0.0) / total, abs=1e-12)


def test_nodes_out_of_reach_of_the_seeds_get_nothing() -> None:
    edges = {"a": [("b", 1.0)], "b": [("a", 1.0)], "x": [("y", 1.0)], "y": [("x", 1.0)]}
    rank = personalized_pagerank(edges, {"a": 1.0}, iterations=200)
    assert rank["x"] == rank["y"] == 0.0
    assert rank["a"] + rank["b"] == pytest.approx(1.0)
    # Two steps away gets less than one step away.
    chain = {"s": [("one", 1.0)], "one": [("two", 1.0)], "two": [("three", 1.0)]}
    rank = personalized_pagerank(chain, {"s": 1.0}, iterations=100)
    assert rank["s"] > rank["one"] > rank["two"] > rank["three"] > 0


def test_heavier_links_carry_more_activation() -> None:
    edges = {"s": [("strong", 3.0), ("weak", 1.0), ("none", 0.0)]}
    rank = personalized_pagerank(edges, {"s": 1.0}, iterations=100)
    assert rank["strong"] == pytest.approx(3 * rank["weak"])
    assert rank["none"] == 0.0


def test_the_power_iteration_converges_to_the_closed_form() -> None:
    # Two nodes linked both ways, restarting at a: r_a = (1-d) + d·r_b, r_b = d·r_a.
    d = 0.85
    rank = personalized_pagerank({"a": [("b", 1.0)], "b": [("a", 1.0)]}, {"a": 1}, d, 500, 0)
    assert rank["a"] == pytest.approx(1 / (1 + d), abs=1e-9)
    few = personalized_pagerank({"a": [("b", 1.0)], "b": [("a", 1.0)]}, {"a": 1}, d, 2, 0)
    assert few["a"] != pytest.approx(1 / (1 + d), abs=1e-6)


@settings(SMALL)
@given(graphs, seed_maps)
def test_seed_weights_are_only_relative(
    edges: dict[str, list[tuple[str, float]]], seeds: dict[str, float]
) -> None:
    one = personalized_pagerank(edges, seeds)
    scaled = personalized_pagerank(edges, {k: v * 1000 for k, v in seeds.items()})
    for node in one:
        assert scaled[node] == pytest.approx(one[node], abs=1e-9)


def test_an_empty_graph_gives_nothing() -> None:
    assert personalized_pagerank({}, {}) == {}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"seeds": {}}, "seeds"),
        ({"seeds": {"a": 0.0}}, "seeds"),
        ({"seeds": {"a": -1.0}}, "seed weight of 'a'"),
        ({"seeds": {"a": math.nan}}, "seed weight"),
        ({"edges": {"a": [("b", -1.0)]}}, "edge weight"),
        ({"edges": {"a": [("b", math.inf)]}}, "edge weight"),
        ({"damping": 1.0}, "damping"),
        ({"damping": -0.1}, "damping"),
        ({"iterations": 0}, "iterations"),
        ({"tolerance": -1.0}, "tolerance"),
    ],
)
def test_pagerank_rejects_bad_inputs(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"edges": {"a": [("b", 1.0)]}, "seeds": {"a": 1.0}}
    args.update(kwargs)
    with pytest.raises(ValidationError) as caught:
        personalized_pagerank(**args)  # type: ignore[arg-type]
    assert caught.value.field == field
