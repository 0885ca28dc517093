"""能動的忘却 (spec 001): daily downscaling, monthly forgetting, saved versions pruned.

Daily, knowledge unused for 90 days with fewer than 3 accesses, procedures unused for 180 days
with fewer than 3 uses, and procedures with utility < 0.3 after 3 failures are marked low;
marked items used again are unmarked. Monthly, items low for 60 days and unused since are
forgotten: taken out of priming and moved to the archive, where deliberate search still finds
them (only erasure removes a memory). Protected items (profiles, ``[IMPORTANT]`` and
``protected`` memories, procedures that reached version 3) are never marked nor forgotten.
Episodes are not touched here: spec 000's nightly batch decides their fate by retention.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.core.consolidation.forgetting import (
    ItemActivity,
    downscale,
    forget_due,
    versions_to_prune,
)
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind, Level
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.service.consolidation.common import Action, Run

if TYPE_CHECKING:
    from kioku.ports.store_records import ActivityFields
    from kioku.service.engine import Engine

__all__ = ["item_activity", "plan_downscaling", "plan_forgetting", "plan_version_pruning"]

_KINDS = (Kind.KNOWLEDGE.value, Kind.PROCEDURE.value)


def item_activity(fields: ActivityFields) -> ItemActivity:
    """What the forgetting rules read of a memory."""
    details = fields.details
    version, successes, failures, confidence = 1, 0, 0, None
    if isinstance(details, ProcedureDetails):
        version = details.version
        successes, failures = details.success_count, details.failure_count
        confidence = details.confidence
    elif isinstance(details, KnowledgeDetails):
        version, confidence = details.version, details.confidence
    return ItemActivity(
        id=fields.id,
        kind=str(fields.kind),
        created=fields.created,
        last_access=fields.last_access,
        access_count=fields.recall_count,
        protected=fields.protected,
        version=version,
        success_count=successes,
        failure_count=failures,
        confidence=confidence,
        low_since=fields.low_since,
        archived=fields.archived,
    )


def _items(engine: Engine) -> list[ActivityFields]:
    flt = MemoryFilter(
        user_id=engine.user_id, agent_id=engine.agent_id, kinds=_KINDS, archived=False
    )
    return [
        f
        for f in engine.store.activity_fields(flt)
        if not (isinstance(f.details, KnowledgeDetails) and f.details.superseded)
    ]


def plan_downscaling(engine: Engine, moment: datetime) -> list[Action]:
    """Spec 001 日次ダウンスケーリング: low-activation marks set and lifted."""
    marks: list[str] = []
    unmarks: list[str] = []
    reasons: dict[str, str] = {}
    for fields in _items(engine):
        mark = downscale(item_activity(fields), moment)
        if mark.action == "mark" and fields.low_since is None:
            marks.append(fields.id)
        elif mark.action == "unmark":
            unmarks.append(fields.id)
        else:
            continue
        reasons[fields.id] = mark.reason
    actions: list[Action] = []
    for mid in marks:
        actions.append(Action("mark_low", reasons[mid], (mid,), "", _set_low(mid, True, reasons)))
    for mid in unmarks:
        actions.append(
            Action("unmark_low", reasons[mid], (mid,), "", _set_low(mid, False, reasons))
        )
    return actions


def _set_low(memory_id: str, low: bool, reasons: dict[str, str]) -> Callable[[Run], None]:
    def run(r: Run) -> None:
        r.engine.store.set_low_activity([memory_id], r.moment if low else None)
        r.note(Event.MARK_LOW if low else Event.UNMARK_LOW, memory_id, reason=reasons[memory_id])

    return run


def plan_forgetting(engine: Engine, moment: datetime) -> list[Action]:
    """Spec 001 完全忘却: items low for 60+ days and unused since go to the archive."""
    actions: list[Action] = []
    for fields in _items(engine):
        reason = forget_due(item_activity(fields), moment)
        if reason is None:
            continue

        def run(r: Run, mid: str = fields.id, why: str = reason) -> None:
            r.engine.store.update(
                mid, MemoryPatch(archived_at=r.moment, current_level=Level.ARCHIVED)
            )
            r.note(Event.FORGET, mid, reason=why)

        actions.append(Action("forget", reason, (fields.id,), "", run))
    return actions


def plan_version_pruning(engine: Engine, memory_ids: Sequence[str]) -> list[Action]:
    """Spec 001 月次アーカイブクリーンアップ: keep the newest five saved versions of each."""
    actions: list[Action] = []
    for mid in memory_ids:
        saved = engine.store.versions(mid)
        old = versions_to_prune([v.version for v in saved])
        if not old:
            continue

        def run(r: Run, memory_id: str = mid, drop: list[int] = old) -> None:
            r.engine.store.delete_versions(memory_id, drop)
            r.note(Event.PRUNE_VERSIONS, memory_id, versions=drop)

        actions.append(
            Action(
                "prune_versions",
                f"{len(saved)} saved versions: keeping the newest five",
                (mid,),
                "",
                run,
            )
        )
    return actions
