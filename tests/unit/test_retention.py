"""Retention math of spec 000.

Sections 数理モデル, 減衰係数, 想起による記憶強化, レベル定義, アーカイブ層.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kioku.config.schema import CategoryRange, Config, LevelsConfig, RecallConfig
from kioku.core.retention import (
    batches_until_below,
    decay_coefficient,
    initial_memory_days,
    level_for_score,
    next_batch_after,
    reinforce,
    retention_score,
    revival_score,
)

CFG = Config()
RANGES = CFG.retention.decay_by_category
TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YORK = ZoneInfo("America/New_York")

intensities = st.integers(min_value=0, max_value=100)
coefficients = st.floats(min_value=0.5, max_value=0.999)
days = st.floats(min_value=0.0, max_value=5000.0)


# 減衰シミュレーション（減衰係数0.995）: the spec's table, to its rounding.
DECAY_TABLE = {
    100: (86, 64, 41, 16),
    50: (43, 32, 20, 8),
    35: (30, 22, 14, 6),
    20: (17, 13, 8, 3),
}


@pytest.mark.parametrize(("intensity", "expected"), sorted(DECAY_TABLE.items()))
def test_spec_decay_simulation_table(intensity: int, expected: tuple[int, ...]) -> None:
    got = tuple(math.floor(retention_score(intensity, 0.995, d) + 0.5) for d in (30, 90, 180, 365))
    assert got == expected


def test_spec_average_memory_falls_below_archive_threshold_in_about_a_year() -> None:
    # 基本減衰係数: "平均的な感情強度（35）の記憶は約1年で消去閾値を下回る"
    n = batches_until_below(35, 0.995, 0.0, CFG.levels.level3_threshold)
    assert n is not None
    assert 330 <= n <= 400


@pytest.mark.parametrize(
    ("category", "intensity", "expected"),
    [
        ("casual", 0, 0.70),
        ("casual", 50, 0.75),
        ("casual", 100, 0.80),  # the spec's example table for casual
        ("work", 50, 0.885),
        ("decision", 100, 0.97),
        ("emotional", 100, 0.999),
        ("unknown-category", 80, 0.995),  # base coefficient when unknown
    ],
)
def test_decay_coefficient_examples(category: str, intensity: int, expected: float) -> None:
    assert decay_coefficient(category, intensity, RANGES, 0.995) == pytest.approx(expected)


@given(st.sampled_from(sorted(RANGES)), intensities, intensities)
def test_decay_coefficient_stays_in_range_and_grows_with_intensity(
    category: str, a: int, b: int
) -> None:
    rng = RANGES[category]
    ca = decay_coefficient(category, a, RANGES, 0.995)
    cb = decay_coefficient(category, b, RANGES, 0.995)
    assert rng.min - 1e-12 <= ca <= rng.max + 1e-12
    if a <= b:
        assert ca <= cb + 1e-12


@given(intensities, coefficients, days, st.floats(min_value=0.0, max_value=100.0))
def test_retention_bounded_and_non_increasing_in_days(
    intensity: int, coefficient: float, d: float, extra: float
) -> None:
    now = retention_score(intensity, coefficient, d)
    later = retention_score(intensity, coefficient, d + extra)
    assert 0.0 <= later <= now <= intensity


@given(intensities, coefficients)
def test_retention_at_day_zero_is_the_intensity(intensity: int, coefficient: float) -> None:
    assert retention_score(intensity, coefficient, 0.0) == intensity


def test_initial_memory_days_spec_examples() -> None:
    # "18:00に生成 → 翌3:00まで9時間 → 0.375", "01:00に生成 → 当日3:00まで2時間 → 0.083"
    assert initial_memory_days(datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO), 3) == pytest.approx(
        0.375
    )
    assert initial_memory_days(datetime(2026, 1, 18, 1, 0, tzinfo=TOKYO), 3) == pytest.approx(
        2 / 24
    )
    # Exactly at the batch hour: a whole day until the next one.
    assert initial_memory_days(datetime(2026, 1, 18, 3, 0, tzinfo=TOKYO), 3) == pytest.approx(1.0)


def test_initial_memory_days_counts_real_hours_across_daylight_saving() -> None:
    # New York springs forward at 02:00 on 2026-03-08: 22:00 → 03:00 is 4 real hours.
    created = datetime(2026, 3, 7, 22, 0, tzinfo=NEW_YORK)
    assert next_batch_after(created, 3).utcoffset() == timedelta(hours=-4)
    assert initial_memory_days(created, 3) == pytest.approx(4 / 24)


@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.sampled_from([TOKYO, NEW_YORK, ZoneInfo("UTC")]),
    ),
    st.integers(min_value=0, max_value=23),
)
def test_initial_memory_days_is_within_one_day(created: datetime, hour: int) -> None:
    value = initial_memory_days(created, hour)
    # A day plus or minus the daylight-saving hour.
    assert 0.0 < value <= 1.0 + 1 / 24 + 1e-9
    nxt = next_batch_after(created, hour)
    assert nxt > created
    assert nxt.hour == hour or nxt.fold or nxt.dst() != created.dst()


@pytest.mark.parametrize(("before", "after"), [(10.0, 5.0), (3.0, 1.5)])
def test_recall_halves_memory_days_spec_examples(before: float, after: float) -> None:
    out = reinforce(before, 0.9, 0, RecallConfig(), 0.999)
    assert out.memory_days == pytest.approx(after)
    assert out.decay_coefficient == pytest.approx(0.92)
    assert out.recall_count == 1


@given(days, st.floats(min_value=0.5, max_value=0.9999), st.integers(0, 1000))
def test_reinforce_caps_the_coefficient_and_never_lowers_it(
    d: float, coefficient: float, count: int
) -> None:
    out = reinforce(d, coefficient, count, RecallConfig(), 0.999)
    assert out.decay_coefficient <= max(0.999, coefficient)
    assert out.decay_coefficient >= coefficient
    assert out.memory_days <= d
    assert out.recall_count == count + 1


@pytest.mark.parametrize(
    ("score", "level"),
    [(100, 1), (50.01, 1), (50, 2), (20.01, 2), (20, 3), (5.01, 3), (5, 4), (0, 4)],
)
def test_level_thresholds(score: float, level: int) -> None:
    assert level_for_score(score, LevelsConfig()) == level


@given(st.floats(min_value=0, max_value=100), st.floats(min_value=0, max_value=100))
def test_level_is_monotone_in_score(a: float, b: float) -> None:
    assume(a <= b)
    assert level_for_score(a, LevelsConfig()) >= level_for_score(b, LevelsConfig())


@given(
    st.integers(min_value=1, max_value=100),
    st.floats(min_value=0.5, max_value=0.999),
    st.floats(min_value=0.0, max_value=50.0),
    st.sampled_from([50.0, 20.0, 5.0]),
)
def test_batches_until_below_is_the_first_batch_at_or_below(
    intensity: int, coefficient: float, d: float, floor: float
) -> None:
    n = batches_until_below(intensity, coefficient, d, floor)
    assert n is not None
    if n == 0:
        assert retention_score(intensity, coefficient, d) <= floor
    else:
        assert retention_score(intensity, coefficient, d + n) <= floor
        assert n == 1 or retention_score(intensity, coefficient, d + n - 1) > floor


def test_batches_until_below_never_for_a_coefficient_of_one() -> None:
    assert batches_until_below(80, 1.0, 3.0, 50) is None


def test_revival_score_decays_with_archive_days_and_keeps_the_margin() -> None:
    archived = datetime(2026, 1, 1, 3, 0, tzinfo=TOKYO)
    fresh = revival_score(60, archived, archived + timedelta(days=10), 0.995, 5.0, 3.0)
    assert fresh == pytest.approx(60 * 0.995**10)
    old = revival_score(10, archived, archived + timedelta(days=3000), 0.995, 5.0, 3.0)
    assert old == 8.0  # level3_threshold + revival_min_margin


@given(intensities, st.integers(min_value=0, max_value=5000))
def test_revival_score_never_below_the_minimum(intensity: int, archived_days: int) -> None:
    archived = datetime(2026, 1, 1, tzinfo=TOKYO)
    now = archived + timedelta(days=archived_days)
    score = revival_score(intensity, archived, now, 0.995, 5.0, 3.0)
    assert score >= 8.0
    assert score <= max(intensity, 8.0)


def test_category_range_type_is_what_config_uses() -> None:
    assert isinstance(RANGES["work"], CategoryRange)
