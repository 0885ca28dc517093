"""Spec 003 §7 (記憶の重要度判定): salience and the choice of what goes to long-term memory."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.consolidation.salience import (
    Salience,
    long_term,
    novelty,
    relatedness,
    repetition,
    salience,
    salience_parts,
)

sims = st.lists(st.floats(min_value=-1.0, max_value=1.0), max_size=12)
fractions = st.floats(min_value=0.0, max_value=1.0)
mention_counts = st.integers(min_value=0, max_value=50)


# 新規性: 1 − (neighbours above 0.8 among the top 5) / 5


@pytest.mark.parametrize(
    ("similarities", "expected"),
    [
        ([], 1.0),
        ([0.5, 0.2], 1.0),
        ([0.8], 1.0),  # exactly 0.8 is not above it
        ([0.81], 0.8),
        ([0.9] * 5, 0.0),
        ([0.9] * 8, 0.0),
        ([0.9, 0.85, 0.5, 0.4, 0.35, 0.95], 0.4),
        ([0.1, 0.2, 0.3, 0.4, 0.5, 0.99], 0.8),  # order does not matter
    ],
)
def test_novelty(similarities: list[float], expected: float) -> None:
    assert novelty(similarities) == pytest.approx(expected)


# 関連性: neighbours in [0.3, 0.8] among the top 5, over 5


@pytest.mark.parametrize(
    ("similarities", "expected"),
    [
        ([], 0.0),
        ([0.29], 0.0),
        ([0.3], 0.2),
        ([0.8], 0.2),
        ([0.81], 0.0),
        ([0.5] * 5, 1.0),
        ([0.5] * 9, 1.0),
        ([0.9, 0.9, 0.9, 0.5, 0.5, 0.5], 0.4),  # only the top 5 count
        ([0.9] * 5 + [0.5], 0.0),
    ],
)
def test_relatedness(similarities: list[float], expected: float) -> None:
    assert relatedness(similarities) == pytest.approx(expected)


# 繰り返し: min(mentions / 10, 1)


@pytest.mark.parametrize(
    ("mentions", "expected"), [(-1, 0.0), (0, 0.0), (1, 0.1), (9, 0.9), (10, 1.0), (11, 1.0)]
)
def test_repetition(mentions: int, expected: float) -> None:
    assert repetition(mentions) == pytest.approx(expected)


# calculate_importance: 0.4 e + 0.3 novelty + 0.2 relatedness + 0.1 repetition


def test_salience_weights() -> None:
    parts = salience_parts(0.5, [0.9, 0.6], 3)
    assert parts == Salience(
        emotion=0.5, novelty=0.8, relatedness=0.2, repetition=0.3, total=parts.total
    )
    assert parts.total == pytest.approx(0.4 * 0.5 + 0.3 * 0.8 + 0.2 * 0.2 + 0.1 * 0.3)
    assert salience(0.5, [0.9, 0.6], 3) == parts.total


@pytest.mark.parametrize(
    ("emotion", "similarities", "mentions", "expected"),
    [
        (0.0, [0.9] * 5, 0, 0.0),
        (1.0, [], 10, 0.8),
        (1.0, [0.5] * 5, 10, 1.0),
        (0.0, [], 1, 0.31),
    ],
)
def test_salience_examples(
    emotion: float, similarities: list[float], mentions: int, expected: float
) -> None:
    assert salience(emotion, similarities, mentions) == pytest.approx(expected)


@pytest.mark.parametrize(("emotion", "clamped"), [(-0.5, 0.0), (1.7, 1.0)])
def test_emotion_is_clamped(emotion: float, clamped: float) -> None:
    assert salience_parts(emotion, [], 0).emotion == clamped


@given(st.floats(min_value=-2.0, max_value=2.0), sims, st.integers(min_value=-5, max_value=50))
def test_salience_in_range(emotion: float, similarities: list[float], mentions: int) -> None:
    parts = salience_parts(emotion, similarities, mentions)
    for value in (parts.emotion, parts.novelty, parts.relatedness, parts.repetition, parts.total):
        assert 0.0 <= value <= 1.0
    assert salience(emotion, similarities, mentions) == parts.total


@given(fractions, fractions, sims, mention_counts, mention_counts)
def test_salience_grows_with_emotion_and_mentions(
    e1: float, e2: float, similarities: list[float], m1: int, m2: int
) -> None:
    (e_low, e_high), (m_low, m_high) = sorted((e1, e2)), sorted((m1, m2))
    assert salience(e_low, similarities, m_low) <= salience(e_high, similarities, m_high)


@given(sims)
def test_novelty_and_relatedness_closed_form(similarities: list[float]) -> None:
    similar = sum(1 for s in similarities if s > 0.8)
    related = sum(1 for s in similarities if 0.3 <= s <= 0.8)
    assert novelty(similarities) == pytest.approx(1 - min(5, similar) / 5)
    assert relatedness(similarities) == pytest.approx(min(related, 5 - min(5, similar)) / 5)
    assert relatedness(similarities) <= novelty(similarities)


@given(sims, st.floats(min_value=0.800001, max_value=1.0))
def test_a_near_copy_never_makes_an_event_newer(similarities: list[float], near: float) -> None:
    assert novelty([*similarities, near]) <= novelty(similarities)


# prioritize_for_consolidation: the top 70% go to long-term memory


def events(*scores: float) -> list[tuple[str, float]]:
    return [(f"e{i}", s) for i, s in enumerate(scores)]


def test_long_term_keeps_the_top_seventy_percent_in_input_order() -> None:
    scored = events(0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 0.8, 0.6, 0.4, 0.0)
    kept, left = long_term(scored)
    assert kept == ["e1", "e2", "e3", "e4", "e6", "e7", "e8"]
    assert left == ["e0", "e5", "e9"]


@pytest.mark.parametrize(("n", "kept"), [(0, 0), (1, 1), (2, 1), (3, 2), (10, 7), (90, 63)])
def test_long_term_counts(n: int, kept: int) -> None:
    got, left = long_term(events(*([0.5] * n)))
    assert len(got) == kept
    assert len(left) == n - kept


def test_a_single_turn_is_kept() -> None:
    # spec 003 §7's int(1 × 0.7) would be 0
    assert long_term(events(0.01)) == (["e0"], [])


def test_long_term_ties_go_to_the_earlier_event() -> None:
    assert long_term(events(0.5, 0.5, 0.5), share=0.5) == (["e0"], ["e1", "e2"])
    assert long_term(events(0.2, 0.5, 0.5, 0.9), share=0.5) == (["e1", "e3"], ["e0", "e2"])


def test_long_term_share() -> None:
    scored = events(0.3, 0.1, 0.2)
    assert long_term(scored, share=1.0) == (["e0", "e1", "e2"], [])
    assert long_term(scored, share=0.01) == (["e0"], ["e1", "e2"])


@pytest.mark.parametrize("share", [0.0, -0.1, 1.01, math.nan])
def test_long_term_refuses_a_bad_share(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        long_term(events(0.5), share=share)


@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=40),
    st.floats(min_value=0.01, max_value=1.0),
)
def test_long_term_properties(scores: list[float], share: float) -> None:
    scored = events(*scores)
    kept, left = long_term(scored, share)
    ids = [ident for ident, _ in scored]
    assert sorted(kept + left) == sorted(ids)
    assert kept == [i for i in ids if i in set(kept)]
    assert left == [i for i in ids if i in set(left)]
    expected = max(1, math.floor(round(len(scored) * share, 9))) if scored else 0
    assert len(kept) == expected
    by_id = dict(scored)
    assert all(by_id[k] >= by_id[r] for k in kept for r in left)
