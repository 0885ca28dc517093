"""Explaining a memory's retention: where it stands and when it will fade (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kioku.config.schema import Config
from kioku.core.model import Level, Memory
from kioku.core.retention import (
    batches_until_below,
    level_floor,
    level_for_score,
    next_batch_after,
)

__all__ = ["Milestone", "RetentionExplanation", "explain_retention"]


@dataclass(frozen=True, slots=True)
class Milestone:
    """The batch at which a memory reaches ``level`` if never recalled."""

    level: int
    level_name: str
    threshold: float
    days: int
    at: datetime


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

    @property
    def next_level(self) -> int | None:
        return self.milestones[0].level if self.milestones else None

    @property
    def days_until_next_level(self) -> int | None:
        return self.milestones[0].days if self.milestones else None

    @property
    def next_level_at(self) -> datetime | None:
        return self.milestones[0].at if self.milestones else None


def explain_retention(memory: Memory, config: Config, now: datetime) -> RetentionExplanation:
    """Explain ``memory`` as of ``now``.

    The score is the one stored by the last batch (for a new memory, its intensity, as the
    spec sets it). The forecast assumes no recall: each daily batch adds one day to
    ``memory_days``, and the memory reaches level ``n + 1`` at the first batch whose score is
    at or below level ``n``'s threshold. Ratio enforcement may compress it sooner.
    """
    levels = config.levels
    nxt = next_batch_after(now, config.compression.schedule_hour)
    formula = (
        f"{memory.emotional_intensity} × {memory.decay_coefficient:.4f}^memory_days, "
        f"memory_days = {memory.memory_days:.3f}"
    )
    milestones: list[Milestone] = []
    if memory.archived:
        note = "archived: out of the batch; recalling it requests a revival"
    elif memory.protected:
        note = "protected: never compressed, archived or deleted"
    else:
        for target in range(memory.current_level + 1, Level.ARCHIVED + 1):
            floor = level_floor(target - 1, levels)
            assert floor is not None
            n = batches_until_below(
                memory.emotional_intensity, memory.decay_coefficient, memory.memory_days, floor
            )
            if n is None:
                break
            days = max(1, n, milestones[-1].days if milestones else 1)
            milestones.append(
                Milestone(target, Level.NAMES[target], floor, days, nxt + timedelta(days=days - 1))
            )
        note = (
            "if never recalled: each batch adds a day; a recall halves the days and "
            "strengthens the coefficient; ratio enforcement may compress it sooner"
            if milestones
            else "does not fade: its score never reaches the next threshold"
        )
    return RetentionExplanation(
        formula=formula,
        score_now=memory.retention_score,
        level=memory.current_level,
        level_name=Level.NAMES[memory.current_level],
        level_by_score=level_for_score(memory.retention_score, levels),
        next_batch_at=nxt,
        milestones=tuple(milestones),
        note=note,
    )
