"""The batch and a clock gone wrong: automatic catch-up is bounded, a clock that went
backwards changes nothing (kioku additions around spec 000's 圧縮処理のスケジューリング)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.model import Level
from kioku.errors import KiokuError
from kioku.service.lifecycle.batch import LAST_DAY_KEY, LAST_RUN_KEY, check_ahead

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock, warnings: list[str]) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock, on_warning=warnings.append) as k:
        yield k


def _memories(k: Kioku) -> list[str]:
    return [
        k.remember("our wedding day", "we cried", intensity=95, category="emotional").id,
        k.remember("the deploy plan", "blue-green", intensity=60, category="work").id,
    ]


def test_an_automatic_batch_catches_up_at_most_the_configured_days(
    kioku: Kioku, clock: FixedClock, warnings: list[str]
) -> None:
    ids = _memories(kioku)
    kioku.batch()  # 2026-04-01
    days_before = {m: kioku.get(m).memory_days for m in ids}
    clock.advance(timedelta(days=100))
    report = kioku.batch(auto=True)
    assert len(report.days) == 31
    assert report.left_due == 69
    assert report.last_day == "2026-05-02"
    assert kioku.store.get_state(LAST_DAY_KEY) == "2026-05-02"
    [message] = warnings
    assert "`kioku batch`" in message
    assert "batch.max_auto_catch_up_days" in message
    assert report.warnings == [message]
    # 31 days applied; the first is the memory's first batch (made after 04-01's).
    assert kioku.get(ids[0]).memory_days == pytest.approx(days_before[ids[0]] + 30)
    # By hand, the rest is applied.
    rest = kioku.batch()
    assert len(rest.days) == 69
    assert rest.left_due == 0


def test_a_clock_decades_ahead_ages_an_automatic_batch_by_the_limit_only(
    kioku: Kioku, clock: FixedClock
) -> None:
    ids = _memories(kioku)
    kioku.batch()
    report = kioku.batch(now=datetime(2100, 1, 1, 12, 0, tzinfo=TZ), auto=True)
    assert len(report.days) == 31
    wedding = kioku.get(ids[0])
    assert wedding.current_level == Level.FULL  # not archived with the rest of the store
    assert kioku.store.get_state(LAST_DAY_KEY) == "2026-05-02"


def test_the_limit_is_a_setting(tmp_path: Path, clock: FixedClock) -> None:
    env = {"KIOKU_BATCH__MAX_AUTO_CATCH_UP_DAYS": "3"}
    with Kioku.open(tmp_path / "h", env=env, clock=clock, on_warning=lambda _: None) as k:
        _memories(k)
        k.batch()
        clock.advance(timedelta(days=10))
        assert len(k.batch(auto=True).days) == 3


def test_a_clock_that_went_backwards_changes_nothing(
    kioku: Kioku, clock: FixedClock, warnings: list[str]
) -> None:
    ids = _memories(kioku)
    clock.advance(timedelta(days=10))
    kioku.batch()
    before = [kioku.get(m) for m in ids]
    last_run = kioku.store.get_state(LAST_RUN_KEY)
    report = kioku.batch(now=START + timedelta(days=3))
    assert report.status == "clock_behind"
    assert report.days == []
    assert [kioku.get(m) for m in ids] == before
    assert kioku.store.get_state(LAST_DAY_KEY) == "2026-04-11"
    assert kioku.store.get_state(LAST_RUN_KEY) == last_run
    assert "before the last batch day (2026-04-11)" in warnings[-1]
    # Once the clock is right again, the next day is applied as usual.
    assert [d.day for d in kioku.batch(now=START + timedelta(days=11)).days] == ["2026-04-12"]


def test_a_batch_more_than_a_day_ahead_needs_force() -> None:
    now = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)
    check_ahead(now + timedelta(hours=20), now, force=False)
    check_ahead(now + timedelta(days=400), now, force=True)
    with pytest.raises(KiokuError) as info:
        check_ahead(datetime(2100, 1, 1, tzinfo=TZ), now, force=False)
    assert info.value.exit_code == 2
    assert "--force" in str(info.value)
    assert "\n" not in str(info.value)


def test_due_days_stop_at_the_limit_from_the_last_day(kioku: Kioku, clock: FixedClock) -> None:
    _memories(kioku)
    kioku.batch()
    clock.advance(timedelta(days=40))
    dry = kioku.batch(dry_run=True, auto=True)
    assert dry.due[0] == "2026-04-02"
    assert date.fromisoformat(dry.due[-1]) == date(2026, 4, 1) + timedelta(days=31)
    assert kioku.store.get_state(LAST_DAY_KEY) == "2026-04-01"  # a dry run writes nothing
