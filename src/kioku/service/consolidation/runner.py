"""The schedule of consolidation: which daily, weekly and monthly runs are due, and running
them exactly once each.

Consolidation shares the nightly batch's clock and lock: a batch day ``D`` (at
``compression.schedule_hour``) is the daily period ``D``, whose episodes are those made since
the previous daily run's moment; the day that falls on ``consolidation.weekly_day`` is also the
weekly period (its ISO week), and the day that falls on ``consolidation.monthly_day`` the
monthly one. Each period is planned first (every read and every LLM call) and then applied in
one transaction together with the record that it is done: a kill at any moment leaves the
period whole or untouched, and a second run of a period that is done changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

from kioku.core.lifecycle.days import batch_moment, latest_due_day
from kioku.errors import KiokuError, ValidationError
from kioku.ports.store_records import ConsolidationRun
from kioku.service.consolidation.common import Action, Run

if TYPE_CHECKING:
    from kioku.ports.consolidation import Nli
    from kioku.service.engine import Engine

__all__ = ["LEVELS", "ConsolidationReport", "PeriodReport", "consolidate", "due_periods"]

Level = Literal["daily", "weekly", "monthly"]
LEVELS: Final[tuple[Level, ...]] = ("daily", "weekly", "monthly")
#: The most days one run consolidates one by one; older ones join the first day's window.
MAX_DAYS: Final = 31


@dataclass(slots=True)
class PeriodReport:
    """One period's run: what it did (or would do), and how it ended."""

    level: str
    period: str
    moment: datetime
    start: datetime | None = None
    status: str = "planned"
    actions: list[Action] = field(default_factory=list)
    error: str = ""

    def counts(self) -> dict[str, int]:
        return dict(Counter(a.action for a in self.actions if a.action != "collect"))

    def to_dict(self, *, details: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "level": self.level,
            "period": self.period,
            "status": self.status,
            "at": self.moment.isoformat(),
            "counts": self.counts(),
        }
        if self.error:
            out["error"] = self.error
        if details:
            out["actions"] = [a.to_dict() for a in self.actions]
        return out


@dataclass(slots=True)
class ConsolidationReport:
    """What a consolidation run did: every period it took up, in order."""

    status: str = "up_to_date"
    periods: list[PeriodReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self, *, details: bool = True) -> dict[str, Any]:
        return {
            "status": self.status,
            "periods": [p.to_dict(details=details) for p in self.periods],
            "warnings": list(self.warnings),
        }


def _week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def _last_daily(engine: Engine) -> date | None:
    runs = engine.store.consolidation_runs(engine.user_id, engine.agent_id, "daily", limit=1)
    return date.fromisoformat(runs[0].period) if runs else None


def due_periods(
    engine: Engine, now: datetime, levels: Sequence[str] | None = None
) -> list[PeriodReport]:
    """The periods due at ``now``, in the order they run. ``levels`` names the levels asked
    for by hand: those run for the current period even when it is not their day."""
    cfg = engine.config.consolidation
    hour = engine.config.compression.schedule_hour
    latest = latest_due_day(now, hour)
    last = _last_daily(engine)
    if last is None:
        days = [latest]
    else:
        first = max(last + timedelta(days=1), latest - timedelta(days=MAX_DAYS - 1))
        days = [first + timedelta(days=n) for n in range((latest - first).days + 1)]
    wanted = set(levels or LEVELS)
    forced = set(levels or ())
    periods: list[PeriodReport] = []
    previous = None if last is None else batch_moment(last, hour, now)
    # The last daily day again: a run stopped after its daily period may owe its weekly or
    # monthly one (done periods are left out below).
    for day in ([last] if last is not None else []) + days:
        moment = batch_moment(day, hour, now)
        if "daily" in wanted and day != last:
            periods.append(PeriodReport("daily", day.isoformat(), moment, start=previous))
        previous = moment
        if "weekly" in wanted and day.isoweekday() == cfg.weekly_day and "weekly" not in forced:
            periods.append(PeriodReport("weekly", _week(day), moment))
        if "monthly" in wanted and day.day == cfg.monthly_day and "monthly" not in forced:
            periods.append(PeriodReport("monthly", day.strftime("%Y-%m"), moment))
    moment = batch_moment(latest, hour, now)
    if "weekly" in forced:
        periods.append(PeriodReport("weekly", _week(latest), moment))
    if "monthly" in forced:
        periods.append(PeriodReport("monthly", latest.strftime("%Y-%m"), moment))
    return [
        p
        for p in periods
        if not engine.store.consolidation_done(p.level, p.period, engine.user_id, engine.agent_id)
    ]


def _nli(engine: Engine) -> Nli | None:
    from kioku.adapters.nli import make_nli

    return make_nli(engine.config.consolidation.nli)


def _plan(engine: Engine, period: PeriodReport, nli: Nli | None) -> list[Action]:
    if period.level == "daily":
        from kioku.service.consolidation.daily import plan_daily
        from kioku.service.consolidation.policy import (
            plan_capacity_compression,
            plan_low_importance,
        )

        actions = plan_daily(engine, period.start, period.moment, period.moment, nli=nli)
        policy = engine.config.lifecycle.policy
        if policy in ("importance", "capacity"):
            actions += plan_low_importance(engine, period.moment)
        if policy == "capacity":
            taken = {mid for a in actions if a.action == "compress" for mid in a.ids}
            actions += [
                a for a in plan_capacity_compression(engine, period.moment) if a.ids[0] not in taken
            ]
        return actions
    if period.level == "weekly":
        from kioku.service.consolidation.weekly import plan_weekly

        return plan_weekly(engine, period.moment, nli=nli)
    from kioku.service.consolidation.monthly import plan_monthly

    return plan_monthly(engine, period.moment)


def _apply(engine: Engine, period: PeriodReport) -> bool:
    """Apply the period's actions and record it done, in one transaction; False when another
    run recorded it first."""
    store = engine.store
    run = Run(engine, period.moment, period.period)
    with store.atomic():
        if store.consolidation_done(period.level, period.period, engine.user_id, engine.agent_id):
            return False
        for action in period.actions:
            if action.run is None:
                continue
            if action.action not in ("add_knowledge", "add_procedure"):
                run.flush()  # what it reads is stored
            action.run(run)
        run.flush()
        if run.log:
            store.append_log(run.log)
        store.record_consolidation(
            ConsolidationRun(
                kind=period.level,
                period=period.period,
                user_id=engine.user_id,
                agent_id=engine.agent_id,
                done_at=period.moment,
                report={"counts": period.counts(), "changes": len(run.log)},
            )
        )
    return True


def consolidate(
    engine: Engine,
    *,
    levels: Sequence[str] | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
    use_lock: bool = True,
) -> ConsolidationReport:
    """Run every consolidation period due at ``now`` (default: the clock), oldest first, or
    with ``levels`` the named levels for the current period. ``dry_run`` plans and stops."""
    from kioku.service.lifecycle.batch_state import BatchLockedError, batch_lock

    for level in levels or ():
        if level not in LEVELS:
            raise ValidationError("level", level, "daily, weekly or monthly")
    moment = now or engine.clock.now()
    lock = None if engine.home is None or not use_lock else engine.home / "batch.lock"
    report = ConsolidationReport()
    try:
        with batch_lock(lock, engine.store if use_lock else None):
            periods = due_periods(engine, moment, levels)
            if not periods:
                return report
            nli = _nli(engine)
            report.status = "dry_run" if dry_run else "done"
            for period in periods:
                report.periods.append(period)
                try:
                    period.actions = _plan(engine, period, nli)
                except KiokuError as exc:
                    period.status, period.error = "failed", str(exc)
                    report.status = "failed"
                    report.warnings.append(
                        f"{period.level} consolidation of {period.period} stopped: {exc}; "
                        "nothing of it was written, the next run takes it up again"
                    )
                    break
                if dry_run:
                    period.status = "dry_run"
                    continue
                period.status = "done" if _apply(engine, period) else "already_done"
    except BatchLockedError:
        report.status = "already_running"
    if report.status == "done":
        _log_cron(engine, report)
    return report


def _log_cron(engine: Engine, report: ConsolidationReport) -> None:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    done = [p for p in report.periods if p.status == "done"]
    if not done:
        return
    summary = ", ".join(f"{p.level} {p.period}" for p in done[:6])
    log_events(
        engine,
        [
            make_event(
                engine, EventType.CRON_EXECUTED, task="consolidate", exit_code=0, summary=summary
            )
        ],
    )
