"""One day's batch as a plan: what happens to every memory, computed before anything is written.

Pure: the memories come in as column arrays (:class:`Population`), the configuration and the
batch moment are parameters, and the result (:class:`DayPlan`) says, per memory, its new
``memory_days``, coefficient, recall count, score and level, which memories are compressed,
archived, revived or erased. The service turns the plan into writes in one transaction.

Each step cites the part of spec 000 it implements (圧縮処理の内容, steps 1–8, and
アーカイブ層 / 完全消去). Arrays keep a million memories cheap: the per-memory arithmetic is
vectorised, only memories that change level are handled one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import numpy as np
import numpy.typing as npt

from kioku.config.schema import Config
from kioku.core.lifecycle.population import (
    F64,
    I64,
    ArchivedPopulation,
    ArchiveSelect,
    B,
    Ids,
    Population,
    Snapshot,
    stack_ids,
)
from kioku.core.model import Level

__all__ = [
    "ArchiveSelect",
    "ArchivedPopulation",
    "DayPlan",
    "Ids",
    "Population",
    "Revival",
    "Snapshot",
    "Transition",
    "archive_select",
    "archive_share",
    "plan_day",
    "ratio_targets",
    "stack_ids",
]


#: Why a memory changed level.
THRESHOLD: Final = "threshold"
RATIO: Final = "ratio"

_SECONDS_PER_DAY: Final = 86_400.0


@dataclass(frozen=True, slots=True)
class Transition:
    """One memory moving down: ``from_level`` → ``to_level`` (4 = archive), and why."""

    index: int  # row in the Population
    memory_id: str
    from_level: int
    to_level: int
    reason: str  # THRESHOLD or RATIO
    score: float


@dataclass(frozen=True, slots=True)
class Revival:
    """An archived memory brought back to Level 3 (アーカイブからの自動復活)."""

    index: int  # row in the ArchivedPopulation
    memory_id: str
    score: float
    memory_days: float
    recall_count: int


@dataclass(frozen=True, slots=True, eq=False)
class DayPlan:
    """The whole of one batch, before any write."""

    moment: datetime
    # New values for every row of the Population (step 1 and 2).
    memory_days: F64
    coefficient: F64
    recall_count: I64
    score: F64
    level: npt.NDArray[np.int8]
    reinforced: B
    #: Made since the previous batch: not aged today, and linked to similar memories.
    fresh: B
    #: Older than the previous batch but never aged by one (imported history): brought to its
    #: real age today, and linked as a new memory is.
    caught_up: B
    transitions: tuple[Transition, ...]
    revivals: tuple[Revival, ...]
    #: Archived memories whose revival request is turned down today (ratio full).
    revivals_deferred: tuple[int, ...]
    #: Rows of the ArchivedPopulation to erase (step 8).
    deletions: tuple[int, ...]
    #: Per scope: non-protected memories counted for the ratios, and per-level counts after.
    shares: dict[int, dict[str, int]] = field(default_factory=dict)

    @property
    def archived_today(self) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.to_level == Level.ARCHIVED)


def ratio_targets(config: Config) -> dict[int, float]:
    """The most each level may hold, as a share of the non-protected memories (比率強制)."""
    c = config.compression
    return {Level.FULL: c.level1_ratio, Level.SUMMARY: c.level2_ratio, Level.TRACE: c.level3_ratio}


def archive_share(config: Config) -> float:
    """The share the three levels leave: the archive's (the spec's 消去 20 %)."""
    c = config.compression
    return round(max(0.0, 1.0 - (c.level1_ratio + c.level2_ratio + c.level3_ratio)), 9)


def plan_day(
    pop: Population,
    archived: ArchivedPopulation,
    config: Config,
    moment: datetime,
    previous: datetime,
) -> DayPlan:
    """Plan the batch at ``moment`` over ``pop`` and ``archived``; ``previous`` is the batch
    time before it (memories created after it meet their first batch today).
    """
    if moment.tzinfo is None or previous.tzinfo is None:
        raise ValueError("moment and previous must be timezone-aware")
    now = moment.timestamp()
    fresh = pop.created > previous.timestamp()
    days, coefficient, count, reinforced, caught_up = _reinforce_or_age(pop, fresh, config, now)
    # Step 2: retention_score = emotional_intensity × decay_coefficient ^ memory_days; a
    # protected memory keeps its full score, the intensity (保護記憶: Level 1 forever).
    score = np.where(pop.protected, pop.intensity, pop.intensity * np.power(coefficient, days))
    level = pop.level.copy()
    transitions: dict[int, Transition] = {}
    _threshold_levels(pop, score, level, config, transitions)
    # Erasures are decided first so the ratios count only memories that will still exist.
    deletions = _deletions(archived, config, now)
    shares = _enforce_ratios(pop, archived, score, level, config, transitions, deletions)
    revivals, deferred = _revive(archived, shares, config, now)
    return DayPlan(
        moment=moment,
        memory_days=days,
        coefficient=coefficient,
        recall_count=count,
        score=score,
        level=level,
        reinforced=reinforced,
        fresh=fresh,
        caught_up=caught_up,
        transitions=tuple(transitions[i] for i in sorted(transitions)),
        revivals=tuple(revivals),
        revivals_deferred=tuple(deferred),
        deletions=tuple(deletions),
        shares=shares,
    )


def _reinforce_or_age(
    pop: Population, fresh: B, config: Config, now: float
) -> tuple[F64, F64, I64, B, B]:
    """Step 1 (バッチ処理時の強化フロー): a recalled memory has ``memory_days`` reduced (halved by
    default), its coefficient raised by the boost up to the cap, its count increased; every
    other memory ages by one day. A coefficient already above the cap is never lowered.

    A memory made since the previous batch is not aged: its first ``memory_days`` already is
    the time from its creation to this batch (memory_days の初期値計算).

    A memory never recalled (``recall_count`` 0) has ``memory_days`` equal to its age in batch
    days: the spec's initial value for the part before its first batch, and one day per
    batch since. One that is behind (imported history, made with an old ``created``; days a
    catch-up skipped) is brought to its real age here, before a pending recall halves it.
    """
    recall = config.recall
    cap = config.retention.max_decay_coefficient
    hit = pop.recalled
    age = (now - pop.created) / _SECONDS_PER_DAY
    behind = np.where(
        (pop.recall_count == 0) & ~fresh,
        np.maximum(0.0, np.round(age - pop.memory_days) - 1.0),
        0.0,
    )
    base = pop.memory_days + behind
    aged = np.where(fresh, base, base + 1.0)
    days = np.where(hit, base * (1.0 - recall.memory_days_reduction), aged)
    boosted = np.maximum(
        pop.coefficient, np.minimum(cap, pop.coefficient + recall.decay_coefficient_boost)
    )
    coefficient = np.where(hit, boosted, pop.coefficient)
    count = pop.recall_count + hit.astype(np.int64)
    return days, coefficient, count, hit.copy(), behind > 0


def _move(
    transitions: dict[int, Transition],
    pop: Population,
    i: int,
    to_level: int,
    reason: str,
    score: float,
) -> None:
    """Record ``i`` moving down to ``to_level``; a second move the same day extends the first
    (二重圧縮: Level 1 → 2 → 3 in one batch is allowed)."""
    earlier = transitions.get(i)
    from_level = int(pop.level[i]) if earlier is None else earlier.from_level
    why = reason if earlier is None else earlier.reason
    transitions[i] = Transition(i, str(pop.ids[i]), from_level, to_level, why, score)


def _threshold_levels(
    pop: Population,
    score: F64,
    level: npt.NDArray[np.int8],
    config: Config,
    transitions: dict[int, Transition],
) -> None:
    """Step 3 (閾値設定): the level a score belongs to; a memory only ever moves down (its text
    is already compressed), and a protected memory never moves (保護記憶)."""
    lv = config.levels
    by_score = np.full(score.shape, Level.ARCHIVED, dtype=np.int8)
    by_score[score > lv.level3_threshold] = Level.TRACE
    by_score[score > lv.level2_threshold] = Level.SUMMARY
    by_score[score > lv.level1_threshold] = Level.FULL
    down = (by_score > level) & ~pop.protected
    for i in np.flatnonzero(down).tolist():
        _move(transitions, pop, i, int(by_score[i]), THRESHOLD, float(score[i]))
    level[down] = by_score[down]


def _enforce_ratios(
    pop: Population,
    archived: ArchivedPopulation,
    score: F64,
    level: npt.NDArray[np.int8],
    config: Config,
    transitions: dict[int, Transition],
    deletions: Sequence[int] = (),
) -> dict[int, dict[str, int]]:
    """Step 4 (比率強制): per scope, top-down, the excess of each level is pushed one level
    down: lowest score first, then oldest, then least recalled (対象選定の優先順位).

    The denominator is every non-protected memory of the scope, archived ones included (the
    targets 15/30/35 % leave 20 % for the archive); protected memories count nowhere. A level
    holds at most ``floor(share × total)`` memories afterwards. A scope with fewer than
    ``ratio_min_memories`` memories is left to the thresholds: with ten memories, a 15 % share
    would summarise nine of a new user's first memories on the first night.
    """
    targets = ratio_targets(config)
    shares: dict[int, dict[str, int]] = {}
    free = ~pop.protected
    present, unprotected = archived.scope_counts()
    # Erased today: never protected, so each leaves its scope's non-protected count.
    erased = np.bincount(archived.scope[list(deletions)], minlength=unprotected.size)
    archived_counts = unprotected - erased[: unprotected.size]
    scopes = np.union1d(np.unique(pop.scope), np.flatnonzero(present))
    for scope in scopes.tolist():
        rows = np.flatnonzero((pop.scope == scope) & free)
        in_archive = int(archived_counts[scope]) if scope < archived_counts.size else 0
        total = int(rows.size) + in_archive
        enforce = total >= config.compression.ratio_min_memories
        for lvl in (Level.FULL, Level.SUMMARY, Level.TRACE) if enforce else ():
            members = rows[level[rows] == lvl]
            allowed = int(np.floor(targets[lvl] * total + 1e-9))
            excess = members.size - allowed
            if excess <= 0:
                continue
            # np.lexsort sorts by the last key first: score, then created, then recall count,
            # then the id (so equal memories are chosen the same way every time).
            id_rank = np.argsort(np.argsort(pop.ids[members].astype(str)))
            order = np.lexsort(
                (id_rank, pop.recall_count[members], pop.created[members], score[members])
            )
            for i in members[order[:excess]].tolist():
                _move(transitions, pop, i, lvl + 1, RATIO, float(score[i]))
                level[i] = lvl + 1
        counts = np.bincount(level[rows].astype(np.int64), minlength=5)
        archived_now = int(counts[Level.ARCHIVED]) + in_archive
        shares[scope] = {
            "total": total,
            "level1": int(counts[Level.FULL]),
            "level2": int(counts[Level.SUMMARY]),
            "level3": int(counts[Level.TRACE]),
            "archived": archived_now,
        }
    return shares


def _revive(
    archived: ArchivedPopulation,
    shares: dict[int, dict[str, int]],
    config: Config,
    now: float,
) -> tuple[list[Revival], list[int]]:
    """アーカイブからの自動復活: oldest request first, a memory returns to Level 3 only while
    ``(level3 + 1) / total ≤ level3_ratio``; otherwise its request is turned down (the flag
    is cleared) so ratio-archived memories do not loop back and forth.

    The revived score is the intensity decayed by whole days in the archive, at least
    ``level3_threshold + revival_min_margin``; ``memory_days`` is set so that the spec's formula
    gives that score again at the next batch (else step 2 would overwrite it at once).
    """
    arc = config.archive
    floor = config.levels.level3_threshold + arc.revival_min_margin
    ratio = config.compression.level3_ratio
    asked = np.flatnonzero(archived.revival_requested & ~archived.protected)
    if asked.size == 0:
        return [], []
    order = asked[
        np.lexsort((archived.ids[asked].astype(str), archived.revival_requested_at[asked]))
    ]
    revived: list[Revival] = []
    deferred: list[int] = []
    for i in order.tolist():
        scope = int(archived.scope[i])
        counts = shares.setdefault(
            scope, {"total": 0, "level1": 0, "level2": 0, "level3": 0, "archived": 0}
        )
        total = counts["total"]
        enforced = total >= config.compression.ratio_min_memories
        if total == 0 or (enforced and (counts["level3"] + 1) / total > ratio + 1e-12):
            deferred.append(i)
            continue
        days_in_archive = max(0, int((now - float(archived.archived_at[i])) // _SECONDS_PER_DAY))
        intensity = float(archived.intensity[i])
        score = max(intensity * arc.revival_decay_per_day**days_in_archive, floor)
        revived.append(
            Revival(
                index=i,
                memory_id=str(archived.ids[i]),
                score=score,
                memory_days=_days_for_score(intensity, float(archived.coefficient[i]), score),
                recall_count=int(archived.recall_count[i]) + 1,
            )
        )
        counts["level3"] += 1
        counts["archived"] -= 1
    return revived, deferred


def _days_for_score(intensity: float, coefficient: float, score: float) -> float:
    """The ``memory_days`` at which ``intensity × coefficient^days`` equals ``score`` (≥ 0)."""
    if intensity <= 0 or score >= intensity or not 0.0 < coefficient < 1.0:
        return 0.0
    return float(np.log(score / intensity) / np.log(coefficient))


def archive_select(config: Config, moment: datetime) -> ArchiveSelect:
    """The archived memories the day at ``moment`` may act on (see :class:`ArchiveSelect`):
    those asked back and linked ones always; for erasure (step 8), with the AND mode only
    those archived more than ``retention_days`` ago (a whole day more, by its floor), with
    the OR mode any of them."""
    arc = config.archive
    if not arc.auto_delete_enabled:
        return ArchiveSelect()
    if arc.delete_condition_mode == "OR":
        return ArchiveSelect(erasable_before=float("inf"))
    return ArchiveSelect(erasable_before=moment.timestamp() - arc.retention_days * _SECONDS_PER_DAY)


def _deletions(archived: ArchivedPopulation, config: Config, now: float) -> list[int]:
    """Step 8 (完全消去): archived memories that meet the auto-delete conditions, combined by
    ``delete_condition_mode`` (AND: every condition, OR: any). Never a protected memory, nor
    one whose revival was asked for (someone tried to recall it); nothing at all unless
    ``auto_delete_enabled``."""
    arc = config.archive
    if not arc.auto_delete_enabled or len(archived) == 0:
        return []
    archived_days = np.floor((now - archived.archived_at) / _SECONDS_PER_DAY)
    conditions: list[B] = [archived_days > arc.retention_days]
    if arc.delete_require_zero_recall:
        conditions.append(archived.recall_count == 0)
    conditions.append(archived.intensity < arc.delete_max_intensity)
    combined = (
        np.logical_and.reduce(conditions)
        if arc.delete_condition_mode == "AND"
        else np.logical_or.reduce(conditions)
    )
    combined &= ~archived.protected & ~archived.revival_requested
    return [int(i) for i in np.flatnonzero(combined).tolist()]
