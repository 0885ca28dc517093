"""The batch's state and guards: the days recorded in the store, the lock that lets one batch
run at a time, the check on a batch asked for ahead of the clock, and the report it returns."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from kioku.core.lifecycle.days import latest_due_day
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import KiokuError

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "AHEAD_TOLERANCE",
    "LAST_DAY_KEY",
    "LAST_RUN_KEY",
    "STORE_LOCK_NAME",
    "BatchAheadError",
    "BatchLockedError",
    "BatchReport",
    "DaySummary",
    "LockingStore",
    "batch_lock",
    "behind_message",
    "check_ahead",
    "last_day",
    "last_run",
    "left_message",
    "warn",
]

_log = logging.getLogger("kioku.service.lifecycle.batch")

#: ``state`` keys: the date of the last day applied, and when a batch last finished (spec).
LAST_DAY_KEY: Final = "batch_last_day"
LAST_RUN_KEY: Final = "last_compression_run"


class BatchLockedError(KiokuError):
    """Another batch holds the lock."""


class BatchAheadError(KiokuError):
    """A batch asked for a moment well ahead of the clock without ``--force``."""

    exit_code = 2


#: How far ahead of the clock ``kioku batch --now`` may run without ``--force``.
AHEAD_TOLERANCE: Final = timedelta(days=1)


def check_ahead(moment: datetime, clock_now: datetime, force: bool) -> None:
    """Refuse a batch more than a day ahead of the clock unless forced: it would age every
    memory by days that have not passed, and no batch would run until the clock got there."""
    ahead = moment - clock_now
    if force or ahead <= AHEAD_TOLERANCE:
        return
    days = ahead.total_seconds() / 86_400.0
    raise BatchAheadError(
        f"--now {format_ts(moment)} is {days:.1f} days ahead of the clock "
        f"({format_ts(clock_now)}): the batch would age every memory by days that have not "
        "passed and run no batch until then",
        hint="add --force to do it anyway (a copy made with `kioku backup` is a safer place), "
        "or preview a year with `kioku simulate`",
    )


@dataclass(slots=True)
class DaySummary:
    """What one replayed day of the batch did."""

    day: str
    moment: str
    memories: int = 0
    reinforced: int = 0
    compressed: dict[str, int] = field(default_factory=dict)  # "1->2": n
    archived: int = 0
    ratio_forced: int = 0
    revived: int = 0
    revivals_deferred: int = 0
    deleted: int = 0
    linked: int = 0
    unlinked: int = 0
    turned: int = 0
    shares: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "day": self.day,
            "moment": self.moment,
            "memories": self.memories,
            "reinforced": self.reinforced,
            "compressed": dict(self.compressed),
            "archived": self.archived,
            "ratio_forced": self.ratio_forced,
            "revived": self.revived,
            "revivals_deferred": self.revivals_deferred,
            "deleted": self.deleted,
            "linked": self.linked,
            "unlinked": self.unlinked,
            "turned": self.turned,
            "shares": self.shares,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class BatchReport:
    """What a batch run did, day by day."""

    #: "done", "up_to_date", "already_running", "dry_run", or "clock_behind" (the clock is
    #: before the last batch day: nothing is done)
    status: str
    days: list[DaySummary] = field(default_factory=list)
    due: list[str] = field(default_factory=list)
    last_day: str | None = None
    #: Due days an automatic batch left for `kioku batch` (batch.max_auto_catch_up_days).
    left_due: int = 0
    warnings: list[str] = field(default_factory=list)
    #: What the consolidation run after the batch did (``consolidation.enabled``), if any.
    consolidation: dict[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "status": self.status,
            "due": list(self.due),
            "last_day": self.last_day,
            "left_due": self.left_due,
            "warnings": list(self.warnings),
            "days": [d.to_dict() for d in self.days],
        }
        if self.consolidation is not None:
            out["consolidation"] = self.consolidation
        return out


#: The name of the batch's lock in a store that has store-wide locks.
STORE_LOCK_NAME: Final = "batch"


@runtime_checkable
class LockingStore(Protocol):
    """A store whose processes may run on several machines, with a store-wide lock that
    every one of them sees (PostgreSQL's advisory locks); SQLite's file lock is enough
    for a store on one machine."""

    def exclusive(self, name: str) -> contextlib.AbstractContextManager[bool]: ...


@contextlib.contextmanager
def batch_lock(path: Path | None, store: object | None = None) -> Iterator[None]:
    """The batch's exclusive, non-blocking lock: the file ``path`` (released by the OS if the
    process dies), then, for a store with store-wide locks, the store's own; BatchLockedError
    when another process holds either."""
    with _file_lock(path), _store_lock(store):
        yield


@contextlib.contextmanager
def _store_lock(store: object | None) -> Iterator[None]:
    if not isinstance(store, LockingStore):
        yield
        return
    with store.exclusive(STORE_LOCK_NAME) as taken:
        if not taken:
            raise BatchLockedError(
                "a batch is already running on this store (another process holds its lock)",
                hint="wait for it",
            )
        yield


@contextlib.contextmanager
def _file_lock(path: Path | None) -> Iterator[None]:
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            _lock_fd(fd)
        except OSError as exc:
            raise BatchLockedError("a batch is already running", hint="wait for it") from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def _lock_fd(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def last_day(engine: Engine) -> date | None:
    """The last batch day applied; for a store whose batches ran before kioku kept the day
    (spec 000 keeps only ``last_compression_run``), the day that run belonged to."""
    raw = engine.store.get_state(LAST_DAY_KEY)
    if raw is not None:
        with contextlib.suppress(ValueError):
            return date.fromisoformat(raw)
    run = last_run(engine)
    if run is None:
        return None
    return latest_due_day(run, engine.config.compression.schedule_hour)


def last_run(engine: Engine) -> datetime | None:
    raw = engine.store.get_state(LAST_RUN_KEY)
    try:
        return None if raw is None else parse_ts(raw, engine.clock.now().tzinfo or UTC)
    except ValueError:
        return None


def warn(engine: Engine, report: BatchReport, message: str) -> None:
    report.warnings.append(message)
    if engine.on_warning is not None:
        engine.on_warning(message)
    else:
        _log.warning("%s", message)


def behind_message(done: date, now: datetime) -> str:
    return (
        f"the clock ({format_ts(now)}) is before the last batch day ({done.isoformat()}): "
        "nothing was done and no memory changed; the batch resumes once the clock passes "
        f"{(done + timedelta(days=1)).isoformat()} (check the system clock)"
    )


def left_message(
    done: date | None, now: datetime, days: list[date], latest: date, left: int, limit: int
) -> str:
    since = "" if done is None else f"the last batch day was {done.isoformat()} and "
    return (
        f"{since}the clock says {format_ts(now)}: an automatic batch applies at most {limit} "
        f"day(s) (batch.max_auto_catch_up_days), so it stopped at {days[-1].isoformat()} and "
        f"{left} day(s) up to {latest.isoformat()} are still due; if the clock is "
        "right, run `kioku batch` to apply them, otherwise fix the clock"
    )
