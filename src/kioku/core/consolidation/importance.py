"""Spec 004's importance score, capacity manager and compression rate, pure.

Spec 004 describes a living memory (Memory as Living System): it is born at
:data:`INITIAL_IMPORTANCE`, grows by :data:`ACCESS_BOOST` with each access, decays by
:data:`WEEKLY_DECAY` each week it is left alone, and is compressed below
:data:`COMPRESS_BELOW`. :func:`importance` computes that score from the access record alone,
so nothing has to be stored or updated in place. :func:`plan_capacity` is the Capacity
Manager's decision, and :func:`compression_rate` the ``memory_compression_rate`` metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

__all__ = [
    "ACCESS_BOOST",
    "CAPACITY_SHARE",
    "CAPACITY_TRIGGER",
    "COMPRESS_BELOW",
    "DEFAULT_CAPACITY",
    "INITIAL_IMPORTANCE",
    "MAX_IMPORTANCE",
    "WEEKLY_DECAY",
    "CapacityPlan",
    "compression_rate",
    "importance",
    "plan_capacity",
]

#: spec 004 §0 呼吸サイクル (誕生: importance_score = 0.5): the score of a new memory.
INITIAL_IMPORTANCE: Final = 0.5
#: spec 004 §0 呼吸サイクル (衰退: score *= 0.95/week): the decay per week without access.
WEEKLY_DECAY: Final = 0.95
#: spec 004 §0 呼吸サイクル (成長: score += 0.1), §2.2 (0.5 → 0.6 → 0.7): per access.
ACCESS_BOOST: Final = 0.1
#: spec 004 §5.1 (0-1の範囲にクリップ): the highest score.
MAX_IMPORTANCE: Final = 1.0
#: spec 004 §3.2 Lifecycle Check (Score < 0.3 → 圧縮対象): compression candidates.
COMPRESS_BELOW: Final = 0.3
#: spec 004 §5.3 CapacityManager (AUTO_COMPRESS_THRESHOLD = 0.9): usage that triggers it.
CAPACITY_TRIGGER: Final = 0.9
#: spec 004 §5.3 CapacityManager (int(MEMORY_LIMIT * 0.1), 10%を圧縮): share compressed.
CAPACITY_SHARE: Final = 0.1
#: spec 004 §5.3 CapacityManager (MEMORY_LIMIT = 10000): memories per owner.
DEFAULT_CAPACITY: Final = 10_000

_WEEK_SECONDS: Final = 7 * 24 * 60 * 60.0


def importance(
    created: datetime, last_access: datetime | None, access_count: int, now: datetime
) -> float:
    """``min(1, 0.5 + 0.1 × access_count) × 0.95 ^ weeks``, in [0, 1].

    ``weeks`` is the time since the last access (since creation when there was none), in
    fractional weeks, never negative: a moment after ``now`` counts as no time at all. The
    boost adds :data:`ACCESS_BOOST` per access as in spec 004 §0 and §2.2 (0.5 → 0.6), not
    §5.1's factor ``1 + 0.1 × n`` (0.5 → 0.55); and decay runs from the last access, since an
    access is what the weekly decay waits for, where §5.1 counts from creation. A memory
    accessed five times is at full strength until it is left alone.
    """
    if access_count < 0:
        raise ValueError(f"access_count must not be negative, got {access_count}")
    base = min(MAX_IMPORTANCE, INITIAL_IMPORTANCE + ACCESS_BOOST * access_count)
    since = last_access if last_access is not None else created
    weeks = max(0.0, (now - since).total_seconds() / _WEEK_SECONDS)
    return max(0.0, min(MAX_IMPORTANCE, base * math.pow(WEEKLY_DECAY, weeks)))


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """The Capacity Manager's decision for one owner.

    ``usage`` is ``count / limit`` (0.0 without a limit); ``to_compress`` lists the ids to
    compress, least important first, empty unless ``triggered``.
    """

    limit: int
    count: int
    usage: float
    triggered: bool
    to_compress: tuple[str, ...]
    reason: str


def plan_capacity(items: Sequence[tuple[str, float, bool]], count: int, limit: int) -> CapacityPlan:
    """What spec 004's Capacity Manager compresses for an owner with ``count`` memories.

    ``items`` are ``(id, importance, eligible)``: only eligible memories (not protected, not
    yet compressed; the caller decides) are ever chosen. At :data:`CAPACITY_TRIGGER` of
    ``limit`` or more, the ``ceil(CAPACITY_SHARE × limit)`` least important eligible ones
    are chosen, ties by id. Unlike spec 004 §5.3 this does not stop at
    :data:`COMPRESS_BELOW`: a store full of important memories still makes room. A
    ``limit`` of zero or less means no limit.
    """
    if limit <= 0:
        return CapacityPlan(limit, count, 0.0, False, (), f"{_memories(count)}, no limit")
    usage = count / limit
    stored = f"{count} of {limit} memories stored ({usage:.1%})"
    if usage < CAPACITY_TRIGGER:
        return CapacityPlan(
            limit, count, usage, False, (), f"{stored}, below {CAPACITY_TRIGGER:.0%}"
        )
    want = _ceil(CAPACITY_SHARE * limit)
    eligible = sorted((score, ident) for ident, score, ok in items if ok)
    chosen = tuple(ident for _, ident in eligible[:want])
    if len(chosen) < want:
        what = f"all {len(chosen)} eligible (wanted {want})"
    else:
        what = f"the {want} least important of {len(eligible)} eligible"
    return CapacityPlan(
        limit,
        count,
        usage,
        True,
        chosen,
        f"{stored}, at least {CAPACITY_TRIGGER:.0%}: compressing {what}",
    )


def compression_rate(original_bytes: int, stored_bytes: int) -> float:
    """Spec 004's ``memory_compression_rate``: ``(original − stored) / original``, in [0, 1].

    0.0 when there was nothing to compress (``original_bytes`` 0 or less); a text that grew
    counts as 0.0.
    """
    if original_bytes <= 0:
        return 0.0
    return max(0.0, min(1.0, (original_bytes - stored_bytes) / original_bytes))


def _ceil(x: float) -> int:
    """``ceil`` that ignores float noise: ``0.1 × 30`` is 3, not 4."""
    return math.ceil(round(x, 9))


def _memories(count: int) -> str:
    return "1 memory stored" if count == 1 else f"{count} memories stored"
