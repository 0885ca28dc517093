"""Replaying the nightly batch day after day on a throwaway store (``kioku simulate``).

The simulation never touches the real store: it works on a temporary home, either a copy made
with the store's backup (``from_store``) or a fresh store of synthetic memories. Each simulated
day adds memories during the day (a spec-like mix: casual/work/decision/emotional about
35/35/15/15 %, intensities 5–100, most of them 20–60, a few protected), recalls some of the
memories (a recall of an archived memory asks for its revival), then runs the day's batch with
:meth:`Kioku.batch` at the batch time on a fixed clock, and checks what it did:

* ``ratios``: no non-protected level holds more than its target share,
  ``count ≤ floor(share × non-protected total, archive included)`` (比率強制), once the scope
  has ``compression.ratio_min_memories`` memories;
* ``protected``: protected memories stay where they were — every protected memory made by
  the simulation stays at Level 1 (保護記憶);
* ``log``: the lifecycle log accounts for every level change: the level counts after the
  batch are the counts before it, plus the day's new memories, plus the log's compress,
  archive, revive and delete rows of the day.

Counts and checks are those of the source's owner (user and agent); the batch itself runs
over every owner of a copied store, as it does on the real one.

No provider is ever called and nothing leaves the machine: the offline embedder gives the
vectors (unless the store's come from another offline model), and compression keeps the first
words of each field instead of summarising them — a simulation is about levels, shares and the
log, not about the wording of summaries, and real summaries would make a year take far longer.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final

from kioku.adapters.clock import FixedClock
from kioku.config.schema import Config, EmbeddingConfig, LlmConfig
from kioku.core.lifecycle.days import batch_moment, latest_due_day
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import archive_share, ratio_targets
from kioku.core.model import Embedding, Level, Memory
from kioku.errors import KiokuError
from kioku.ports.store import MemoryPatch
from kioku.service.home import DB_FILENAME, store_factory
from kioku.service.lifecycle.batch import batch
from kioku.service.lifecycle.history import lifecycle_log
from kioku.service.lifecycle.simulate_checks import (
    SimDay,
    Simulation,
    check_log,
    check_protected,
    check_ratios,
    count_levels,
    sum_transitions,
)
from kioku.service.lifecycle.simulate_data import CATEGORY_MIX, QuickAnalyzer, synthetic_draft
from kioku.service.remember.drafts import build_memory
from kioku.service.runtime import Runtime

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["simulate"]

Progress = Callable[[int, int], None]

#: Recalls per day as a share of the memories added per day; some hit the archive.
RECALL_SHARE: Final = 0.2
REVIVAL_SHARE: Final = 0.1
#: Share of new memories the user asks to protect (within protection.max_protected_memories).
PROTECT_SHARE: Final = 0.01
#: When a simulated day's memories are made: hours after that day's batch.
_DAY_START_H: Final = 6.0
_DAY_HOURS: Final = 14.0

_LEVELS: Final = (Level.FULL, Level.SUMMARY, Level.TRACE, Level.ARCHIVED)
_LOG_EVENTS: Final = (Event.COMPRESS, Event.ARCHIVE, Event.REVIVE, Event.DELETE)


# -- the throwaway store -------------------------------------------------------------------


def _offline(config: Config) -> Config:
    """``config`` without providers: the offline analyzer and, unless the embedder is the
    offline one already, the default offline embedder."""
    embedding = config.embedding
    if embedding.provider.strip().lower() != "offline":
        embedding = EmbeddingConfig()
    return replace(config, llm=LlmConfig(), embedding=embedding)


def simulate(
    source: Engine,
    *,
    days: int,
    per_day: int,
    from_store: bool = False,
    seed: int = 0,
    progress: Progress | None = None,
) -> Simulation:
    """Simulate ``days`` daily batches after now on a temporary store (see the module text).

    ``source`` gives the configuration, the scope and the start time; with ``from_store`` its
    store is copied (read only), otherwise it is never opened.
    """
    if days < 1 or per_day < 0:
        raise ValueError("days must be at least 1 and per_day at least 0")
    if from_store and source.db_path is not None and not source.db_path.exists():
        raise KiokuError(
            f"there is no store at {source.db_path} to copy",
            hint="check --home, or simulate without --from-store",
        )
    started = time.perf_counter()
    config = _offline(source.config)
    start = source.clock.now()
    hour = config.compression.schedule_hour
    first = latest_due_day(start, hour)
    with tempfile.TemporaryDirectory(prefix="kioku-simulate-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        if from_store:
            source.store.backup(home / DB_FILENAME, overwrite=False)
        clock = FixedClock(start)
        with Runtime(
            store_factory(home, config),
            config,
            clock=clock,
            user_id=source.user_id,
            agent_id=source.agent_id,
            home=home,
            analyzer=QuickAnalyzer(),
            env={},
        ) as sim:
            runner = _Runner(sim, clock, random.Random(seed), per_day)  # noqa: S311 - not secret
            result = Simulation(
                mode="from_store" if from_store else "synthetic",
                start=(first + timedelta(days=1)).isoformat(),
                targets={
                    **ratio_targets(config),
                    Level.ARCHIVED: archive_share(config),
                },
                ratio_min_memories=config.compression.ratio_min_memories,
            )
            for n in range(days):
                day = first + timedelta(days=n)
                result.days.append(runner.run_day(n + 1, day, hour))
                if progress is not None:
                    progress(n + 1, days)
    result.seconds = time.perf_counter() - started
    return result


class _Pool:
    """Ids to draw from at random, with O(1) removal."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._items: list[str] = []
        self._where: dict[str, int] = {}
        for memory_id in ids:
            self.add(memory_id)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, memory_id: str) -> None:
        if memory_id not in self._where:
            self._where[memory_id] = len(self._items)
            self._items.append(memory_id)

    def discard(self, memory_id: str) -> None:
        at = self._where.pop(memory_id, None)
        if at is None:
            return
        last = self._items.pop()
        if at < len(self._items):
            self._items[at] = last
            self._where[last] = at

    def pick(self, rng: random.Random) -> str:
        return self._items[rng.randrange(len(self._items))]


class _Runner:
    """The state carried from one simulated day to the next."""

    def __init__(self, sim: Engine, clock: FixedClock, rng: random.Random, per_day: int) -> None:
        self.sim = sim
        self.clock = clock
        self.rng = rng
        self.per_day = per_day
        self.config = sim.config
        store = sim.store
        snap = store.batch_snapshot(clock.now() + timedelta(days=365_000))
        scope = (sim.user_id, sim.agent_id)
        code = snap.scopes.index(scope) if scope in snap.scopes else -1
        pop, arc = snap.population, snap.archived
        self.active = _Pool(str(i) for i, s in zip(pop.ids, pop.scope, strict=True) if s == code)
        self.archived = _Pool(str(i) for i, s in zip(arc.ids, arc.scope, strict=True) if s == code)
        self.counts = count_levels(store, sim.user_id, sim.agent_id)
        self.protected_start = self.counts.protected
        self.protected_added = 0
        self.categories = [c for c in CATEGORY_MIX if c in self.config.categories] or list(
            self.config.categories
        )
        self.weights = [CATEGORY_MIX.get(c, 1.0) for c in self.categories]

    # -- one day ---------------------------------------------------------------------------

    def run_day(self, index: int, day: date, hour: int) -> SimDay:
        started = time.perf_counter()
        sim, store = self.sim, self.sim.store
        previous = batch_moment(day, hour, self.clock.now())
        moment = batch_moment(day + timedelta(days=1), hour, previous)
        self._set_clock(previous + timedelta(hours=_DAY_START_H + _DAY_HOURS))
        new = self._new_memories(previous)
        recalled, revivals = self._recall()
        before = self.counts
        self._set_clock(moment)
        report = batch(sim, now=moment)
        if report.status not in ("done", "up_to_date"):
            raise KiokuError(f"the simulated batch did not run ({report.status})")
        applied = [d.day for d in report.days]
        rows = self._log_rows(applied, hour, moment)
        for row in rows:
            if row.event is Event.ARCHIVE:
                self.active.discard(row.memory_id)
                self.archived.add(row.memory_id)
            elif row.event is Event.REVIVE:
                self.archived.discard(row.memory_id)
                self.active.add(row.memory_id)
            elif row.event is Event.DELETE:
                self.active.discard(row.memory_id)
                self.archived.discard(row.memory_id)
        after = count_levels(store, sim.user_id, sim.agent_id)
        self.counts = after
        protected_new = sum(1 for m in new if m.protected)
        self.protected_added += protected_new
        checks = [
            check_ratios(after, self.config),
            check_protected(after, self._expected_protected()),
            check_log(before, len(new), rows, after),
        ]
        transitions = sum_transitions(d.to_dict() for d in report.days)
        return SimDay(
            index=index,
            day=(day + timedelta(days=1)).isoformat(),
            batch_days=applied,
            added=len(new),
            protected_added=protected_new,
            recalled=recalled,
            revival_requests=revivals,
            counts=after,
            transitions=transitions,
            checks=checks,
            seconds=time.perf_counter() - started,
        )

    def _expected_protected(self) -> tuple[int, int, int, int]:
        start = self.protected_start
        return (start[0] + self.protected_added, start[1], start[2], start[3])

    def _set_clock(self, moment: datetime) -> None:
        self.clock.advance(moment - self.clock.now())

    def _log_rows(self, applied: list[str], hour: int, like: datetime) -> list[LogEntry]:
        if not applied:
            return []
        since = batch_moment(date.fromisoformat(applied[0]), hour, like)
        days = set(applied)
        rows = lifecycle_log(self.sim, since=since, events=[e.value for e in _LOG_EVENTS])
        return [r for r in rows if r.batch_day in days]

    # -- what happens during a day ---------------------------------------------------------

    def _new_memories(self, previous: datetime) -> list[Memory]:
        if self.per_day == 0:
            return []
        rng, config = self.rng, self.config
        room = (
            config.protection.max_protected_memories
            - sum(self.protected_start)
            - self.protected_added
        )
        offsets = sorted(rng.uniform(0.0, _DAY_HOURS * 3600.0) for _ in range(self.per_day))
        memories: list[Memory] = []
        for offset in offsets:
            created = previous + timedelta(hours=_DAY_START_H, seconds=int(offset))
            category = rng.choices(self.categories, self.weights)[0]
            protect = room > 0 and rng.random() < PROTECT_SHARE
            room -= protect
            memories.append(
                build_memory(
                    synthetic_draft(self.rng, category, created, protect),
                    config=config,
                    now=created,
                    id_suffix=f"{rng.getrandbits(32):08x}",
                    user_id=self.sim.user_id,
                    agent_id=self.sim.agent_id,
                )
            )
        embedder = self.sim.embedder
        vectors = embedder.embed([f"{m.trigger}\n{m.content}" for m in memories])
        memories = [
            replace(m, embedding=Embedding(embedder.model_id, tuple(v.tolist())))
            for m, v in zip(memories, vectors, strict=True)
        ]
        self.sim.store.add_many(memories)
        for m in memories:
            self.active.add(m.id)
        return memories

    def _recall(self) -> tuple[int, int]:
        """Mark some memories recalled; a recall of an archived one asks for its revival."""
        expected = self.per_day * RECALL_SHARE
        n = int(expected) + (self.rng.random() < expected - int(expected))
        recalled: set[str] = set()
        revive: set[str] = set()
        for _ in range(n):
            if len(self.archived) and self.rng.random() < REVIVAL_SHARE:
                revive.add(self.archived.pick(self.rng))
            elif len(self.active):
                recalled.add(self.active.pick(self.rng))
        store = self.sim.store
        with store.atomic():
            marked = store.mark_recalled(sorted(recalled), at=self.clock.now())
            for memory_id in sorted(revive):
                store.update(
                    memory_id,
                    MemoryPatch(revival_requested=True, revival_requested_at=self.clock.now()),
                )
        return marked, len(revive)
