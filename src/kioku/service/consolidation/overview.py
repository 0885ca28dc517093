"""Spec 004's observability: the lifecycle policy and what it measures, for ``kioku stats``.

Importance is computed on the fly from each episode's age, accesses and last access; capacity
counts the owner's episodes outside the archive against ``lifecycle.capacity``; the lifecycle
log is summed per day and event (spec 004's per-day lifecycle log).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from kioku.core.consolidation.importance import CAPACITY_TRIGGER, COMPRESS_BELOW, importance
from kioku.core.kinds import KnowledgeDetails
from kioku.core.model import Kind
from kioku.ports.store import MemoryFilter

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["lifecycle_overview"]

#: The most recent days of the lifecycle log summed per day, from its newest rows.
LOG_DAYS: Final = 7
LOG_ROWS: Final = 20_000


def lifecycle_overview(engine: Engine, now: datetime | None = None) -> dict[str, Any]:
    moment = now or engine.clock.now()
    store = engine.store
    user, agent = engine.user_id, engine.agent_id
    episodes = store.activity_fields(
        MemoryFilter(user_id=user, agent_id=agent, kind=Kind.EPISODE.value)
    )
    active = [f for f in episodes if not f.archived]
    scores = [importance(f.created, f.last_access, f.recall_count, moment) for f in active]
    limit = engine.config.lifecycle.capacity
    items = store.activity_fields(
        MemoryFilter(
            user_id=user, agent_id=agent, kinds=(Kind.KNOWLEDGE.value, Kind.PROCEDURE.value)
        )
    )
    low = Counter(str(f.kind) for f in items if f.low_since is not None and not f.archived)
    superseded = sum(
        1 for f in items if isinstance(f.details, KnowledgeDetails) and f.details.superseded
    )
    runs: dict[str, Any] = {}
    for level in ("daily", "weekly", "monthly"):
        last = store.consolidation_runs(engine.user_id, engine.agent_id, level, limit=1)
        runs[level] = None if not last else {"period": last[0].period, **dict(last[0].report)}
    per_day: dict[str, Counter[str]] = defaultdict(Counter)
    for entry in store.read_log(user_id=user, agent_id=agent, limit=LOG_ROWS):
        per_day[entry.at.date().isoformat()][entry.event.value] += 1
    recent = sorted(per_day)[-LOG_DAYS:]
    return {
        "policy": engine.config.lifecycle.policy,
        "importance": {
            "episodes": len(scores),
            "mean": round(sum(scores) / len(scores), 4) if scores else None,
            f"below_{COMPRESS_BELOW}": sum(1 for s in scores if s < COMPRESS_BELOW),
        },
        "capacity": {
            "limit": limit,
            "episodes": len(active),
            "usage": round(len(active) / limit, 4) if limit > 0 else None,
            "compresses_at": CAPACITY_TRIGGER,
            "applies": engine.config.lifecycle.policy == "capacity",
        },
        "memory_archive_count": len(episodes) - len(active) + sum(1 for f in items if f.archived),
        "low_activation": dict(low),
        "superseded_knowledge": superseded,
        "consolidation": runs,
        "lifecycle_log_per_day": {day: dict(per_day[day]) for day in recent},
    }
