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

Counts and checks are those of the ``Kioku``'s owner (user and agent); the batch itself runs
over every owner of a copied store, as it does on the real one.

No provider is ever called and nothing leaves the machine: the offline embedder gives the
vectors (unless the store's come from another offline model), and compression keeps the first
words of each field instead of summarising them — a simulation is about levels, shares and the
log, not about the wording of summaries, and real summaries would make a year take far longer.
"""

from __future__ import annotations

import math
import random
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Final

from kioku.adapters.clock import FixedClock
from kioku.config.schema import Config, EmbeddingConfig, LlmConfig
from kioku.core.lifecycle.days import batch_moment, latest_due_day
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import archive_share, ratio_targets
from kioku.core.model import POSITIVE_TAGS, Embedding, Level, Memory
from kioku.errors import KiokuError
from kioku.ports.analyzer import Analysis, Compressed, Turn
from kioku.ports.store import MemoryFilter, MemoryPatch, Store
from kioku.service.drafts import MemoryDraft, build_memory
from kioku.service.home import DB_FILENAME, store_factory
from kioku.service.kioku import Kioku

__all__ = [
    "LevelCounts",
    "SimCheck",
    "SimDay",
    "Simulation",
    "check_log",
    "check_protected",
    "check_ratios",
    "count_levels",
    "simulate",
]

Progress = Callable[[int, int], None]

#: The synthetic mix: share of each category, and the most likely intensity in it.
CATEGORY_MIX: Final = {"casual": 0.35, "work": 0.35, "decision": 0.15, "emotional": 0.15}
INTENSITY_MODE: Final = {"casual": 25, "work": 35, "decision": 45, "emotional": 60}
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

_WORDS: Final = {
    "casual": "coffee lunch weather rain train movie novel weekend walk park cat dog bakery "
    "ramen music concert garden bicycle beach sunset market festival tea picnic game".split(),
    "work": "deploy database migration review release pipeline server latency index query "
    "cache schema container volume backup monitoring alert sprint ticket refactor api "
    "logging timeout cluster".split(),
    "decision": "chose adopt postgres sqlite json vendor budget roadmap hiring framework "
    "license pricing contract architecture rewrite policy rollout deadline".split(),
    "emotional": "birthday mother father friend wedding hospital graduation farewell "
    "promotion apology reunion letter memory childhood hometown anniversary".split(),
}
_COMMON: Final = (
    "today yesterday again finally slowly together alone early late small long quiet "
    "busy strange simple careful honest second first last new old"
).split()
_SYLLABLES: Final = (
    "ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no "
    "ha hi fu he ho ma mi mu me mo ya yu yo ra ri ru re ro wa"
).split()
_NEGATIVE_TAGS: Final = ("sadness", "anxiety", "frustration", "regret", "loneliness")
_OTHER_TAGS: Final = ("nostalgia", "surprise", "confusion", "determination")


@dataclass(frozen=True, slots=True)
class LevelCounts:
    """Memories of one scope per level (1–4), non-protected and protected apart."""

    free: tuple[int, int, int, int]
    protected: tuple[int, int, int, int]

    @property
    def total_free(self) -> int:
        """Every non-protected memory, the archive included: the ratios' denominator."""
        return sum(self.free)

    @property
    def total(self) -> int:
        return sum(self.free) + sum(self.protected)

    def level(self, level: int) -> int:
        """Every memory at ``level``, protected or not."""
        return self.free[level - 1] + self.protected[level - 1]

    def share(self, level: int) -> float:
        """The non-protected share of ``level`` (0 when there is none)."""
        total = self.total_free
        return self.free[level - 1] / total if total else 0.0

    @property
    def compression_rate(self) -> float:
        """Share of the non-protected memories compressed or archived (Level 2 or lower)."""
        total = self.total_free
        return (total - self.free[0]) / total if total else 0.0


def count_levels(store: Store, user_id: str, agent_id: str) -> LevelCounts:
    """Per-level counts of one scope; Level 4 is the archive (``archived_at`` set).

    Eight counts that indexes answer (scope, level, protection): cheap at any size.
    """

    def count(level: int, protected: bool | None) -> int:
        archived = level == Level.ARCHIVED
        flt = MemoryFilter(
            user_id=user_id,
            agent_id=agent_id,
            levels=None if archived else (level,),
            archived=archived,
            protected=protected,
        )
        return store.count(flt)

    every = [count(level, None) for level in _LEVELS]
    kept = (count(1, True), count(2, True), count(3, True), count(4, True))
    free = (every[0] - kept[0], every[1] - kept[1], every[2] - kept[2], every[3] - kept[3])
    return LevelCounts(free, kept)


class _QuickAnalyzer:
    """The simulation's analyzer: the offline one, except that compression keeps the first
    words of each field (Level 2) and then its first three words (Level 3)."""

    def __init__(self) -> None:
        from kioku.adapters.analyzers.offline import OfflineAnalyzer

        self._offline = OfflineAnalyzer()

    @property
    def name(self) -> str:
        return "offline-simulation"  # "offline…": the batch makes no texts ahead of time

    def analyze(self, turn: Turn) -> Analysis:
        return self._offline.analyze(turn)

    def summarize(self, trigger: str, content: str) -> Compressed:
        return Compressed(_first_words(trigger, 8), _first_words(content, 12))

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return Compressed(", ".join(trigger.split()[:3])[:40], ", ".join(content.split()[:3])[:40])


def _name(rng: random.Random) -> str:
    """A made-up proper name, so synthetic memories are not all alike (a few share a topic)."""
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _first_words(text: str, n: int) -> str:
    words = text.split()
    short = " ".join(words[:n])
    return short[: 6 * n] if short else text[: 6 * n]


@dataclass(frozen=True, slots=True)
class SimCheck:
    """One check of a simulation run and whether it held."""

    name: str  # "ratios", "protected" or "log"
    ok: bool
    detail: str


@dataclass(slots=True)
class SimDay:
    """One simulated day: what was added and recalled, the batch, and the counts after it."""

    index: int  # 1 for the first simulated day
    day: str  # the batch day run at the end of it (YYYY-MM-DD)
    batch_days: list[str]  # every day the batch applied (more than one when catching up)
    added: int
    protected_added: int
    recalled: int
    revival_requests: int
    counts: LevelCounts
    transitions: dict[str, int]
    checks: list[SimCheck]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self, targets: dict[int, float]) -> dict[str, object]:
        c = self.counts
        return {
            "day": self.index,
            "date": self.day,
            "batch_days": list(self.batch_days),
            "added": self.added,
            "protected_added": self.protected_added,
            "recalled": self.recalled,
            "revival_requests": self.revival_requests,
            "memories": c.total,
            "non_protected": c.total_free,
            "protected": sum(c.protected),
            "levels": {
                str(lv): {
                    "count": c.free[lv - 1],
                    "share": round(c.share(lv), 4),
                    "target": targets[lv],
                }
                for lv in _LEVELS
            },
            "protected_levels": {str(lv): c.protected[lv - 1] for lv in _LEVELS},
            "compression_rate": round(c.compression_rate, 4),
            "transitions": dict(self.transitions),
            "checks": [{"name": k.name, "ok": k.ok, "detail": k.detail} for k in self.checks],
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class Simulation:
    """The days simulated, with the targets they are checked against."""

    mode: str  # "synthetic" or "from_store"
    start: str  # the first batch day
    targets: dict[int, float]  # level → target share (4: the rest, the archive's share)
    ratio_min_memories: int
    days: list[SimDay] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.days)

    @property
    def failures(self) -> list[tuple[SimDay, SimCheck]]:
        return [(d, c) for d in self.days for c in d.checks if not c.ok]

    def day_dicts(self) -> list[dict[str, object]]:
        return [d.to_dict(self.targets) for d in self.days]


# -- the throwaway store -------------------------------------------------------------------


def _offline(config: Config) -> Config:
    """``config`` without providers: the offline analyzer and, unless the embedder is the
    offline one already, the default offline embedder."""
    embedding = config.embedding
    if embedding.provider.strip().lower() != "offline":
        embedding = EmbeddingConfig()
    return replace(config, llm=LlmConfig(), embedding=embedding)


def simulate(
    source: Kioku,
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
            source.backup(home / DB_FILENAME)
        clock = FixedClock(start)
        with Kioku(
            store_factory(home, config),
            config,
            clock=clock,
            user_id=source.user_id,
            agent_id=source.agent_id,
            home=home,
            analyzer=_QuickAnalyzer(),
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

    def __init__(self, sim: Kioku, clock: FixedClock, rng: random.Random, per_day: int) -> None:
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
        report = sim.batch(now=moment)
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
        transitions = _transitions(d.to_dict() for d in report.days)
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
        rows = self.sim.lifecycle_log(since=since, events=[e.value for e in _LOG_EVENTS])
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
                    self._draft(category, created, protect),
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

    def _draft(self, category: str, created: datetime, protect: bool) -> MemoryDraft:
        rng = self.rng
        mode = INTENSITY_MODE.get(category, 35)
        intensity = max(5, min(100, round(rng.triangular(5, 100, mode))))
        words = _WORDS.get(category, _WORDS["casual"])
        topic = rng.sample(words, 2)
        name, place, thing = (_name(rng) for _ in range(3))
        trigger = f"Talked with {name} about {topic[0]} at {place}"
        content = (
            f"We went over the {topic[1]} and the {thing}; it felt {rng.choice(_COMMON)} and "
            f"{rng.choice(_COMMON)}, {rng.choice(_COMMON)} {rng.choice(words)} next."
        )
        valence = rng.choices(["positive", "negative", "neutral"], [0.4, 0.25, 0.35])[0]
        pool = {
            "positive": POSITIVE_TAGS,
            "negative": _NEGATIVE_TAGS,
            "neutral": _OTHER_TAGS,
        }[valence]
        return MemoryDraft(
            trigger=trigger,
            content=content,
            intensity=intensity,
            category=category,
            valence=valence,
            arousal=max(0, min(100, round(rng.gauss(intensity, 15)))),
            tags=rng.sample(list(pool), rng.randint(0, 2)),
            keywords=[*topic, name],
            protected=protect,
            created=created,
        )

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
            marked = store.mark_recalled(sorted(recalled))
            for memory_id in sorted(revive):
                store.update(
                    memory_id,
                    MemoryPatch(revival_requested=True, revival_requested_at=self.clock.now()),
                )
        return marked, len(revive)


# -- checks ------------------------------------------------------------------------------


def check_ratios(after: LevelCounts, config: Config) -> SimCheck:
    """No non-protected level above ``floor(target × non-protected total)`` (比率強制), once the
    scope has ``compression.ratio_min_memories`` memories."""
    total = after.total_free
    least = config.compression.ratio_min_memories
    if total < least:
        return SimCheck(
            "ratios",
            True,
            f"{total} non-protected memories: below compression.ratio_min_memories ({least}), "
            "ratios not enforced",
        )
    over = []
    for lv, target in ratio_targets(config).items():
        allowed = math.floor(target * total + 1e-9)
        if after.free[lv - 1] > allowed:
            over.append(f"L{lv} {after.free[lv - 1]} > {allowed} ({target:.0%} of {total})")
    if over:
        return SimCheck("ratios", False, "; ".join(over))
    return SimCheck("ratios", True, f"every level within its share of {total}")


def check_protected(after: LevelCounts, expected: tuple[int, int, int, int]) -> SimCheck:
    """Protected memories per level are what they were, plus the new ones at Level 1."""
    if after.protected == expected:
        return SimCheck("protected", True, f"{after.protected[0]} protected at Level 1")
    return SimCheck(
        "protected",
        False,
        f"protected per level {list(after.protected)}, expected {list(expected)}",
    )


def check_log(
    before: LevelCounts, added: int, rows: list[LogEntry], after: LevelCounts
) -> SimCheck:
    """Counts after = counts before + new memories + the log's level changes."""
    expected = {lv: before.level(lv) for lv in _LEVELS}
    expected[Level.FULL] += added
    for row in rows:
        if row.level_before is not None:
            expected[row.level_before] -= 1
        if row.level_after is not None and row.event is not Event.DELETE:
            expected[row.level_after] += 1
    got = {lv: after.level(lv) for lv in _LEVELS}
    if got == expected:
        return SimCheck("log", True, f"{len(rows)} log rows account for every level change")
    diff = ", ".join(
        f"L{lv} {got[lv]} vs {expected[lv]}" for lv in _LEVELS if got[lv] != expected[lv]
    )
    return SimCheck("log", False, f"counts after the batch differ from the log: {diff}")


def _transitions(days: Iterable[dict[str, object]]) -> dict[str, int]:
    out = {
        "reinforced": 0,
        "compressed_1_2": 0,
        "compressed_2_3": 0,
        "archived": 0,
        "ratio_forced": 0,
        "revived": 0,
        "revivals_deferred": 0,
        "deleted": 0,
        "linked": 0,
        "unlinked": 0,
        "turned": 0,
    }
    for d in days:
        compressed = d.get("compressed")
        if isinstance(compressed, dict):
            out["compressed_1_2"] += int(compressed.get("1->2", 0))
            out["compressed_2_3"] += int(compressed.get("2->3", 0))
        for key in out:
            value = d.get(key)
            if isinstance(value, int):
                out[key] += value
    return out
