"""Query terms and conversation context for recall (pure parts)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms, query_terms
from kioku.config.schema import RetrievalConfig
from kioku.core.presets import PRESETS, effective_weights
from kioku.core.recall import ContextSeed, context_bonus, conversation_neighbours

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
HOUR = timedelta(hours=1)


def test_a_query_leaves_out_question_words() -> None:
    assert query_terms("What did Caroline research?") == ["caroline", "research"]
    assert query_terms("When and where did we meet Momo?") == ["meet", "momo"]
    assert "what" in index_terms("What did Caroline research?")  # memories keep them


def test_question_words_alone_are_still_searched() -> None:
    assert query_terms("what?") == ["what"]
    assert query_terms("") == []


def test_japanese_queries_are_unchanged() -> None:
    assert query_terms("いつ寿司を食べた？") == index_terms("いつ寿司を食べた？")


def test_neighbours_nearest_first_within_turns_and_span() -> None:
    others = [(f"m{i}", T0 + timedelta(minutes=i)) for i in range(-5, 6)]
    others.append(("far", T0 + 2 * HOUR))
    before, after = conversation_neighbours(T0, others, 2, HOUR)
    assert before == ("m-1", "m-2")
    assert after == ("m1", "m2")
    assert conversation_neighbours(T0, others, 0, HOUR) == ((), ())
    assert conversation_neighbours(T0, [("far", T0 + 2 * HOUR)], 2, HOUR) == ((), ())


def test_memories_of_the_same_moment_are_not_neighbours() -> None:
    assert conversation_neighbours(T0, [("seed", T0), ("twin", T0)], 2, HOUR) == ((), ())


@given(
    st.lists(st.integers(-7200, 7200), max_size=30, unique=True),
    st.integers(0, 4),
    st.integers(1, 7200),
)
def test_neighbours_properties(offsets: list[int], turns: int, span_s: int) -> None:
    span = timedelta(seconds=span_s)
    others = [(f"m{s}", T0 + timedelta(seconds=s)) for s in offsets]
    when = dict(others)
    before, after = conversation_neighbours(T0, others, turns, span)
    assert len(before) <= turns
    assert len(after) <= turns
    assert not set(before) & set(after)
    assert all(T0 - span <= when[k] < T0 for k in before)
    assert all(T0 < when[k] <= T0 + span for k in after)
    assert [when[k] for k in before] == sorted((when[k] for k in before), reverse=True)
    assert [when[k] for k in after] == sorted(when[k] for k in after)
    # Nothing nearer on a side was skipped.
    nearer_before = [k for k, t in others if T0 - span <= t < T0]
    assert len(before) == min(turns, len(nearer_before))
    if before:
        assert all(when[k] <= when[before[-1]] for k in nearer_before if k not in before)


def test_bonus_falls_off_with_the_turns_and_keeps_the_best_seed() -> None:
    seeds = [
        ContextSeed(1.0, ("a1", "a2"), ("b1", "b2")),
        ContextSeed(0.4, ("b1",), ("c1",)),
    ]
    bonus = context_bonus(seeds, 0.25)
    assert bonus["a1"] == pytest.approx(0.25)
    assert bonus["a2"] == pytest.approx(0.125)
    assert bonus["b1"] == pytest.approx(0.25)  # not 0.25 + 0.1
    assert bonus["c1"] == pytest.approx(0.1)
    assert context_bonus(seeds, 0.0) == {}
    assert context_bonus([ContextSeed(0.0, ("x",), ())], 0.25) == {}


ids = st.lists(st.sampled_from([f"m{i}" for i in range(8)]), max_size=3, unique=True).map(tuple)


@given(
    st.lists(st.builds(ContextSeed, st.floats(0, 1), ids, ids), max_size=6),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_bonus_is_bounded_by_the_best_seed(
    seeds: list[ContextSeed], weight: float, falloff: float
) -> None:
    bonus = context_bonus(seeds, weight, falloff)
    best = max((s.relevance for s in seeds), default=0.0)
    assert all(0.0 < value <= weight * best + 1e-12 for value in bonus.values())
    lent = {k for s in seeds if s.relevance * weight > 0 for k in s.before + s.after}
    assert set(bonus) <= lent
    # More weight never lends less.
    more = context_bonus(seeds, min(1.0, weight * 2), falloff)
    assert all(more[k] >= v - 1e-12 for k, v in bonus.items())


def test_context_weight_is_a_preset_weight() -> None:
    assert PRESETS["balanced"].context > 0
    assert PRESETS["spec"].context == 0.0  # spec 000 to the letter
    tuned = effective_weights(replace(RetrievalConfig(), context_weight=0.0))
    assert tuned == replace(PRESETS["balanced"], context=0.0)
    assert effective_weights(RetrievalConfig()).candidates == RetrievalConfig().candidates
