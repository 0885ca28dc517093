"""Periods a query names (recall's date references): parsing and membership."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.service.recall.periods import GRACE, Period, in_period, named_periods

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2024, 3, 10, 12, 0, tzinfo=TOKYO)


def _days(query: str, now: datetime = NOW) -> list[tuple[str, str]]:
    return [
        (p.start.date().isoformat(), p.end.date().isoformat()) for p in named_periods(query, now)
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Tim share in January 2024?", [("2024-01-01", "2024-02-01")]),
        ("When did Melanie go camping in June?", [("2023-06-01", "2023-07-01")]),
        ("What happened in March?", [("2024-03-01", "2024-04-01")]),
        ("What did we plan last March?", [("2023-03-01", "2023-04-01")]),
        ("On May 3, 2023 she moved.", [("2023-05-01", "2023-06-01")]),
        ("the 3rd of March 2021", [("2021-03-01", "2021-04-01")]),
        ("What did she do in 2022?", [("2022-01-01", "2023-01-01")]),
        ("What did we talk about last week?", [("2024-02-26", "2024-03-04")]),
        ("last month", [("2024-02-01", "2024-03-01")]),
        ("Where did we go last year?", [("2023-01-01", "2024-01-01")]),
        ("2023年5月に何をした？", [("2023-05-01", "2023-06-01")]),
        ("8月の旅行", [("2023-08-01", "2023-09-01")]),
        ("2022年の話", [("2022-01-01", "2023-01-01")]),
        ("先週のこと", [("2024-02-26", "2024-03-04")]),
        ("先月の会議", [("2024-02-01", "2024-03-01")]),
        ("去年の夏", [("2023-01-01", "2024-01-01")]),
    ],
)
def test_named_periods(query: str, expected: list[tuple[str, str]]) -> None:
    assert _days(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "May I ask you something?",
        "March on, soldiers!",
        "We will march in june",  # not capitalised: not a month
        "version 1.2023 of the tool",
        "call 555-2024",
        "How are the kids?",
        "",
    ],
)
def test_nothing_named(query: str) -> None:
    assert named_periods(query, NOW) == ()


def test_january_last_month_is_december() -> None:
    assert _days("last month", datetime(2024, 1, 5, tzinfo=TOKYO)) == [("2023-12-01", "2024-01-01")]


def test_several_periods_in_order() -> None:
    assert _days("between August 11 and September 2 2023") == [
        ("2023-08-01", "2023-09-01"),
        ("2023-09-01", "2023-10-01"),
    ]


def test_in_period_with_grace() -> None:
    [june] = named_periods("in June 2023", NOW)
    assert in_period(datetime(2023, 6, 1, tzinfo=TOKYO), (june,))
    assert in_period(datetime(2023, 7, 1, tzinfo=TOKYO) + GRACE - timedelta(seconds=1), (june,))
    assert not in_period(datetime(2023, 7, 1, tzinfo=TOKYO) + GRACE, (june,))
    assert not in_period(datetime(2023, 5, 31, 23, 59, tzinfo=TOKYO), (june,))
    assert not in_period(datetime(2023, 6, 15, tzinfo=TOKYO), ())


_moments = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(TOKYO)
)


@given(_moments, st.integers(1, 12), st.integers(1900, 2099))
def test_a_month_and_year_hold_that_month(now: datetime, month: int, year: int) -> None:
    [period] = named_periods(f"in {calendar.month_name[month]} {year}", now)
    assert (period.start.year, period.start.month, period.start.day) == (year, month, 1)
    assert period.start < period.end <= period.start + timedelta(days=31)
    assert (period.end.month, period.end.day) == (month % 12 + 1, 1)


@given(_moments, st.integers(1, 12))
def test_a_month_alone_is_the_latest_begun(now: datetime, month: int) -> None:
    [period] = named_periods(f"in {calendar.month_name[month]}", now)
    assert period.start.month == month
    assert period.start <= now
    assert period.start.replace(year=period.start.year + 1) > now  # the latest one
    [ended] = named_periods(f"last {calendar.month_name[month]}", now)
    assert ended.end <= now < ended.end.replace(year=ended.end.year + 1)


@given(_moments, st.sampled_from(["last week", "last month", "last year", "先週", "先月", "去年"]))
def test_the_last_unit_ends_before_now(now: datetime, query: str) -> None:
    [period] = named_periods(query, now)
    assert period.start < period.end <= now
    assert now - period.end <= timedelta(days=366)


@given(st.lists(st.tuples(_moments, st.integers(1, 400)), min_size=1), st.integers(0, 60))
def test_in_period_holds_each_span_and_a_longer_grace_keeps_it(
    spans: list[tuple[datetime, int]], grace_days: int
) -> None:
    periods = tuple(Period(start, start + timedelta(days=days)) for start, days in spans)
    grace = timedelta(days=grace_days)
    for p in periods:
        assert in_period(p.start, periods, grace)
        assert in_period(p.end + grace - timedelta(seconds=1), periods, grace)
        assert in_period(p.end + grace - timedelta(seconds=1), periods, grace + timedelta(days=1))
    latest = max(p.end for p in periods) + grace
    assert not in_period(latest, periods, grace)
    assert not in_period(min(p.start for p in periods) - timedelta(seconds=1), periods, grace)
