"""What a simulation reports, and the checks every simulated day must pass (see
:mod:`.simulate`): level counts and shares, ratios, protected memories, the lifecycle log."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from kioku.config.schema import Config
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import ratio_targets
from kioku.core.model import Level
from kioku.ports.store import MemoryFilter, Store

__all__ = [
    "LevelCounts",
    "SimCheck",
    "SimDay",
    "Simulation",
    "check_log",
    "check_protected",
    "check_ratios",
    "count_levels",
    "sum_transitions",
]

_LEVELS: Final = (Level.FULL, Level.SUMMARY, Level.TRACE, Level.ARCHIVED)


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
            kind="episode",
        )
        return store.count(flt)

    every = [count(level, None) for level in _LEVELS]
    kept = (count(1, True), count(2, True), count(3, True), count(4, True))
    free = (every[0] - kept[0], every[1] - kept[1], every[2] - kept[2], every[3] - kept[3])
    return LevelCounts(free, kept)


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


def sum_transitions(days: Iterable[dict[str, object]]) -> dict[str, int]:
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
