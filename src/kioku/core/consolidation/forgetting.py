"""Active forgetting of spec 001 (能動的忘却: シナプスホメオスタシス), pure.

Three steps, each a decision about one memory at a given ``now``:

* the daily downscaling (日次ダウンスケーリング) marks idle, rarely used knowledge and
  procedures as low-activity, and procedures that keep failing at once (:func:`downscale`);
* the monthly full forgetting (完全忘却) archives what stayed low and untouched for
  :data:`FORGET_AFTER_LOW_DAYS` (:func:`forget_due`);
* the monthly archive cleanup (月次アーカイブクリーンアップ) keeps the newest
  :data:`KEEP_VERSIONS` versions of each procedure (:func:`versions_to_prune`).

The weekly reorganisation (神経新生的再編) merges low-activity pairs with a model and is not
here. Protection (忘却からの保護) overrides every step: see :func:`protection`. Times are
compared as given, so ``now`` and the item's times must be all aware or all naive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

__all__ = [
    "FAILURE_FLOOR",
    "FORGET_AFTER_LOW_DAYS",
    "KEEP_VERSIONS",
    "KNOWLEDGE_IDLE_DAYS",
    "KNOWLEDGE_MIN_ACCESSES",
    "MATURE_VERSION",
    "PROCEDURE_IDLE_DAYS",
    "PROCEDURE_MIN_USES",
    "UTILITY_FLOOR",
    "ItemActivity",
    "Mark",
    "downscale",
    "forget_due",
    "protection",
    "utility",
    "versions_to_prune",
]

#: spec 001 knowledge/ の忘却閾値 (未アクセス期間): 90 days since the last access.
KNOWLEDGE_IDLE_DAYS: Final = 90
#: spec 001 knowledge/ の忘却閾値 (アクセス回数 < 3回): fewer accesses than this is rare use.
KNOWLEDGE_MIN_ACCESSES: Final = 3
#: spec 001 procedures/ の忘却閾値 (未使用期間): 180 days, twice knowledge's.
PROCEDURE_IDLE_DAYS: Final = 180
#: spec 001 procedures/ の忘却閾値 (使用回数 < 3回): fewer uses than this is rare use.
PROCEDURE_MIN_USES: Final = 3
#: spec 001 procedures/ の即座マーク条件 (効用 < 0.3): utility below this is low.
UTILITY_FLOOR: Final = 0.3
#: spec 001 procedures/ の即座マーク条件 (failure_count >= 3): this many failures or more.
FAILURE_FLOOR: Final = 3
#: spec 001 完全忘却 (低活性60日+未アクセス): days a memory stays low before it is archived.
FORGET_AFTER_LOW_DAYS: Final = 60
#: spec 001 月次アーカイブクリーンアップ (直近5バージョンのみを保持): versions kept per procedure.
KEEP_VERSIONS: Final = 5
#: spec 001 忘却からの保護 (procedures/ version >= 3): a procedure reconsolidated this often.
MATURE_VERSION: Final = 3

Action = Literal["mark", "unmark", "keep"]


@dataclass(frozen=True, slots=True)
class ItemActivity:
    """What forgetting needs to know of one memory.

    ``kind`` is ``"episode"``, ``"knowledge"``, ``"procedure"`` or ``"profile"``;
    ``protected`` is the memory's protected flag (set by ``[IMPORTANT]`` or ``protected:
    true``); ``low_since`` is when it was marked low-activity, None when it is not low.
    ``confidence`` is the stored value, for explanations only: the utility that downscaling
    tests is computed from the counts (:func:`utility`), because the stored value starts at
    0.4 and is reset to 0.5 on reconsolidation, with no outcome behind either.
    """

    id: str
    kind: str
    created: datetime
    last_access: datetime | None
    access_count: int
    protected: bool
    version: int = 1
    success_count: int = 0
    failure_count: int = 0
    confidence: float | None = None
    low_since: datetime | None = None
    archived: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """The downscaling decision for one memory, and why."""

    id: str
    action: Action
    reason: str


def protection(item: ItemActivity) -> str | None:
    """Why ``item`` is protected from forgetting (忘却からの保護), or None when it is not.

    Profiles always (the spec's ``shared/users/``); any memory with the protected flag; a
    procedure reconsolidated to version :data:`MATURE_VERSION` or later. An episode or a
    knowledge item is protected only by the flag.
    """
    if item.kind == "profile":
        return "profile"
    if item.protected:
        return "protected"
    if item.kind == "procedure" and item.version >= MATURE_VERSION:
        return f"mature procedure (version ≥ {MATURE_VERSION})"
    return None


def utility(success_count: int, failure_count: int) -> float:
    """A procedure's utility: ``success / max(1, success + failure)``, spec 001's confidence."""
    return success_count / max(1, success_count + failure_count)


def downscale(item: ItemActivity, now: datetime) -> Mark:
    """The daily downscaling (日次ダウンスケーリング) of one memory at ``now``.

    Knowledge idle for :data:`KNOWLEDGE_IDLE_DAYS` with fewer than
    :data:`KNOWLEDGE_MIN_ACCESSES` accesses is marked; so is a procedure idle for
    :data:`PROCEDURE_IDLE_DAYS` with fewer than :data:`PROCEDURE_MIN_USES` uses (accesses,
    successes and failures together), or one whose utility is below :data:`UTILITY_FLOOR`
    after :data:`FAILURE_FLOOR` failures or more, however recent. Idle time runs from the
    last access, or from creation when there was none.

    A memory already low that still qualifies is kept as it is; one that no longer does (it
    was used since, or became protected) is unmarked. Archived memories, episodes and
    profiles are never marked.
    """
    if item.archived:
        return Mark(item.id, "keep", "archived")
    guard = protection(item)
    if guard is not None:
        if item.low_since is not None:
            return Mark(item.id, "unmark", f"protected ({guard})")
        return Mark(item.id, "keep", f"protected ({guard})")
    if item.kind == "knowledge":
        low, why = _knowledge(item, now)
    elif item.kind == "procedure":
        low, why = _procedure(item, now)
    elif item.kind == "episode":
        return Mark(item.id, "keep", "episodes are not downscaled")
    else:
        return Mark(item.id, "keep", f"no forgetting rule for kind {item.kind!r}")
    if item.low_since is None:
        if low:
            return Mark(item.id, "mark", why)
        return Mark(item.id, "keep", f"active: {why}")
    if low:
        return Mark(item.id, "keep", f"low since {_day(item.low_since)}: {why}")
    return Mark(item.id, "unmark", f"active again: {why}")


def forget_due(item: ItemActivity, now: datetime) -> str | None:
    """Why ``item`` is forgotten by the monthly full forgetting (完全忘却), or None.

    Due when it has been low-activity for :data:`FORGET_AFTER_LOW_DAYS` or more and has not
    been accessed since it was marked; never when it is protected or already archived.
    """
    if item.low_since is None or item.archived or protection(item) is not None:
        return None
    if item.last_access is not None and item.last_access > item.low_since:
        return None
    low_for = now - item.low_since
    if low_for < timedelta(days=FORGET_AFTER_LOW_DAYS):
        return None
    return (
        f"low since {_day(item.low_since)} ({_count(low_for.days, 'day')}, "
        f"threshold: {FORGET_AFTER_LOW_DAYS} days) and not accessed since"
    )


def versions_to_prune(versions: Sequence[int], keep: int = KEEP_VERSIONS) -> list[int]:
    """The version numbers beyond the newest ``keep``, ascending (月次アーカイブクリーンアップ).

    A number listed twice counts once. ``keep`` must not be negative.
    """
    if keep < 0:
        raise ValueError(f"keep must not be negative, got {keep}")
    distinct = sorted(set(versions))
    return distinct[: max(0, len(distinct) - keep)]


def _knowledge(item: ItemActivity, now: datetime) -> tuple[bool, str]:
    """Whether knowledge qualifies as low-activity, and the numbers that say so."""
    idle = _idle(item, now)
    low = idle >= timedelta(days=KNOWLEDGE_IDLE_DAYS) and item.access_count < KNOWLEDGE_MIN_ACCESSES
    why = (
        f"knowledge unused for {_count(max(0, idle.days), 'day')} with "
        f"{_count(item.access_count, 'access')} (thresholds: {KNOWLEDGE_IDLE_DAYS} days, "
        f"fewer than {KNOWLEDGE_MIN_ACCESSES})"
    )
    return low, why


def _procedure(item: ItemActivity, now: datetime) -> tuple[bool, str]:
    """Whether a procedure qualifies as low-activity, and the numbers that say so."""
    idle = _idle(item, now)
    uses = item.access_count + item.success_count + item.failure_count
    idle_low = idle >= timedelta(days=PROCEDURE_IDLE_DAYS) and uses < PROCEDURE_MIN_USES
    value = utility(item.success_count, item.failure_count)
    failing = value < UTILITY_FLOOR and item.failure_count >= FAILURE_FLOOR
    unused = (
        f"procedure unused for {_count(max(0, idle.days), 'day')} with "
        f"{_count(uses, 'use')} (thresholds: {PROCEDURE_IDLE_DAYS} days, "
        f"fewer than {PROCEDURE_MIN_USES})"
    )
    failed = (
        f"procedure utility {value:.2f} after {_count(item.failure_count, 'failure')} "
        f"(thresholds: below {UTILITY_FLOOR}, at least {FAILURE_FLOOR})"
    )
    # Failures count as uses, so the two conditions never hold together.
    if failing:
        return True, failed
    if idle_low:
        return True, unused
    return False, f"{unused}; {failed}"


def _idle(item: ItemActivity, now: datetime) -> timedelta:
    """Time since the last access, or since creation when there was none."""
    return now - (item.last_access if item.last_access is not None else item.created)


def _day(moment: datetime) -> str:
    return moment.date().isoformat()


def _count(n: int, noun: str) -> str:
    """``1 day``, ``2 days``, ``1 access``, ``3 accesses``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun}es" if noun.endswith("s") else f"{n} {noun}s"
