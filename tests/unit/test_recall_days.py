"""Days a query names, and a memory's coverage in its lexical match (recall scoring)."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.presets import PRESETS
from kioku.service.recall.periods import Period, named_days
from kioku.service.recall.scoring import COVERAGE_SHARE, match_of

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2024, 3, 10, 12, 0, tzinfo=TOKYO)
WEIGHTS = PRESETS["balanced"]


def _days(query: str, now: datetime = NOW) -> list[str]:
    return [p.start.date().isoformat() for p in named_days(query, now)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What dish did Nate make on 9 November, 2022?", ["2022-11-09"]),
        ("What painting did she show on October 13, 2023?", ["2023-10-13"]),
        ("the 3rd of March 2021", ["2021-03-03"]),
        ("On May 3rd we moved.", ["2023-05-03"]),  # no year: the latest May begun by now
        ("What happened on March 2?", ["2024-03-02"]),
        ("What movie did Tim watch on 8th December, 2023?", ["2023-12-08"]),
        ("2023年5月3日に何をした？", ["2023-05-03"]),
        ("1月5日の会議", ["2024-01-05"]),
        ("between August 11 and August 15 2023", ["2023-08-11", "2023-08-15"]),
    ],
)
def test_named_days(query: str, expected: list[str]) -> None:
    assert _days(query) == expected
    for period in named_days(query, NOW):
        assert period.end - period.start == timedelta(days=1)
        assert period.start.tzinfo is TOKYO


@pytest.mark.parametrize(
    "query",
    [
        "What did Tim share in January 2024?",  # a month, no day
        "May I ask you something?",
        "2023年5月に何をした？",
        "February 30, 2023",  # no such day
        "How are the kids?",
        "",
    ],
)
def test_nothing_named(query: str) -> None:
    assert named_days(query, NOW) == ()


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2030, 12, 31)))
def test_every_way_of_writing_a_day_names_it(day: date) -> None:
    month = calendar.month_name[day.month]
    start = datetime(day.year, day.month, day.day, tzinfo=TOKYO)
    expected = (Period(start, start + timedelta(days=1)),)
    for query in (
        f"on {month} {day.day}, {day.year}",
        f"on {day.day} {month}, {day.year}",
        f"the {day.day}th of {month} {day.year}",
        f"{day.year}年{day.month}月{day.day}日",
    ):
        assert named_days(query, NOW) == expected, query


@given(
    st.floats(-1.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_match_with_coverage(similarity: float, lexical: float, low: float, high: float) -> None:
    low, high = sorted((low, high))
    plain = match_of(similarity, lexical, WEIGHTS)
    assert plain == pytest.approx(
        (WEIGHTS.vector * max(0.0, similarity) + WEIGHTS.lexical * lexical)
        / (WEIGHTS.vector + WEIGHTS.lexical)
    )
    # Coverage takes its share of the lexical match: in [0, 1], rising with it, and the
    # same as the plain match when it equals the normalised BM25.
    a = match_of(similarity, lexical, WEIGHTS, low)
    b = match_of(similarity, lexical, WEIGHTS, high)
    assert 0.0 <= a <= b <= 1.0
    assert b - a == pytest.approx(
        WEIGHTS.lexical * COVERAGE_SHARE * (high - low) / (WEIGHTS.vector + WEIGHTS.lexical)
    )
    assert match_of(similarity, lexical, WEIGHTS, lexical) == pytest.approx(plain)
