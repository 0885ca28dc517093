"""Deliberate search in the mid-term tier (spec 003 §4): turns not (or not yet) kept in
long-term memory stay findable on purpose until their thread's entry expires."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.records import Record

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["MidTermHit", "search_midterm"]

#: A turn matches when it holds at least this share of the query's terms.
MIN_COVERAGE: Final = 0.5


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MidTermHit(Record):
    """One turn of the mid-term tier that matches a search."""

    thread_id: str
    turn: str
    score: float
    created: datetime
    expires: datetime


def search_midterm(
    engine: Engine, terms: Sequence[str], now: datetime, top_k: int
) -> tuple[MidTermHit, ...]:
    """The turns of the scope's unexpired mid-term entries that hold at least half of the
    query's ``terms``, best first."""
    from kioku.adapters.text.lexical import index_terms

    wanted = set(terms)
    if not wanted:
        return ()
    hits: list[MidTermHit] = []
    for entry in engine.store.midterm(engine.user_id, engine.agent_id, now):
        for turn in entry.turns:
            coverage = len(wanted & set(index_terms(turn))) / len(wanted)
            if coverage >= MIN_COVERAGE:
                hits.append(
                    MidTermHit(entry.thread_id, turn, coverage, entry.created, entry.expires)
                )
    hits.sort(key=lambda h: (-h.score, -h.created.timestamp(), h.thread_id))
    return tuple(hits[:top_k])
