"""Which batch days are due (圧縮処理のスケジューリング), pure.

One batch per calendar day, at ``schedule_hour`` local time. A batch day is named by its date;
the store remembers the last date applied. When days were missed (a laptop asleep for a week),
every missed day is applied in order, so memories age by the days that really passed — the
spec's fallback runs a single batch instead; kioku catches up because a week of forgetting
squeezed into one day would make the scores lie about time.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Final

__all__ = ["MAX_CATCH_UP_DAYS", "batch_moment", "due_days", "is_overdue", "latest_due_day"]

#: The most missed days one run catches up; older ones are skipped with a warning by the caller.
MAX_CATCH_UP_DAYS: Final = 3660


def batch_moment(day: date, schedule_hour: int, like: datetime) -> datetime:
    """The batch time of ``day``: ``schedule_hour`` o'clock, wall time in ``like``'s zone."""
    if like.tzinfo is None:
        raise ValueError("like must be timezone-aware")
    naive = datetime(day.year, day.month, day.day, schedule_hour)
    tz = like.tzinfo
    localize = getattr(tz, "localize", None)  # pytz-style zones; zoneinfo needs no help
    if callable(localize):
        result: datetime = localize(naive)
        return result
    return naive.replace(tzinfo=tz)


def latest_due_day(now: datetime, schedule_hour: int) -> date:
    """The most recent day whose batch time is at or before ``now``."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    today = now.date()
    return today if now.hour >= schedule_hour else today - timedelta(days=1)


def due_days(last_done: date | None, now: datetime, schedule_hour: int) -> list[date]:
    """Days to apply, oldest first: every day after ``last_done`` up to the latest due day.

    A store that never ran a batch starts with the latest due day only (there is nothing to
    catch up on: its memories were given their first ``memory_days`` when they were made).
    """
    latest = latest_due_day(now, schedule_hour)
    if last_done is None:
        return [latest]
    if last_done >= latest:
        return []
    first = max(last_done + timedelta(days=1), latest - timedelta(days=MAX_CATCH_UP_DAYS - 1))
    return [first + timedelta(days=n) for n in range((latest - first).days + 1)]


def is_overdue(last_run: datetime | None, now: datetime, interval_hours: float) -> bool:
    """The fallback trigger: no batch yet, or the last one more than ``interval_hours`` ago."""
    if last_run is None:
        return True
    return (now - last_run).total_seconds() >= interval_hours * 3600.0
