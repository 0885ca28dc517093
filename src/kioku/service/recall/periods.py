"""Periods a query names (日付の参照): recall favours the memories made in them.

"What did Tim do in January 2024?", "When did Melanie go camping in June?", "last week",
「2023年5月」, 「先月」: a query that names a month, a year or a recent week, month or year
names a period, and a memory made in it (or within :data:`GRACE` after it: what happened is
often told a little later) has its time factor raised by :data:`WEIGHT` in recall (see
:func:`~kioku.service.recall.scoring.score_of`; not when both recency weights are 0, so
time plays no part in the ranking). Only the order of the candidates changes:
a period never makes a memory a candidate, nor qualifies it.

A query that names a day ("on 9 November, 2022", "May 3rd", "the 3rd of March 2021",
「2023年5月3日」) names that day as well (:func:`named_days`): a memory made on it, or within
:data:`DAY_GRACE` after it, has its time factor raised by :data:`DAY_WEIGHT` more, and recall
reads the memories made then as candidates too (see :mod:`.pipeline`); still, none of them
qualifies by its day.

A month named without a year is the latest such month begun by ``now`` ("last June": the
latest ended by then); a year alone is written with four digits from 1900 to 2099. English
month names count when capitalised, and "May" and "March" only next to a day, a year or a
word like "in" or "last", so "May I ask" and "March on" name nothing.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from kioku.records import Record

__all__ = [
    "DAY_GRACE",
    "DAY_WEIGHT",
    "GRACE",
    "WEIGHT",
    "Period",
    "in_period",
    "named_days",
    "named_periods",
]

#: How much more a memory made in a named period counts (its time factor × 1 + this).
WEIGHT: Final = 0.2
#: How long after a period a memory still counts as made in it.
GRACE: Final = timedelta(days=14)

#: How much more again a memory made on a named day counts, and how long after the day it
#: still does (what happened is told that day or the next).
DAY_WEIGHT: Final = 1.0
DAY_GRACE: Final = timedelta(days=1)

_MONTHS: Final = {name: number for number, name in enumerate(calendar.month_name) if name}
_MONTH_EN: Final = re.compile(
    r"(?:\b(?P<before>(?i:in|of|on|since|during|until|last|early|late|mid|by))[\s-]+)?"
    r"\b(?P<month>" + "|".join(_MONTHS) + r")\b"
    r"(?:\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b)?,?(?:\s+(?P<year>(?:19|20)\d\d)\b)?"
)
_YEAR_EN: Final = re.compile(r"(?<![\d.,:/-])\b(?:19|20)\d\d\b(?![.,:/-]?\d)")
_MONTH_JA: Final = re.compile(r"(?:(?P<year>(?:19|20)\d\d)年)?(?<!\d)(?P<month>1[0-2]|0?[1-9])月")
_YEAR_JA: Final = re.compile(r"(?<!\d)(?P<year>(?:19|20)\d\d)年(?!\d{1,2}月)")
_LAST_EN: Final = re.compile(r"\blast (?P<unit>week|month|year)\b", re.IGNORECASE)
_LAST_JA: Final = re.compile(r"(?P<unit>先週|先月|去年|昨年)")
_UNITS_JA: Final = {"先週": "week", "先月": "month", "去年": "year", "昨年": "year"}
_DAY_FIRST: Final = re.compile(
    r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<month>" + "|".join(_MONTHS) + r")\b"
    r",?(?:\s+(?P<year>(?:19|20)\d\d)\b)?"
)
_DAY_JA: Final = re.compile(
    r"(?:(?P<year>(?:19|20)\d\d)年)?(?<!\d)(?P<month>1[0-2]|0?[1-9])月"
    r"(?P<day>3[01]|[12]\d|0?[1-9])日"
)
#: Month names that are also common words: they need a day, a year or a word before them.
_AMBIGUOUS: Final = frozenset({"May", "March"})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Period(Record):
    """From ``start`` (included) to ``end`` (excluded)."""

    start: datetime
    end: datetime


def _month(year: int, month: int, now: datetime) -> Period:
    start = now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=year + 1, month=1) if month == 12 else start.replace(month=month + 1)
    return Period(start, end)


def _year(year: int, now: datetime) -> Period:
    start = now.replace(year=year, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return Period(start, start.replace(year=year + 1))


def _latest(month: int, now: datetime, ended: bool) -> Period:
    """The latest ``month`` begun (``ended``: ended) by ``now``."""
    period = _month(now.year, month, now)
    if period.start > now or (ended and period.end > now):
        period = _month(now.year - 1, month, now)
    return period


def _last(unit: str, now: datetime) -> Period:
    """The calendar week (from Monday), month or year before the one ``now`` is in."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        start = midnight - timedelta(days=now.weekday() + 7)
        return Period(start, start + timedelta(days=7))
    if unit == "month":
        return (
            _month(now.year - 1, 12, now)
            if now.month == 1
            else _month(now.year, now.month - 1, now)
        )
    return _year(now.year - 1, now)


def named_periods(query: str, now: datetime) -> tuple[Period, ...]:
    """The periods ``query`` names, in ``now``'s time zone, in the order named."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    for m in _MONTH_EN.finditer(query):
        name, before, day, year = m["month"], m["before"], m["day"], m["year"]
        if name in _AMBIGUOUS and not (before or day or year):
            continue
        month = _MONTHS[name]
        period = (
            _month(int(year), month, now)
            if year
            else _latest(month, now, ended=(before or "").lower() == "last")
        )
        found.append((m.start(), period))
        taken.append(m.span())
    for m in _MONTH_JA.finditer(query):
        month, year = int(m["month"]), m["year"]
        found.append(
            (m.start(), _month(int(year), month, now) if year else _latest(month, now, False))
        )
        taken.append(m.span())
    for pattern in (_YEAR_EN, _YEAR_JA):
        for m in pattern.finditer(query):
            if not any(a <= m.start() < b for a, b in taken):
                found.append((m.start(), _year(int(m.group(0)[:4]), now)))
                taken.append(m.span())
    for m in _LAST_EN.finditer(query):
        found.append((m.start(), _last(m["unit"].lower(), now)))
    for m in _LAST_JA.finditer(query):
        found.append((m.start(), _last(_UNITS_JA[m["unit"]], now)))
    return tuple(period for _, period in sorted(found, key=lambda item: item[0]))


def named_days(query: str, now: datetime) -> tuple[Period, ...]:
    """The days ``query`` names with their month, in ``now``'s time zone, in the order named:
    "May 3, 2023", "May 3rd", "3 May 2023", "the 3rd of May", 「2023年5月3日」, 「5月3日」. A
    day named without a year is in the latest such month begun by ``now``; a day its month
    does not have ("February 30") names nothing."""
    named: list[tuple[int, int, int, str | None]] = []
    for m in _MONTH_EN.finditer(query):
        if m["day"]:
            named.append((m.start(), _MONTHS[m["month"]], int(m["day"]), m["year"]))
    for m in _DAY_FIRST.finditer(query):
        named.append((m.start(), _MONTHS[m["month"]], int(m["day"]), m["year"]))
    for m in _DAY_JA.finditer(query):
        named.append((m.start(), int(m["month"]), int(m["day"]), m["year"]))
    found: list[tuple[int, Period]] = []
    for at, month, day, year in sorted(named):
        period = _month(int(year), month, now) if year else _latest(month, now, False)
        if 1 <= day <= calendar.monthrange(period.start.year, month)[1]:
            start = period.start.replace(day=day)
            found.append((at, Period(start, start + timedelta(days=1))))
    return tuple(period for _, period in found)


def in_period(created: datetime, periods: tuple[Period, ...], grace: timedelta = GRACE) -> bool:
    """Whether ``created`` falls in one of ``periods`` or within ``grace`` after it."""
    return any(p.start <= created < p.end + grace for p in periods)
