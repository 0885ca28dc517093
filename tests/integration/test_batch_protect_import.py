"""Protected memories over a year of batches, and imported history aging from its own time
(spec 000 保護記憶, memory_days の初期値計算), on a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.model import Level
from kioku.core.retention import initial_memory_days, next_batch_after

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)
BIRTHDAY = "覚えておいて：来週の木曜は母の誕生日"

WEAKER = [
    "母の誕生日のプレゼント、花にするかケーキにするか迷っている",
    "誕生日ケーキの予約は何日前までにすればいい？",
    "母に誕生日のメッセージを送る文面を考えてほしい",
    "友達の誕生日会で何を話せばいいか相談した",
    "母と誕生日に行くレストランを探している",
    "誕生日の花束の予算はどのくらいが普通？",
]


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as k:
        yield k


def test_a_protected_memory_is_recalled_first_after_a_year(kioku: Kioku, clock: FixedClock) -> None:
    protected, _ = kioku.remember_turn(
        BIRTHDAY, "わかりました。来週の木曜日がお母様の誕生日ですね。"
    )
    assert protected.protected
    first_score = protected.retention_score
    kioku.batch()  # the store's first batch day (2026-04-01), then a year of them
    clock.advance(timedelta(days=365))
    report = kioku.batch()
    assert len(report.days) == 365
    # Six weaker matches made near the end of the year, fresh but less intense.
    for text in WEAKER:
        kioku.remember(text, "いくつか案を出した。", intensity=30, category="casual")
    clock.advance(timedelta(days=1))
    kioku.batch()
    after = kioku.get(protected.id)
    assert after.current_level == Level.FULL
    assert after.retention_score >= first_score
    assert kioku.explain(after).note.startswith("protected: does not fade")
    result = kioku.recall("母の誕生日っていつだっけ？", mark=False)
    assert result.items, "nothing recalled"
    assert result.items[0].memory.id == protected.id
    assert "母の誕生日" in result.block.split("\n")[2]


def test_an_unprotected_memory_returns_to_the_curve_of_its_age(
    kioku: Kioku, clock: FixedClock
) -> None:
    m = kioku.remember("a decision", "we chose SQLite", intensity=60, category="decision")
    kioku.protect(m.id)
    clock.advance(timedelta(days=60))
    kioku.batch()
    held = kioku.get(m.id)
    assert held.retention_score == pytest.approx(60.0)
    kioku.unprotect(m.id)
    clock.advance(timedelta(days=1))
    kioku.batch()
    after = kioku.get(m.id)
    assert after.memory_days == pytest.approx(held.memory_days + 1)
    expected = 60 * after.decay_coefficient**after.memory_days
    assert after.retention_score == pytest.approx(expected)
    assert after.current_level > Level.FULL  # compressed at once: it is two months old


def _age_in_batch_days(created: datetime, moment: datetime) -> float:
    """What memory_days a memory made at ``created`` has after the batch at ``moment``."""
    first = next_batch_after(created, 3)
    return initial_memory_days(created, 3) + (moment.date() - first.date()).days


OLD_TURN = datetime(2026, 1, 19, 21, 30, tzinfo=TZ)


def test_history_imported_before_the_first_batch_ages_from_its_own_time(
    kioku: Kioku, clock: FixedClock
) -> None:
    m = kioku.remember("an old turn", "an old reply", intensity=60, category="work", at=OLD_TURN)
    assert m.memory_days == pytest.approx(initial_memory_days(OLD_TURN, 3))
    clock.advance(timedelta(hours=16))  # 2026-04-02 04:00: the store's first batch
    kioku.batch()
    moment = datetime(2026, 4, 2, 3, 0, tzinfo=TZ)
    assert kioku.get(m.id).memory_days == pytest.approx(_age_in_batch_days(OLD_TURN, moment))


def test_history_imported_after_a_batch_ages_from_its_own_time(
    kioku: Kioku, clock: FixedClock
) -> None:
    kioku.remember("today's turn", "today's reply", intensity=60, category="work")
    clock.advance(timedelta(hours=16))
    kioku.batch()  # the store has run its batch of 2026-04-02
    m = kioku.remember("an old turn", "an old reply", intensity=60, category="work", at=OLD_TURN)
    clock.advance(timedelta(days=1))
    kioku.batch()  # 2026-04-03
    after = kioku.get(m.id)
    moment = datetime(2026, 4, 3, 3, 0, tzinfo=TZ)
    assert after.memory_days == pytest.approx(_age_in_batch_days(OLD_TURN, moment))
    assert after.memory_days > 70
    assert after.retention_score == pytest.approx(60 * after.decay_coefficient**after.memory_days)
    # Its level follows its age at once (compressed in the same batch), as a memory that had
    # been in the store since January would be.
    assert after.current_level >= Level.TRACE
