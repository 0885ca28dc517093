"""The nightly batch: plan each due day (kioku.core.lifecycle), then apply it in one transaction.

Order of one day, as spec 000's 圧縮処理の内容 lays it out: recall reinforcement or +1 day,
retention, threshold compression with re-embedding, ratio enforcement, archive, relation
integrity and direction, auto-linking, revival of requested archived memories, auto-delete,
and the day is recorded as done. Everything of one day is written in one transaction together
with the record that the day is done, so a kill at any moment leaves either the whole day or
none of it, and running again applies each day exactly once.

Compressing takes time (an LLM's answers, or thousands of offline summaries on a big day), so
the texts are made before the transaction from a first plan and reused inside it when the
memory has not changed meanwhile: other writers wait only for the day's writes. The transaction
re-reads and re-plans, so recalls and new memories that arrive in between are never lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from kioku.core.lifecycle.days import MAX_CATCH_UP_DAYS, due_days, latest_due_day
from kioku.core.lifecycle.links import review_links
from kioku.service.lifecycle.batch_day import plan_of, run_day, summarize
from kioku.service.lifecycle.batch_links import active_nodes, snapshot_links
from kioku.service.lifecycle.batch_state import (
    AHEAD_TOLERANCE,
    LAST_DAY_KEY,
    LAST_RUN_KEY,
    BatchAheadError,
    BatchLockedError,
    BatchReport,
    DaySummary,
    batch_lock,
    behind_message,
    check_ahead,
    last_day,
    last_run,
    left_message,
    warn,
)
from kioku.service.vectors import warm_vector_cache

if TYPE_CHECKING:
    from datetime import date

    from kioku.service.engine import Engine

__all__ = [
    "AHEAD_TOLERANCE",
    "LAST_DAY_KEY",
    "LAST_RUN_KEY",
    "BatchAheadError",
    "BatchLockedError",
    "BatchReport",
    "DaySummary",
    "batch",
    "batch_lock",
    "check_ahead",
    "last_day",
    "last_run",
    "run_batches",
]

_log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def batch(
    engine: Engine,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    auto: bool = False,
    wait_for_vectors: bool = False,
) -> BatchReport:
    """:func:`run_batches` under the home's batch lock (none for a store without a home), then
    the vector cache prepared for the next process when days were applied;
    ``wait_for_vectors``: and what the store builds from it in the background (a batch in
    a process of its own, which would stop it on exit)."""
    lock = None if engine.home is None else engine.home / "batch.lock"
    report = run_batches(
        engine, now=now, dry_run=dry_run, progress=progress, lock_path=lock, auto=auto
    )
    if report.status == "done":
        _log_batch(engine, report)
        if engine.config.consolidation.enabled:
            _consolidate(engine, report, now)
        warm_vector_cache(engine, wait=wait_for_vectors)
    return report


def _consolidate(engine: Engine, report: BatchReport, now: datetime | None) -> None:
    """Spec 001's consolidation of the days the batch applied (same schedule, same lock)."""
    from kioku.service.consolidation.runner import consolidate

    done = consolidate(engine, now=now)
    report.consolidation = done.to_dict(details=False)
    report.warnings.extend(done.warnings)


def _log_batch(engine: Engine, report: BatchReport) -> None:
    """One ``cron_executed`` event for the days applied (spec 001's CRON)."""
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    days = [d.day for d in report.days]
    summary = f"{len(days)} day(s)" + (f", {days[0]} to {days[-1]}" if days else "")
    log_events(
        engine,
        [make_event(engine, EventType.CRON_EXECUTED, task="batch", exit_code=0, summary=summary)],
    )


def run_batches(
    engine: Engine,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    lock_path: Path | None = None,
    auto: bool = False,
) -> BatchReport:
    """Apply every due batch day up to ``now`` (default: the clock), oldest first.

    ``auto`` is a batch nobody asked for by hand (the scheduler's, or the overdue fallback's):
    it applies at most ``batch.max_auto_catch_up_days`` days after the last batch day and
    leaves the rest, with a warning naming the command that applies them, so a clock set
    years ahead ages the store by that many days at most. A ``now`` before the last batch day
    (a clock that went backwards) does nothing, with a warning.
    """
    moment_now = now or engine.clock.now()
    hour = engine.config.compression.schedule_hour
    try:
        with batch_lock(lock_path, engine.store):
            done = last_day(engine)
            if done is not None and latest_due_day(moment_now, hour) < done:
                report = BatchReport(status="clock_behind", last_day=done.isoformat())
                warn(engine, report, behind_message(done, moment_now))
                return report
            days = due_days(done, moment_now, hour)
            limit = engine.config.batch.max_auto_catch_up_days
            left = 0
            latest = latest_due_day(moment_now, hour)
            if auto and done is not None:
                # From the last batch day forward, never from the clock backward.
                total = (latest - done).days
                days = [done + timedelta(days=n) for n in range(1, min(total, limit) + 1)]
                left = total - len(days)
            if done is not None and days and (days[0] - done).days > 1:
                skipped = (days[0] - done).days - 1
                skipped_message = (
                    f"the last batch day was {done.isoformat()}: catching up at most "
                    f"{MAX_CATCH_UP_DAYS} days, so {skipped} older day(s) are not replayed"
                )
            else:
                skipped_message = ""
            report = BatchReport(
                status="up_to_date" if not days else ("dry_run" if dry_run else "done"),
                due=[d.isoformat() for d in days],
                last_day=None if done is None else done.isoformat(),
                left_due=left,
            )
            if skipped_message:
                warn(engine, report, skipped_message)
            if left:
                warn(engine, report, left_message(done, moment_now, days, latest, left, limit))
            if dry_run:
                if days:
                    report.days.append(_dry_run(engine, days[0], moment_now))
                return report
            for n, day in enumerate(days):
                if progress is not None:
                    progress(f"day {day.isoformat()}", n, len(days))
                summary = run_day(engine, day, moment_now)
                if summary is not None:
                    report.days.append(summary)
                    report.last_day = summary.day
            return report
    except BatchLockedError:
        return BatchReport(status="already_running")


def _dry_run(engine: Engine, day: date, like: datetime) -> DaySummary:
    moment, snap, plan = plan_of(engine, day, like)
    summary = summarize(day, moment, snap, plan)
    active = active_nodes(snap, plan)
    for r in plan.revivals:
        active.pop(r.memory_id, None)  # as in the real run: revived after linking
    changes = review_links(
        snapshot_links(snap), active, engine.config.relations.score_proximity_threshold
    )
    summary.unlinked = sum(1 for _, why in changes.removed if why == "inactive")
    summary.turned = sum(1 for _, why in changes.removed if why == "turned")
    return summary
