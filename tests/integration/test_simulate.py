"""The batch replayed day after day on a throwaway store (kioku.service.lifecycle.simulate)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.config.schema import CompressionConfig, Config
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.service.lifecycle.simulate import simulate
from kioku.service.lifecycle.simulate_checks import (
    LevelCounts,
    check_log,
    check_protected,
    check_ratios,
    count_levels,
)

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO)


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


def test_a_synthetic_month_passes_every_check(kioku: Kioku, tmp_path: Path) -> None:
    result = simulate(kioku, days=30, per_day=25, seed=7)
    assert result.ok, result.failures[:3]
    assert [d.index for d in result.days] == list(range(1, 31))
    assert result.days[0].day == "2026-01-19"  # the first batch after NOW
    assert result.days[-1].day == "2026-02-17"
    last = result.days[-1].counts
    assert last.total == sum(d.added for d in result.days) == 750
    # Above ratio_min_memories (100) the shares hold; the archive takes what is left.
    for level, target in ((1, 0.15), (2, 0.30), (3, 0.35)):
        assert last.free[level - 1] <= int(target * last.total_free + 1e-9)
    assert last.protected[1:] == (0, 0, 0)
    moved = sum(d.transitions["compressed_1_2"] for d in result.days)
    assert moved > 0
    flow = sum(d.transitions["archived"] - d.transitions["revived"] for d in result.days)
    assert flow == last.free[3]
    assert {c.name for c in result.days[-1].checks} == {"ratios", "protected", "log"}
    # The real home was never opened.
    assert not (tmp_path / "home").exists()


def test_the_same_seed_gives_the_same_days(kioku: Kioku) -> None:
    first = simulate(kioku, days=8, per_day=20, seed=3)
    again = simulate(kioku, days=8, per_day=20, seed=3)
    other = simulate(kioku, days=8, per_day=20, seed=4)

    def shape(r: object) -> list[object]:
        return [(d.counts, d.transitions, d.recalled) for d in r.days]  # type: ignore[attr-defined]

    assert shape(first) == shape(again)
    assert shape(first) != shape(other)


def test_from_store_works_on_a_copy(kioku: Kioku) -> None:
    for n in range(30):
        kioku.remember(f"t{n}", "c", intensity=20 + n, category="work", at=NOW)
    kioku.remember("p", "c", intensity=90, category="emotional", protected=True, at=NOW)
    before = count_levels(kioku.store, kioku.user_id, kioku.agent_id)
    result = simulate(kioku, days=60, per_day=0, from_store=True)
    assert result.ok, result.failures[:3]
    assert result.days[0].added == 0
    end = result.days[-1].counts
    assert end.total == 31
    assert end.protected == (1, 0, 0, 0)
    assert end.free[0] < 30  # work memories fade within two months
    # The store itself is as it was: no batch ran on it, nothing was logged.
    assert count_levels(kioku.store, kioku.user_id, kioku.agent_id) == before
    assert kioku.lifecycle_log() == []
    assert kioku.store.get_state("batch_last_day") is None


def test_ratio_check_enforces_the_floor_of_each_share() -> None:
    config = replace(Config(), compression=CompressionConfig(ratio_min_memories=10))
    fine = LevelCounts((15, 30, 35, 20), (2, 0, 0, 0))
    assert check_ratios(fine, config).ok
    over = LevelCounts((16, 30, 35, 19), (0, 0, 0, 0))
    failed = check_ratios(over, config)
    assert not failed.ok
    assert "L1 16 > 15" in failed.detail
    few = LevelCounts((5, 0, 0, 0), (0, 0, 0, 0))
    assert check_ratios(few, config).ok
    assert "not enforced" in check_ratios(few, config).detail


def test_protected_check() -> None:
    counts = LevelCounts((1, 1, 1, 1), (3, 0, 0, 0))
    assert check_protected(counts, (3, 0, 0, 0)).ok
    assert not check_protected(counts, (2, 1, 0, 0)).ok


def _row(event: Event, before: int | None, after: int | None) -> LogEntry:
    return LogEntry(event, "m", NOW, "u", "a", "2026-01-19", before, after)


def test_log_check_accounts_for_every_level_change() -> None:
    before = LevelCounts((10, 5, 5, 2), (1, 0, 0, 0))
    rows = [
        _row(Event.COMPRESS, 1, 2),
        _row(Event.COMPRESS, 2, 3),
        _row(Event.ARCHIVE, 3, 4),
        _row(Event.REVIVE, 4, 3),
        _row(Event.DELETE, 4, None),
        _row(Event.REINFORCE, 1, 1),  # not asked for by the simulation, but harmless
    ]
    # +3 new memories at Level 1; one moved 1→2→3→4, one revived 4→3, one deleted from 4.
    after = LevelCounts((12, 5, 6, 1), (1, 0, 0, 0))
    assert check_log(before, 3, rows, after).ok
    wrong = LevelCounts((12, 5, 5, 2), (1, 0, 0, 0))
    failed = check_log(before, 3, rows, wrong)
    assert not failed.ok
    assert "L3 5 vs 6" in failed.detail
