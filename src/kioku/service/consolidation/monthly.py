"""月次忘却 (spec 001 月次忘却パイプライン): forgetting, old versions, the mid-term tier.

Items low for 60 days and unused since are forgotten (archived: out of priming, still found by
deliberate search); each item keeps its newest five saved versions; expired entries of the
mid-term tier are removed.
"""

from __future__ import annotations

from datetime import datetime

from kioku.core.model import Kind
from kioku.ports.store import MemoryFilter
from kioku.service.consolidation.common import Action, Run
from kioku.service.consolidation.forgetting import plan_forgetting, plan_version_pruning
from kioku.service.engine import Engine

__all__ = ["plan_monthly"]


def plan_monthly(engine: Engine, moment: datetime) -> list[Action]:
    actions = plan_forgetting(engine, moment)
    ids = [
        m.id
        for m in engine.store.iter(
            MemoryFilter(
                user_id=engine.user_id,
                agent_id=engine.agent_id,
                kinds=(Kind.KNOWLEDGE.value, Kind.PROCEDURE.value),
            )
        )
    ]
    actions += plan_version_pruning(engine, ids)

    def expire(r: Run) -> None:
        r.engine.store.expire_midterm(r.moment)

    actions.append(Action("expire_midterm", "mid-term entries past their time", run=expire))
    return actions
