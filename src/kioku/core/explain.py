"""Explaining a memory's retention: where it stands and when it will fade (pure)."""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from kioku.config.schema import Config
from kioku.core.model import Level, Memory
from kioku.core.retention import (
    batches_until_below,
    level_floor,
    level_for_score,
    next_batch_after,
    reinforce,
    retention_score,
)

__all__ = ["Milestone", "Projection", "RetentionExplanation", "explain_retention"]

#: How many month ends the projection covers.
PROJECTION_MONTHS = 12


@dataclass(frozen=True, slots=True)
class Milestone:
    """The batch at which a memory reaches ``level`` if never recalled."""

    level: int
    level_name: str
    threshold: float
    days: int  # batches from now: 1 is the next batch
    at: datetime


@dataclass(frozen=True, slots=True)
class Projection:
    """The score and level a memory has at the end of a month if never recalled."""

    at: date  # the last day of the month
    batches: int  # batches run from now until the end of that day
    score: float
    level: int


@dataclass(frozen=True, slots=True)
class RetentionExplanation:
    """Why a memory has the score and level it has, and what happens next if never recalled."""

    formula: str
    score_now: float
    level: int
    level_name: str
    level_by_score: int
    next_batch_at: datetime
    milestones: tuple[Milestone, ...]
    note: str
    projection: tuple[Projection, ...] = ()
    #: Memories whose relations point at this one (spec 000 逆方向の参照: the lower score's
    #: way back to the higher), as the store's reverse index finds them.
    referenced_by: tuple[str, ...] = ()

    @property
    def next_level(self) -> int | None:
        return self.milestones[0].level if self.milestones else None

    @property
    def days_until_next_level(self) -> int | None:
        return self.milestones[0].days if self.milestones else None

    @property
    def next_level_at(self) -> datetime | None:
        return self.milestones[0].at if self.milestones else None


@dataclass(frozen=True, slots=True)
class _Course:
    """The numbers after the next batch; each later batch adds one day to ``days``."""

    intensity: float
    coefficient: float
    days: float  # memory_days after the next batch

    def score_after(self, batches: int) -> float:
        """The score after ``batches`` ≥ 1 batches."""
        return retention_score(self.intensity, self.coefficient, self.days + batches - 1)

    def first_batch_at_or_below(self, floor: float) -> int | None:
        """The first batch (1 = the next) whose score is at or below ``floor``; None: never."""
        if self.score_after(1) <= floor:
            return 1
        n = batches_until_below(self.intensity, self.coefficient, self.days, floor)
        return None if n is None else n + 1


def _course(memory: Memory, config: Config, nxt: datetime) -> _Course:
    """What the next batch does to the memory, as the batch does it (kioku.core.lifecycle):
    a memory never recalled is first brought to its age in batch days (imported history);
    a pending recall is applied (memory_days reduced, coefficient raised); a memory made
    since the previous batch is not aged (its memory_days already counts up to this batch);
    any other memory ages one day."""
    days, coefficient = memory.memory_days, memory.decay_coefficient
    fresh = memory.created > nxt - timedelta(days=1)
    if memory.recall_count == 0 and not fresh:
        age = (nxt - memory.created).total_seconds() / 86_400.0
        days += max(0.0, round(age - days) - 1.0)
    if memory.recalled_since_last_batch:
        boosted = reinforce(
            days,
            coefficient,
            memory.recall_count,
            config.recall,
            config.retention.max_decay_coefficient,
        )
        days, coefficient = boosted.memory_days, boosted.decay_coefficient
    elif not fresh:
        days += 1.0
    return _Course(float(memory.emotional_intensity), coefficient, days)


def _month_ends(start: date, months: int) -> list[date]:
    """The last day of ``start``'s month and of the ``months - 1`` months after it."""
    out: list[date] = []
    year, month = start.year, start.month
    for _ in range(months):
        out.append(date(year, month, calendar.monthrange(year, month)[1]))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _projection(
    memory: Memory,
    course: _Course,
    now: datetime,
    nxt: datetime,
    archive_at: int | None,
    config: Config,
) -> tuple[Projection, ...]:
    """Month-end scores: each batch adds a day; once archived the score stays as it was
    (the archive is out of the batch); a protected memory keeps its level."""
    out: list[Projection] = []
    for end in _month_ends(now.date(), PROJECTION_MONTHS):
        batches = max(0, (end - nxt.date()).days + 1)
        if memory.protected:
            score = float(memory.emotional_intensity)
        elif batches == 0:
            score = memory.retention_score
        else:
            score = course.score_after(min(batches, archive_at or batches))
        if memory.protected:
            level = memory.current_level
        else:
            level = max(memory.current_level, level_for_score(score, config.levels))
        out.append(Projection(end, batches, score, level))
    return tuple(out)


def explain_retention(
    memory: Memory, config: Config, now: datetime, referenced_by: Sequence[str] = ()
) -> RetentionExplanation:
    """Explain ``memory`` as of ``now``; ``referenced_by`` lists the memories linking to it.

    The score is the one stored by the last batch (for a new memory, its intensity, as the
    spec sets it). The forecast assumes no further recall and a batch every day, computed as
    the batch computes it: the next batch applies a recall already made, does not age a memory
    made since the previous batch, and ages any other by a day; each later batch adds a day.
    The memory reaches level ``n + 1`` at the first batch whose score is at or below level
    ``n``'s threshold. Ratio enforcement may compress it sooner.
    """
    levels = config.levels
    nxt = next_batch_after(now, config.compression.schedule_hour)
    formula = (
        f"{memory.emotional_intensity} × {memory.decay_coefficient:.4f}^memory_days, "
        f"memory_days = {memory.memory_days:.3f}"
    )
    milestones: list[Milestone] = []
    projection: tuple[Projection, ...] = ()
    if memory.archived:
        note = "archived: out of the batch; recalling it requests a revival"
    else:
        course = _course(memory, config, nxt)
        if memory.protected:
            unprotected = course.score_after(1)
            note = (
                "protected: does not fade (its score stays at its intensity, "
                f"{memory.emotional_intensity}); never compressed, archived or deleted. Its days "
                f"keep counting: unprotected, it would score {unprotected:.2f} at the next batch"
            )
        else:
            for target in range(memory.current_level + 1, Level.ARCHIVED + 1):
                floor = level_floor(target - 1, levels)
                assert floor is not None
                n = course.first_batch_at_or_below(floor)
                if n is None:
                    break
                days = max(n, milestones[-1].days if milestones else 1)
                milestones.append(
                    Milestone(
                        target, Level.NAMES[target], floor, days, nxt + timedelta(days=days - 1)
                    )
                )
            note = (
                "if never recalled: each batch adds a day; a recall halves the days and "
                "strengthens the coefficient; ratio enforcement may compress it sooner"
                if milestones
                else "does not fade: its score never reaches the next threshold"
            )
        archive_at = next((m.days for m in milestones if m.level == Level.ARCHIVED), None)
        projection = _projection(memory, course, now, nxt, archive_at, config)
    return RetentionExplanation(
        formula=formula,
        score_now=memory.retention_score,
        level=memory.current_level,
        level_name=Level.NAMES[memory.current_level],
        level_by_score=level_for_score(memory.retention_score, levels),
        next_batch_at=nxt,
        milestones=tuple(milestones),
        note=note,
        projection=projection,
        referenced_by=tuple(referenced_by),
    )
