"""Spec 004: the importance score, the capacity manager and the compression rate."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.consolidation.importance import (
    COMPRESS_BELOW,
    DEFAULT_CAPACITY,
    CapacityPlan,
    compression_rate,
    importance,
    plan_capacity,
)

NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
DAY = timedelta(days=1)
WEEK = timedelta(days=7)


def score(days: float, accesses: int = 0, *, accessed: bool = False) -> float:
    moment = NOW - timedelta(days=days)
    if accessed:
        return importance(moment - 365 * DAY, moment, accesses, NOW)
    return importance(moment, None, accesses, NOW)


# 呼吸サイクル: 0.5 at birth, +0.1 per access, × 0.95 per week


@pytest.mark.parametrize(
    ("days", "accesses", "expected"),
    [
        (0, 0, 0.5),
        (7, 0, 0.475),
        (14, 0, 0.45125),
        (3.5, 0, 0.5 * math.sqrt(0.95)),
        (0, 1, 0.6),
        (0, 3, 0.8),
        (0, 5, 1.0),
        (0, 12, 1.0),
        (7, 2, 0.7 * 0.95),
        (70, 5, 0.95**10),
    ],
)
def test_importance_values(days: float, accesses: int, expected: float) -> None:
    assert score(days, accesses) == pytest.approx(expected)


def test_spec_access_log_goes_point_one_per_access() -> None:
    # spec 004 §2.2: 0.5 → 0.6 → 0.7 → 0.8, each access the same day
    assert [round(score(0, n, accessed=n > 0), 10) for n in range(4)] == [0.5, 0.6, 0.7, 0.8]


@pytest.mark.parametrize(("days", "compressed"), [(69, False), (70, True), (71, True)])
def test_an_untouched_memory_falls_below_compression_in_ten_weeks(
    days: int, compressed: bool
) -> None:
    # 0.5 × 0.95^w < 0.3 from w ≈ 9.96 weeks
    assert (score(days) < COMPRESS_BELOW) == compressed


def test_decay_runs_from_the_last_access() -> None:
    created = NOW - 365 * DAY
    assert importance(created, NOW, 1, NOW) == pytest.approx(0.6)
    assert importance(created, NOW - WEEK, 1, NOW) == pytest.approx(0.6 * 0.95)
    assert importance(created, None, 1, NOW) == pytest.approx(0.6 * 0.95 ** (365 / 7))


def test_a_time_after_now_counts_as_no_time() -> None:
    assert importance(NOW + 30 * DAY, None, 0, NOW) == 0.5
    assert importance(NOW - DAY, NOW + DAY, 2, NOW) == pytest.approx(0.7)


def test_centuries_later_it_is_zero_not_an_error() -> None:
    assert importance(datetime(1, 1, 1, tzinfo=UTC), None, 0, NOW) == pytest.approx(0.0)


def test_negative_access_count_is_refused() -> None:
    with pytest.raises(ValueError, match="access_count"):
        importance(NOW, None, -1, NOW)


offsets = st.floats(min_value=-100.0, max_value=20_000.0)
accesses = st.integers(min_value=0, max_value=30)


@given(offsets, st.none() | offsets, accesses, st.floats(min_value=0.0, max_value=5_000.0))
def test_importance_never_grows_with_time(
    created_days: float, access_days: float | None, n: int, wait: float
) -> None:
    created = NOW - timedelta(days=created_days)
    last = None if access_days is None else NOW - timedelta(days=access_days)
    later = NOW + timedelta(days=wait)
    assert importance(created, last, n, later) <= importance(created, last, n, NOW)


@given(offsets, st.none() | offsets, accesses, accesses)
def test_importance_never_falls_with_accesses(
    created_days: float, access_days: float | None, a: int, b: int
) -> None:
    created = NOW - timedelta(days=created_days)
    last = None if access_days is None else NOW - timedelta(days=access_days)
    low, high = sorted((a, b))
    assert importance(created, last, low, NOW) <= importance(created, last, high, NOW)


@given(offsets, st.none() | offsets, st.integers(min_value=0, max_value=10**6))
def test_importance_is_in_range(created_days: float, access_days: float | None, n: int) -> None:
    created = NOW - timedelta(days=created_days)
    last = None if access_days is None else NOW - timedelta(days=access_days)
    assert 0.0 <= importance(created, last, n, NOW) <= 1.0


# CapacityManager: at 90% of the limit, the least important 10% are compressed


def items(n: int) -> list[tuple[str, float, bool]]:
    return [(f"m{i:05d}", i / n, True) for i in range(n)]


@pytest.mark.parametrize(("count", "triggered"), [(8999, False), (9000, True), (9001, True)])
def test_capacity_trigger_boundary(count: int, triggered: bool) -> None:
    plan = plan_capacity(items(1200), count, DEFAULT_CAPACITY)
    assert plan.triggered == triggered
    assert plan.usage == count / DEFAULT_CAPACITY
    assert len(plan.to_compress) == (1000 if triggered else 0)


def test_capacity_plan_picks_the_least_important() -> None:
    plan = plan_capacity(items(1200), 9500, DEFAULT_CAPACITY)
    assert plan.to_compress == tuple(f"m{i:05d}" for i in range(1000))
    assert plan.reason == (
        "9500 of 10000 memories stored (95.0%), at least 90%: "
        "compressing the 1000 least important of 1200 eligible"
    )


def test_capacity_below_trigger_reason() -> None:
    plan = plan_capacity(items(3), 5, 10)
    assert plan == CapacityPlan(10, 5, 0.5, False, (), "5 of 10 memories stored (50.0%), below 90%")


@pytest.mark.parametrize(("limit", "share"), [(10, 1), (15, 2), (30, 3), (31, 4), (100, 10)])
def test_capacity_share_rounds_up(limit: int, share: int) -> None:
    plan = plan_capacity(items(200), limit, limit)
    assert len(plan.to_compress) == share


def test_ineligible_memories_are_never_chosen() -> None:
    scored = [("a", 0.0, False), ("b", 0.9, True), ("c", 0.1, True), ("d", 0.05, False)]
    plan = plan_capacity(scored, 20, 20)
    assert plan.to_compress == ("c", "b")


def test_ties_are_broken_by_id() -> None:
    scored = [("z", 0.2, True), ("b", 0.2, True), ("m", 0.2, True), ("a", 0.4, True)]
    assert plan_capacity(scored, 20, 20).to_compress == ("b", "m")


def test_fewer_eligible_than_wanted_takes_them_all() -> None:
    plan = plan_capacity([("a", 0.1, True), ("b", 0.2, False)], 100, 100)
    assert plan.to_compress == ("a",)
    assert plan.reason.endswith("compressing all 1 eligible (wanted 10)")


@pytest.mark.parametrize("limit", [0, -1])
def test_no_limit_never_triggers(limit: int) -> None:
    plan = plan_capacity(items(5), 10**9, limit)
    assert not plan.triggered
    assert plan.to_compress == ()
    assert plan.usage == 0.0
    assert plan.reason == "1000000000 memories stored, no limit"


scored_items = st.lists(
    st.tuples(
        st.text(alphabet="abcdef", min_size=1, max_size=4),
        st.floats(min_value=0.0, max_value=1.0),
        st.booleans(),
    ),
    max_size=40,
    unique_by=lambda t: t[0],
)


@given(
    scored_items,
    st.integers(min_value=0, max_value=200),
    st.integers(min_value=-5, max_value=200),
)
def test_capacity_plan_properties(
    scored: list[tuple[str, float, bool]], count: int, limit: int
) -> None:
    plan = plan_capacity(scored, count, limit)
    chosen = set(plan.to_compress)
    eligible = {ident: s for ident, s, ok in scored if ok}
    assert chosen <= set(eligible)
    assert len(plan.to_compress) == len(chosen)
    assert plan.triggered == (limit > 0 and count * 10 >= limit * 9)
    if not plan.triggered:
        assert not chosen
        return
    want = -(-limit // 10)
    assert len(chosen) == min(want, len(eligible))
    rest = [s for ident, s in eligible.items() if ident not in chosen]
    assert all(eligible[c] <= r for c in chosen for r in rest)


# memory_compression_rate


@pytest.mark.parametrize(
    ("original", "stored", "rate"),
    [
        (6000, 500, 5500 / 6000),  # spec 004 §2.3: 6KB → 0.5KB, 91.7%
        (100, 30, 0.7),
        (100, 100, 0.0),
        (100, 0, 1.0),
        (100, 150, 0.0),
        (100, -5, 1.0),
        (0, 0, 0.0),
        (0, 10, 0.0),
        (-10, 5, 0.0),
    ],
)
def test_compression_rate(original: int, stored: int, rate: float) -> None:
    assert compression_rate(original, stored) == pytest.approx(rate)


@given(st.integers(min_value=-10, max_value=10**9), st.integers(min_value=-10, max_value=10**9))
def test_compression_rate_in_range(original: int, stored: int) -> None:
    assert 0.0 <= compression_rate(original, stored) <= 1.0
