"""Mood balance (spec 000, 感情価による想起非対称性): the monitor and the limiter, read from
the activity log.

What was primed or recalled into a prompt is already recorded: every ``priming`` and
``memory_recall`` event names the memories it brought. The monitor counts them per day by
valence (:func:`mood_balance`); the limiter reads the owner's last ones to know how many
negative high-intensity memories came in a row (:func:`rank_down`). The counts use each
memory as it is now: an erased memory no longer counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from kioku.core.activity.events import EventType
from kioku.core.model import Valence
from kioku.core.mood_balance import DayBalance, is_heavy, limit, tally
from kioku.ports.store import ActivityQuery, MemoryFilter, ScoringFields, Store
from kioku.records import Record

if TYPE_CHECKING:
    from kioku.config.schema import MoodConfig
    from kioku.service.engine import Engine

__all__ = ["MoodBalance", "mood_balance", "rank_down"]

#: The events that say what was brought into a prompt.
PRIMED_TYPES: Final = (EventType.PRIMING.value, EventType.MEMORY_RECALL.value)
#: The coverage from which the best-covering candidates count as what a prompt asks for.
_ASKED_COVERAGE: Final = 0.5
#: The most days the monitor reports at once.
MAX_DAYS: Final = 366


def _ids(line: str) -> list[str]:
    """The memory ids an event's JSON line names (none when it no longer parses)."""
    try:
        data = json.loads(line)
    except ValueError:
        return []
    ids = data.get("memory_ids") if isinstance(data, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _emotions(store: Store, ids: Sequence[str]) -> dict[str, tuple[Valence, int]]:
    found: dict[str, tuple[Valence, int]] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        for item in store.scoring_fields(unique[start : start + 500]):
            found[item.id] = (item.valence, item.intensity)
    return found


def recent_heavy(store: Store, scope: MemoryFilter, cfg: MoodConfig) -> list[bool]:
    """Whether each of the owner's last ``cfg.window`` memories primed or recalled was
    negative and of high intensity, oldest first."""
    rows = store.read_activity(
        ActivityQuery(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            types=PRIMED_TYPES,
            limit=cfg.window,
        )
    )
    ids = [i for row in rows for i in _ids(row.line)][-cfg.window :]
    known = _emotions(store, ids)
    return [i in known and is_heavy(*known[i], cfg.high_intensity) for i in ids]


def rank_down(
    store: Store,
    scope: MemoryFilter,
    cfg: MoodConfig,
    fields: Mapping[str, ScoringFields],
    ranked: Sequence[str],
    coverage: Mapping[str, float],
) -> tuple[str, ...]:
    """The candidates the limiter ranks down: ``ranked`` holds the eligible candidates best
    first, judged by their scoring fields (valence and intensity). The candidate the
    prompt singles out (the only one with the best ``coverage``) is spared: a question about
    one painful memory still finds it."""
    heavy = {
        key
        for key in ranked
        if is_heavy(fields[key].valence, fields[key].intensity, cfg.high_intensity)
    }
    if not heavy:
        return ()
    history = recent_heavy(store, scope, cfg)
    decided = limit(
        history,
        [(key, key in heavy) for key in ranked],
        window=cfg.window,
        share=cfg.max_negative_share,
        spared=_asked(ranked, coverage),
    )
    return decided.demoted


def _asked(ranked: Sequence[str], coverage: Mapping[str, float]) -> frozenset[str]:
    """The one candidate the prompt singles out: the only one with the best coverage, when
    that is a real match (at least half the query's weight). None when several share the
    best coverage (a prompt about a topic, not about one memory)."""
    best = sorted(((coverage.get(key, 0.0), key) for key in ranked), reverse=True)[:2]
    if not best or best[0][0] < _ASKED_COVERAGE:
        return frozenset()
    if len(best) == 2 and best[1][0] >= best[0][0] - 1e-9:
        return frozenset()
    return frozenset({best[0][1]})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MoodBalance(Record):
    """The monitor: per day, oldest first, what was primed or recalled, by valence."""

    user_id: str
    agent_id: str
    days: tuple[DayBalance, ...]
    high_intensity: int
    limiter: bool
    window: int
    max_negative_share: float
    shift: bool

    def as_dict(self) -> dict[str, object]:
        total = sum(d.total for d in self.days)
        negative = sum(d.negative for d in self.days)
        heavy = sum(d.heavy for d in self.days)
        return {
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "high_intensity": self.high_intensity,
            "limiter": self.limiter,
            "window": self.window,
            "max_negative_share": self.max_negative_share,
            "shift": self.shift,
            "total": total,
            "negative_share": round(negative / total, 4) if total else None,
            "high_intensity_share": round(heavy / total, 4) if total else None,
            "days": [d.as_dict() for d in self.days],
        }


def mood_balance(engine: Engine, days: int = 7) -> MoodBalance:
    """What was primed or recalled for ``engine``'s owner on each of the last ``days`` days
    (today included), by valence. ``days`` is 1 to 366."""
    from kioku.errors import ValidationError

    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise ValidationError("days", days, f"a whole number of days from 1 to {MAX_DAYS}")
    cfg = engine.config.mood
    now = engine.clock.now()
    start = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days - 1)
    rows = engine.store.read_activity(
        ActivityQuery(
            user_id=engine.user_id, agent_id=engine.agent_id, since=start, types=PRIMED_TYPES
        )
    )
    per_day: dict[str, list[str]] = {}
    for row in rows:
        per_day.setdefault(row.day, []).extend(_ids(row.line))
    known = _emotions(engine.store, [i for ids in per_day.values() for i in ids])
    labels = [(start + timedelta(days=n)).date().isoformat() for n in range(days)]
    balances = tuple(
        tally(day, (known[i] for i in per_day.get(day, ()) if i in known), cfg.high_intensity)
        for day in labels
    )
    return MoodBalance(
        engine.user_id,
        engine.agent_id,
        balances,
        cfg.high_intensity,
        cfg.limiter,
        cfg.window,
        cfg.max_negative_share,
        cfg.shift,
    )
