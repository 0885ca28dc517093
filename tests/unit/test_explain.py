"""The retention forecast of ``kioku show`` agrees with what the batch plan really does.

Each case explains a memory, then runs the batch plan (kioku.core.lifecycle.plan) day after day
on that one memory and checks the level changes happen at the forecast batches, and the
month-end scores are the plan's scores.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from kioku.config.schema import Config
from kioku.core.explain import PROJECTION_MONTHS, explain_retention
from kioku.core.lifecycle.days import batch_moment
from kioku.core.lifecycle.plan import ArchivedPopulation, Population, plan_day
from kioku.core.model import Level, Memory, Valence
from kioku.core.retention import decay_coefficient, initial_memory_days

TZ = ZoneInfo("Asia/Tokyo")
CFG = Config()
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TZ)


def memory(
    intensity: int,
    category: str,
    *,
    created: datetime = NOW,
    memory_days: float | None = None,
    recalled: bool = False,
    level: int = Level.FULL,
    score: float | None = None,
    protected: bool = False,
) -> Memory:
    coefficient = decay_coefficient(
        category, intensity, CFG.retention.decay_by_category, CFG.retention.base_decay_coefficient
    )
    days = initial_memory_days(created, 3) if memory_days is None else memory_days
    return Memory(
        id="mem_20260118_180000_00000000",
        created=created,
        trigger="t",
        content="c",
        emotional_intensity=intensity,
        emotional_valence=Valence.NEUTRAL,
        emotional_arousal=50,
        category=category,
        decay_coefficient=coefficient,
        memory_days=days,
        retention_score=float(intensity) if score is None else score,
        current_level=level,
        recalled_since_last_batch=recalled,
        protected=protected,
    )


def one(m: Memory) -> Population:
    ids = np.empty(1, dtype=object)
    ids[:] = [m.id]
    return Population(
        ids=ids,
        scope=np.zeros(1, dtype=np.int32),
        created=np.asarray([m.created.timestamp()]),
        intensity=np.asarray([float(m.emotional_intensity)]),
        coefficient=np.asarray([m.decay_coefficient]),
        memory_days=np.asarray([m.memory_days]),
        recall_count=np.asarray([m.recall_count], dtype=np.int64),
        recalled=np.asarray([m.recalled_since_last_batch]),
        level=np.asarray([m.current_level], dtype=np.int8),
        protected=np.asarray([m.protected]),
        score=np.asarray([m.retention_score]),
    )


def replay(m: Memory, days: int) -> tuple[dict[int, int], dict[date, float]]:
    """Run the plan ``days`` times; the batch number of each level reached, and the score
    after the last batch of each date."""
    reached: dict[int, int] = {}
    scores: dict[date, float] = {}
    first = batch_moment((NOW + timedelta(days=1)).date(), 3, NOW)
    for n in range(1, days + 1):
        moment = first + timedelta(days=n - 1)
        plan = plan_day(one(m), ArchivedPopulation.empty(), CFG, moment, moment - timedelta(1))
        level = int(plan.level[0])
        for lv in range(m.current_level + 1, level + 1):
            reached[lv] = n
        m = replace(
            m,
            memory_days=float(plan.memory_days[0]),
            decay_coefficient=float(plan.coefficient[0]),
            recall_count=int(plan.recall_count[0]),
            retention_score=float(plan.score[0]),
            current_level=level,
            recalled_since_last_batch=False,
        )
        scores[moment.date()] = m.retention_score
        if level == Level.ARCHIVED:
            break  # out of the batch from now on
    return reached, scores


CASES = {
    "new emotional": memory(90, "emotional"),
    "new work": memory(50, "work"),
    "new decision": memory(70, "decision"),
    "aged casual": memory(
        95, "casual", created=NOW - timedelta(days=3), memory_days=2.4, score=95 * 0.79**2.4
    ),
    "recalled work": memory(
        80, "work", created=NOW - timedelta(days=10), memory_days=9.4, recalled=True, score=25.0
    ),
    "level 2 decision": memory(
        40, "decision", created=NOW - timedelta(days=40), memory_days=39.4, level=2, score=2.0
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forecast_matches_the_batch(name: str) -> None:
    m = CASES[name]
    explained = explain_retention(m, CFG, NOW)
    horizon = max([ms.days for ms in explained.milestones] + [400])
    reached, scores = replay(m, horizon)
    assert {ms.level: ms.days for ms in explained.milestones} == reached
    for ms in explained.milestones:
        assert ms.at == explained.next_batch_at + timedelta(days=ms.days - 1)
    assert len(explained.projection) == PROJECTION_MONTHS
    for p in explained.projection:
        ran = [d for d in scores if d <= p.at]
        archived_before = reached.get(Level.ARCHIVED, p.batches + 1) <= p.batches
        assert p.batches == len(ran) or archived_before
        expected = scores[max(ran)] if ran else m.retention_score
        assert p.score == pytest.approx(expected, rel=1e-9)


def test_a_new_memory_is_not_aged_by_its_first_batch() -> None:
    # 90 × 0.9971^d ≤ 50 needs d ≥ 202.4; a memory made at 18:00 starts at 0.375 days and the
    # first batch leaves it there (its memory_days already counts up to that batch), so each of
    # the next batches adds a day: 0.375 + 203 ≥ 202.4 at the 204th batch.
    explained = explain_retention(memory(90, "emotional"), CFG, NOW)
    assert explained.days_until_next_level == 204


def test_projection_covers_twelve_month_ends() -> None:
    explained = explain_retention(memory(50, "work"), CFG, NOW)
    ends = [p.at for p in explained.projection]
    assert ends[0] == date(2026, 1, 31)
    assert ends[-1] == date(2026, 12, 31)
    assert explained.projection[0].batches == 13  # Jan 19 … Jan 31
    scores = [p.score for p in explained.projection]
    assert scores == sorted(scores, reverse=True)
    assert explained.projection[-1].level == Level.ARCHIVED


def test_protected_memory_keeps_its_level_in_the_projection() -> None:
    explained = explain_retention(memory(60, "casual", protected=True), CFG, NOW)
    assert explained.milestones == ()
    assert {p.level for p in explained.projection} == {Level.FULL}
    # Protected memories do not fade: the whole year at the intensity.
    assert {p.score for p in explained.projection} == {60.0}
    assert explained.note.startswith("protected: does not fade")
    assert "unprotected, it would score" in explained.note


def test_imported_memory_is_forecast_from_its_real_age() -> None:
    # Made a hundred days ago and never recalled: the next batch brings it to its age.
    old = memory(60, "work", created=NOW - timedelta(days=100))
    explained = explain_retention(old, CFG, NOW)
    reached, _ = replay(old, 1)
    assert explained.milestones[0].days == 1
    assert explained.milestones[-1].level == Level.ARCHIVED
    assert reached.get(Level.ARCHIVED) == 1


def test_archived_memory_has_no_projection() -> None:
    archived = replace(memory(10, "casual"), current_level=4, archived_at=NOW)
    explained = explain_retention(archived, CFG, NOW)
    assert explained.projection == ()
    assert explained.milestones == ()
