"""What one memory's page shows, gathered in one call on its owner's service."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time
from typing import TYPE_CHECKING, Any

from kioku.core.kinds_explain import kind_explanation
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind
from kioku.errors import KiokuError
from kioku.interfaces.web.charts import Curve, retention_curve

if TYPE_CHECKING:
    from kioku.core.explain import RetentionExplanation
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.model import Memory
    from kioku.ports.store_records import MemoryVersion, Original
    from kioku.service.kioku import Kioku

__all__ = ["Linked", "MemoryView", "load_view"]


@dataclass(frozen=True, slots=True)
class Linked:
    """A memory this one points at (or that points at it): its id, relation and first words."""

    id: str
    relation: str
    text: str | None  # None: not in this scope any more


@dataclass(frozen=True, slots=True)
class MemoryView:
    memory: Memory
    original: Original | None
    explanation: RetentionExplanation
    log: list[LogEntry]
    history: dict[str, Any]
    versions: list[MemoryVersion]
    links: list[Linked]
    referenced_by: list[Linked]
    curve: Curve
    thresholds: list[tuple[int, float]]
    recalls: list[datetime]
    now: datetime
    #: For a knowledge item, procedure or profile: how it is kept instead of a retention
    #: curve (:func:`kioku.core.kinds_explain.kind_explanation`); None for an episode.
    kind: dict[str, Any] | None = None


def _brief(k: Kioku, memory_id: str, relation: str) -> Linked:
    try:
        other = k.get(memory_id)
    except KiokuError:
        return Linked(memory_id, relation, None)
    return Linked(memory_id, relation, other.trigger or other.content)


def _past(memory: Memory, log: list[LogEntry], now: datetime) -> list[tuple[datetime, float]]:
    """The scores known: at creation (its intensity), around each logged change, now."""
    points = [(memory.created, float(memory.emotional_intensity))]
    for row in log:
        if row.score_before is not None:
            points.append((row.at, row.score_before))
        if row.score_after is not None:
            points.append((row.at, row.score_after))
    points.append((max(now, memory.created), memory.retention_score))
    return points


def _forecast(
    memory: Memory, why: RetentionExplanation, now: datetime
) -> list[tuple[datetime, float]]:
    """The scores expected if never recalled: now, each level change, each month end."""
    points = [(now, memory.retention_score)]
    points += [(m.at, m.threshold) for m in why.milestones]
    zone = now.tzinfo
    points += [(datetime.combine(p.at, time(23, 59), tzinfo=zone), p.score) for p in why.projection]
    return [p for p in points if p[0] >= now]


def load_view(k: Kioku, memory_id: str) -> MemoryView:
    """Everything the page shows; MemoryNotFoundError when the id is not this owner's.

    The memory is read without marking it recalled: looking at it is not remembering it."""
    read = k.read_memory(memory_id, mark=False)
    memory = read.memory
    now = k.clock.now()
    why = k.explain(memory)
    log = k.lifecycle_log(memory_id=memory.id)
    levels = k.config.levels
    thresholds = [
        (1, levels.level1_threshold),
        (2, levels.level2_threshold),
        (3, levels.level3_threshold),
    ]
    recalls = [
        (row.at, row.score_after if row.score_after is not None else row.score_before or 0.0)
        for row in log
        if row.event is Event.REINFORCE
    ]
    curve = retention_curve(
        created=memory.created,
        now=now,
        past=_past(memory, log, now),
        forecast=_forecast(memory, why, now),
        thresholds=thresholds,
        recalls=recalls,
        top_score=max(100.0, float(memory.emotional_intensity)),
    )
    return MemoryView(
        memory=memory,
        original=read.original,
        explanation=why,
        log=log,
        history=k.history(memory.id),
        versions=k.versions(memory.id),
        links=[_brief(k, r.id, r.type.value) for r in memory.relations],
        referenced_by=[_brief(k, i, "references this") for i in why.referenced_by],
        curve=curve,
        thresholds=thresholds,
        recalls=[t for t, _ in recalls],
        now=now,
        kind=None if memory.kind is Kind.EPISODE else kind_explanation(memory),
    )
