"""One day of the nightly batch: its plan as of the day's batch time, the compression texts
made before the transaction, and every write and log row of the day in one transaction, in the
order of spec 000's 圧縮処理の内容 (see :mod:`.batch`).
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from kioku.core.lifecycle.days import batch_moment
from kioku.core.lifecycle.links import review_links
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import DayPlan, Snapshot, archive_select, plan_day
from kioku.core.model import Level
from kioku.core.timefmt import format_ts
from kioku.ports.analyzer import Compressed
from kioku.ports.store import MemoryPatch
from kioku.service.lifecycle.batch_compress import apply_transitions, compress_steps, text_key
from kioku.service.lifecycle.batch_links import (
    active_nodes,
    link_day,
    scope_lookup,
    snapshot_links,
    surviving_links,
)
from kioku.service.lifecycle.batch_state import LAST_DAY_KEY, LAST_RUN_KEY, DaySummary, last_day

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["plan_of", "run_day", "summarize"]


def plan_of(engine: Engine, day: date, like: datetime) -> tuple[datetime, Snapshot, DayPlan]:
    """Read the store as of ``day``'s batch time and plan that day: (moment, snapshot, plan)."""
    hour = engine.config.compression.schedule_hour
    moment = batch_moment(day, hour, like)
    previous = batch_moment(day - timedelta(days=1), hour, like)
    snap = engine.store.batch_snapshot(moment, archive_select(engine.config, moment))
    plan = plan_day(snap.population, snap.archived, engine.config, moment, previous)
    return moment, snap, plan


def summarize(day: date, moment: datetime, snap: Snapshot, plan: DayPlan) -> DaySummary:
    steps: Counter[str] = Counter()
    for t in plan.transitions:
        for a in range(t.from_level, min(t.to_level, Level.TRACE)):
            steps[f"{a}->{a + 1}"] += 1
    return DaySummary(
        day=day.isoformat(),
        moment=format_ts(moment),
        memories=len(snap.population),
        reinforced=int(plan.reinforced.sum()),
        compressed=dict(sorted(steps.items())),
        archived=len(plan.archived_today),
        ratio_forced=sum(1 for t in plan.transitions if t.reason == "ratio"),
        revived=len(plan.revivals),
        revivals_deferred=len(plan.revivals_deferred),
        deleted=len(plan.deletions),
        shares={
            f"{snap.scopes[code][0]}/{snap.scopes[code][1]}": counts
            for code, counts in sorted(plan.shares.items())
            if code < len(snap.scopes)
        },
    )


# -- compression texts ---------------------------------------------------------------------


def _prefetch(engine: Engine, day: date, like: datetime) -> dict[str, list[Compressed]]:
    """Compression texts for the day's planned transitions, made outside the transaction."""
    _, _, plan = plan_of(engine, day, like)
    texts: dict[str, list[Compressed]] = {}
    wanted = [t for t in plan.transitions if t.from_level < min(t.to_level, Level.TRACE) + 1]
    memories = {m.id: m for m in engine.store.get_many([t.memory_id for t in wanted])}
    for t in wanted:
        memory = memories.get(t.memory_id)
        if memory is not None and t.from_level < min(t.to_level, Level.TRACE):
            texts[text_key(memory, t.to_level)] = compress_steps(
                engine, memory, t.from_level, t.to_level
            )
    return texts


# -- one day -------------------------------------------------------------------------------


def run_day(engine: Engine, day: date, like: datetime) -> DaySummary | None:
    started = time.perf_counter()
    # Summaries and keywords are made before the transaction, so other writers (a hook, the
    # command line) wait for the day's writes only, not for its analysis; a memory that
    # changed meanwhile is compressed again inside.
    prefetched = _prefetch(engine, day, like)
    store = engine.store
    with store.atomic():
        done = last_day(engine)
        if done is not None and done >= day:
            return None  # another process applied it meanwhile
        summary = _apply_day(engine, day, like, prefetched)
        store.set_state(LAST_DAY_KEY, day.isoformat())
        store.set_state(LAST_RUN_KEY, format_ts(engine.clock.now()))
    summary.seconds = time.perf_counter() - started
    return summary


def _apply_day(
    engine: Engine, day: date, like: datetime, prefetched: dict[str, list[Compressed]]
) -> DaySummary:
    cfg = engine.config
    store = engine.store
    moment, snap, plan = plan_of(engine, day, like)
    pop, arc = snap.population, snap.archived
    summary = summarize(day, moment, snap, plan)
    stamp = day.isoformat()
    log: list[LogEntry] = []

    def entry(event: Event, memory_id: str, scope: int, **values: object) -> LogEntry:
        user, agent = snap.scopes[scope]
        return LogEntry(
            event=event,
            memory_id=memory_id,
            at=moment,
            user_id=user,
            agent_id=agent,
            batch_day=stamp,
            **values,  # type: ignore[arg-type]
        )

    # Steps 1–2: reinforcement or a day older, and the new scores, for every active memory.
    if len(pop):
        store.write_scores(
            pop.ids.tolist(),
            plan.memory_days.tolist(),
            plan.coefficient.tolist(),
            plan.recall_count.tolist(),
            plan.score.tolist(),
        )
    for i in np.flatnonzero(plan.reinforced).tolist():
        log.append(
            entry(
                Event.REINFORCE,
                str(pop.ids[i]),
                int(pop.scope[i]),
                level_before=int(pop.level[i]),
                level_after=int(pop.level[i]),
                score_before=float(pop.score[i]),
                score_after=float(plan.score[i]),
                details={
                    "memory_days": [float(pop.memory_days[i]), float(plan.memory_days[i])],
                    "decay_coefficient": [float(pop.coefficient[i]), float(plan.coefficient[i])],
                    "recall_count": int(plan.recall_count[i]),
                },
            )
        )
    # Steps 3, 3.5, 4 and the archive: compression (with new vectors), forced or not.
    changed = apply_transitions(engine, plan, snap, moment, prefetched, log, entry)
    # Steps 5–6: relations to inactive memories go, reversed ones are turned.
    active = active_nodes(snap, plan)
    for r in plan.revivals:
        active.pop(r.memory_id, None)  # revived after linking (step order of the issue)
    review = review_links(snapshot_links(snap), active, cfg.relations.score_proximity_threshold)
    store.remove_links([(link.source, link.target) for link, _ in review.removed])
    store.add_links([link for link, _, _ in review.added], moment)
    scope_of = scope_lookup(snap)
    for link, why in review.removed:
        summary.unlinked += why == "inactive"
        summary.turned += why == "turned"
        log.append(
            entry(
                Event.UNLINK,
                link.source,
                scope_of.get(link.source, 0),
                details={"target": link.target, "type": link.type, "why": why},
            )
        )
    for link, why, _ in review.added:
        log.append(
            entry(
                Event.LINK,
                link.source,
                scope_of.get(link.source, 0),
                details={"target": link.target, "type": link.type, "why": why},
            )
        )
    # Step 7: typed relations for new memories, same_topic for new and changed ones.
    if cfg.relations.enable_auto_linking:
        existing = surviving_links(snap, review)
        first = plan.fresh | plan.caught_up  # new here, or imported with an older date
        new = {str(pop.ids[i]) for i in np.flatnonzero(first).tolist()}
        new -= {t.memory_id for t in plan.archived_today}
        for made in link_day(engine, snap, scope_of, moment, new, changed, existing, active):
            summary.linked += 1
            details: dict[str, object] = {
                "target": made.link.target,
                "type": made.link.type,
                "why": made.why,
            }
            if made.similarity == made.similarity:  # not NaN
                details["similarity"] = round(made.similarity, 4)
            log.append(
                entry(
                    Event.LINK, made.link.source, scope_of.get(made.link.source, 0), details=details
                )
            )
    # Revival of requested archived memories, within the Level 3 share.
    for r in plan.revivals:
        store.update(
            r.memory_id,
            MemoryPatch(
                current_level=Level.TRACE,
                archived_at=None,
                revival_requested=False,
                revival_requested_at=None,
                recalled_since_last_batch=True,
                recall_count=r.recall_count,
                retention_score=r.score,
                memory_days=r.memory_days,
            ),
        )
        log.append(
            entry(
                Event.REVIVE,
                r.memory_id,
                int(arc.scope[r.index]),
                level_before=Level.ARCHIVED,
                level_after=Level.TRACE,
                score_after=r.score,
                details={"memory_days": round(r.memory_days, 4)},
            )
        )
    for i in plan.revivals_deferred:
        memory_id = str(arc.ids[i])
        store.update(memory_id, MemoryPatch(revival_requested=False, revival_requested_at=None))
        log.append(
            entry(
                Event.DEFER,
                memory_id,
                int(arc.scope[i]),
                level_before=Level.ARCHIVED,
                level_after=Level.ARCHIVED,
                details={"why": "level 3 is at its target share"},
            )
        )
    # Step 8: auto-delete from the archive.
    for i in plan.deletions:
        memory_id = str(arc.ids[i])
        if store.delete(memory_id):
            log.append(
                entry(
                    Event.DELETE,
                    memory_id,
                    int(arc.scope[i]),
                    level_before=Level.ARCHIVED,
                    details={"why": "auto_delete", "mode": cfg.archive.delete_condition_mode},
                )
            )
    store.append_log(log)
    return summary
