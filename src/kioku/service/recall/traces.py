"""The traces a recall leaves: recalled memories marked for reinforcement at the next batch,
archived ones asked to be revived, and the session's mood (関連記憶の想起 › 想起の記録)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.ports.store import MemoryPatch, Store
from kioku.service.recall.mood import SessionMood, session_key
from kioku.service.recall.results import Recalled, RecallResult

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["leave_traces", "log_recall", "record_traces"]


def leave_traces(
    engine: Engine,
    result: RecallResult,
    *,
    session_id: str | None = None,
    at: datetime | None = None,
) -> None:
    """What ``mark=True`` does, for a recall made with ``mark=False``: its chosen memories
    (not those that came along as related) are marked and archived ones asked back, and a
    ``memory_recall`` event names what was recalled (what the mood monitor and limiter
    read), in one transaction."""
    store, now = engine.store, at or engine.clock.now()
    chosen = [i for i in result.items if i.via != "relation"]
    if chosen:
        with store.atomic(durable=False):  # usage records (see Store.atomic)
            record_traces(store, chosen, session_id, now)
            log_recall(engine, result, session_id, now)


def log_recall(
    engine: Engine, result: RecallResult, session_id: str | None, at: datetime | None = None
) -> None:
    """One ``memory_recall`` event naming what was recalled (the query is the turn's own)."""
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    event = make_event(
        engine,
        EventType.MEMORY_RECALL,
        tool="recall",
        at=at,
        memory_ids=[i.memory.id for i in result.items],
        session_id=session_id,
        summary=f"{len(result.items)} recalled",
    )
    log_events(engine, [event])


def record_traces(
    store: Store, chosen: Sequence[Recalled], session_id: str | None, now: datetime
) -> None:
    """Mark what was recalled, ask for archived ones back, carry the mood (one transaction,
    whose commit need not wait for the disk: see Store.atomic)."""
    with store.atomic(durable=False):
        store.mark_recalled([i.memory.id for i in chosen if not i.archived], at=now)
        for item in chosen:
            if item.archived and not item.memory.revival_requested:
                store.update(
                    item.memory.id,
                    MemoryPatch(revival_requested=True, revival_requested_at=now),
                )
        if session_id:
            store.set_state(session_key(session_id), SessionMood.of(chosen[0].memory).to_json())
