"""Retention math of spec 000 (数理モデル, 減衰係数, 想起による記憶強化, レベル定義, アーカイブ層).

Pure functions: the current time is always a parameter and nothing here reads a clock,
the environment or a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kioku.config.schema import CategoryRange, LevelsConfig, RecallConfig
from kioku.core.model import Level

__all__ = [
    "Reinforced",
    "batches_until_below",
    "decay_coefficient",
    "initial_memory_days",
    "level_floor",
    "level_for_score",
    "next_batch_after",
    "reinforce",
    "retention_score",
    "revival_score",
]

SECONDS_PER_DAY = 24 * 60 * 60


def decay_coefficient(
    category: str,
    intensity: float,
    ranges: Mapping[str, CategoryRange],
    base: float,
) -> float:
    """``min + (max - min) × intensity/100`` within the category's range (減衰係数の決定方法).

    An unknown category gets the base coefficient (基本減衰係数).
    """
    rng = ranges.get(category)
    if rng is None:
        return base
    return rng.min + (rng.max - rng.min) * (intensity / 100.0)


def retention_score(intensity: float, coefficient: float, memory_days: float) -> float:
    """``retention_score = emotional_intensity × decay_coefficient ^ memory_days``."""
    return float(intensity * coefficient**memory_days)


def next_batch_after(moment: datetime, batch_hour: int) -> datetime:
    """The first batch time after ``moment``: ``batch_hour`` o'clock, wall time in its zone.

    A moment exactly at the batch hour belongs to that batch's day, so the next batch is the
    following day (as in the spec's example, ``created.hour >= batch_hour`` moves a day on).
    """
    if moment.tzinfo is None:
        raise ValueError("moment must be timezone-aware")
    candidate = moment.replace(hour=batch_hour, minute=0, second=0, microsecond=0)
    if moment.hour >= batch_hour:
        # Aware arithmetic in one zone is wall-clock arithmetic: 03:00 stays 03:00 across
        # a daylight-saving change, and the zone supplies the new date's offset.
        candidate = candidate + timedelta(days=1)
    return candidate


def initial_memory_days(created: datetime, batch_hour: int) -> float:
    """The initial ``memory_days``: days from creation to the next batch (memory_days の初期値).

    Elapsed time is measured in real seconds, so a daylight-saving change in between counts
    as the hour it really is.
    """
    nxt = next_batch_after(created, batch_hour)
    elapsed = nxt.astimezone(UTC) - created.astimezone(UTC)
    return elapsed.total_seconds() / SECONDS_PER_DAY


@dataclass(frozen=True, slots=True)
class Reinforced:
    """A memory's numbers after a recall strengthened it."""

    memory_days: float
    decay_coefficient: float
    recall_count: int


def reinforce(
    memory_days: float,
    coefficient: float,
    recall_count: int,
    recall: RecallConfig,
    max_coefficient: float,
) -> Reinforced:
    """Recall reinforcement applied by the batch (バッチ処理時の強化フロー).

    ``memory_days`` loses ``memory_days_reduction`` of itself (0.5 halves it), the coefficient
    rises by ``decay_coefficient_boost`` up to ``max_coefficient``, and the count goes up by one.
    A coefficient already above the cap is never lowered by a recall.
    """
    return Reinforced(
        memory_days=memory_days * (1.0 - recall.memory_days_reduction),
        decay_coefficient=max(
            coefficient, min(max_coefficient, coefficient + recall.decay_coefficient_boost)
        ),
        recall_count=recall_count + 1,
    )


def level_for_score(score: float, levels: LevelsConfig) -> int:
    """The level a score belongs to (閾値設定): >L1 → 1, >L2 → 2, >L3 → 3, else 4 (archive)."""
    if score > levels.level1_threshold:
        return Level.FULL
    if score > levels.level2_threshold:
        return Level.SUMMARY
    if score > levels.level3_threshold:
        return Level.TRACE
    return Level.ARCHIVED


def level_floor(level: int, levels: LevelsConfig) -> float | None:
    """The score at or below which a memory leaves ``level`` (None for the archive)."""
    return {
        Level.FULL: levels.level1_threshold,
        Level.SUMMARY: levels.level2_threshold,
        Level.TRACE: levels.level3_threshold,
    }.get(level)


def batches_until_below(
    intensity: float, coefficient: float, memory_days: float, floor: float
) -> int | None:
    """How many daily batches (each adding 1.0 day) until the score is at or below ``floor``.

    0 means it is already there; None means never (the coefficient does not decay, or the
    floor is negative).
    """
    if retention_score(intensity, coefficient, memory_days) <= floor:
        return 0
    if floor < 0 or coefficient >= 1.0 or intensity <= 0:
        return None
    if floor == 0:
        return None
    # intensity × c^(d+n) <= floor  ⇔  n >= ln(floor/intensity)/ln(c) − d
    needed = math.log(floor / intensity) / math.log(coefficient) - memory_days
    n = max(1, math.ceil(needed - 1e-12))
    # Guard against floating error at the boundary.
    while retention_score(intensity, coefficient, memory_days + n) > floor:
        n += 1
    while n > 1 and retention_score(intensity, coefficient, memory_days + n - 1) <= floor:
        n -= 1
    return n


def revival_score(
    intensity: float,
    archived_at: datetime,
    now: datetime,
    revival_decay_per_day: float,
    level3_threshold: float,
    revival_min_margin: float,
) -> float:
    """The score a memory gets back when revived from the archive (復活時の retention_score 計算).

    Intensity decayed by whole days spent in the archive, never below
    ``level3_threshold + revival_min_margin`` so it is not archived again at once.
    """
    archived_days = max(0, (now.astimezone(UTC) - archived_at.astimezone(UTC)).days)
    calculated = intensity * revival_decay_per_day**archived_days
    return max(calculated, level3_threshold + revival_min_margin)
