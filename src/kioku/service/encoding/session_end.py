"""Finalizing a session at its boundary (spec 001, 即時符号化 › セッション境界ベースの差分要約).

A session's turns are episodes with its ``session_id``, one per turn. :func:`finalize_session`
takes the turns not finalized yet, summarises them into one session-summary episode, logs an
``issue_resolved`` event for each resolved item they report (解決伝播, layer 1) and moves the
session's finalized point past them, all in one transaction: a failure before the commit
leaves everything as it was, so the next attempt does the whole work again, once. The summary's
source id names the session and the turns it covers, so it is never stored twice either.

The summary is asked of the analyzer before the transaction, so the write lock is never held
while an LLM answers; if another process finalized the session meanwhile, the work is redone
on what is left.

:func:`finalize_idle_sessions` (the heartbeat) finalizes every session whose last turn is at
least ten minutes old. It reads only the episodes made since the scope's sweep point, ten
minutes before its previous run (or the last turn of a session that failed then): a session
still going on at that run had a turn after that point, and every session that began later
has all its turns after it. A session stored afterwards with earlier times only (an old
transcript imported) is finalized by an explicit :func:`finalize_session`.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from kioku.core.activity.events import ActivityEvent, EventType
from kioku.core.encoding import (
    IDLE,
    SUMMARY_KEYWORD,
    FinalizedPoint,
    idle_sessions,
    is_summary_source,
    resolved_items,
    summary_source,
    summary_trigger,
)
from kioku.core.model import Kind, Memory
from kioku.core.validate import check_created, check_provenance_id
from kioku.errors import KiokuError, StoreError, ValidationError
from kioku.ports.erasure import ErasedSourceError
from kioku.ports.store import MemoryFilter, Order
from kioku.records import Record
from kioku.service.activity.log import log_events, make_event
from kioku.service.engine import warn
from kioku.service.remember.drafts import MemoryDraft, build_memory
from kioku.service.remember.storing import insert
from kioku.service.vectors import embed_memory

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "FinalizeReport",
    "finalize_idle_sessions",
    "finalize_session",
    "point_key",
    "sweep_key",
]

#: How much of each side of one turn, and of all turns together, the summarizer reads.
_TURN_CHARS: Final = 1_000
_SIDE_CHARS: Final = 16_000
#: How many of the turns' keywords the summary carries besides its own.
_KEYWORDS: Final = 8
#: How many resolved items the summary lists, each cut at this many characters.
_ITEMS_SHOWN: Final = 5
_ITEM_CHARS: Final = 200
#: Attempts when another process finalizes the same session meanwhile.
_ATTEMPTS: Final = 3


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FinalizeReport(Record):
    """What finalizing one session did. Without new turns only ``session_id`` and
    ``last_finalized_turn_index`` are set."""

    session_id: str
    #: The session's last finalized turn now (counting from 0; -1 when none is).
    last_finalized_turn_index: int = -1
    #: The numbers of the first and last turn summarised now.
    first_turn: int | None = None
    last_turn: int | None = None
    #: The turns summarised now, oldest first.
    turn_ids: tuple[str, ...] = ()
    #: The session-summary episode (None when it could not be stored: its source was erased).
    summary_id: str | None = None
    #: The resolved items of the turns, each logged as an ``issue_resolved`` event (logged
    #: with the summary stored before, when ``already_stored``).
    resolved: tuple[str, ...] = ()
    #: The summary was found stored already (by its source id) and was not stored again.
    already_stored: bool = False

    @property
    def turns(self) -> int:
        return len(self.turn_ids)

    def to_dict(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "last_finalized_turn_index": self.last_finalized_turn_index,
            "first_turn": self.first_turn,
            "last_turn": self.last_turn,
            "turns": self.turns,
            "turn_ids": list(self.turn_ids),
            "summary_id": self.summary_id,
            "resolved": list(self.resolved),
            "already_stored": self.already_stored,
        }


def point_key(engine: Engine, session_id: str) -> str:
    """The state row of a session's finalized point (its ``last_finalized_turn_index``)."""
    return "encoding:" + json.dumps([engine.user_id, engine.agent_id, session_id])


def sweep_key(engine: Engine) -> str:
    """The state row of the scope's sweep point (see the module's docstring)."""
    return "encoding-sweep:" + json.dumps([engine.user_id, engine.agent_id])


def is_session_summary(memory: Memory) -> bool:
    """Whether ``memory`` is the summary episode of a finalized session."""
    session = memory.session_id
    return session is not None and any(is_summary_source(s, session) for s in memory.source_ids)


def _episodes(engine: Engine, **criteria: object) -> MemoryFilter:
    return MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=Kind.EPISODE.value,
        order=Order.CREATED_ASC,
        **criteria,  # type: ignore[arg-type]
    )


def _point(engine: Engine, session_id: str) -> FinalizedPoint:
    return FinalizedPoint.from_json(engine.store.get_state(point_key(engine, session_id)))


def _new_turns(engine: Engine, session_id: str, point: FinalizedPoint) -> list[Memory]:
    flt = _episodes(engine, session_id=session_id, created_after=point.through)
    return [
        m
        for m in engine.store.iter(flt)
        if not is_session_summary(m) and point.is_new(m.created, m.id)
    ]


def _joined(texts: Iterable[str]) -> str:
    text = "\n".join(t.strip()[:_TURN_CHARS] for t in texts if t.strip())
    return text[:_SIDE_CHARS]


def _summary_text(engine: Engine, turns: Sequence[Memory]) -> str:
    said, answered = _joined(m.trigger for m in turns), _joined(m.content for m in turns)
    out = engine.analyzer.summarize(said or answered, answered or said)
    text = " ".join(part.strip() for part in (out.trigger, out.content) if part.strip())
    return text or said or answered


def _with_resolved(text: str, items: Sequence[str]) -> str:
    """The summary with the resolved items of its turns in a last line (the first few)."""
    if not items:
        return text
    unique = list(dict.fromkeys(items))
    shown = "; ".join(item[:_ITEM_CHARS] for item in unique[:_ITEMS_SHOWN])
    more = f" (+{len(unique) - _ITEMS_SHOWN} more)" if len(unique) > _ITEMS_SHOWN else ""
    return f"{text}\nResolved: {shown}{more}"


def _summary_memory(
    engine: Engine, session_id: str, turns: Sequence[Memory], text: str, now: datetime, first: int
) -> Memory:
    strongest = max(turns, key=lambda m: m.emotional_intensity)
    category = Counter(m.category for m in turns).most_common(1)[0][0]
    keywords = Counter(k for m in turns for k in m.keywords)
    last = first + len(turns) - 1
    draft = MemoryDraft(
        trigger=summary_trigger(session_id, first, last),
        content=text,
        intensity=strongest.emotional_intensity,
        category=category,
        valence=strongest.emotional_valence.value,
        arousal=strongest.emotional_arousal,
        tags=strongest.emotional_tags,
        keywords=[SUMMARY_KEYWORD, *(k for k, _ in keywords.most_common(_KEYWORDS))],
        created=now,
        session_id=session_id,
        source_ids=(summary_source(session_id, first, last),),
    )
    memory = build_memory(
        draft,
        config=engine.config,
        now=now,
        id_suffix=secrets.token_hex(4),
        user_id=engine.user_id,
        agent_id=engine.agent_id,
    )
    return embed_memory(engine, memory)


def _moment(engine: Engine, now: datetime | None) -> datetime:
    clock = engine.clock.now()
    return clock if now is None else check_created("now", now, clock)


def _stored_summary(engine: Engine, session_id: str, source: str) -> Memory | None:
    flt = _episodes(engine, session_id=session_id)
    if source not in engine.store.source_ids(flt):
        return None
    return next((m for m in engine.store.iter(flt) if source in m.source_ids), None)


def finalize_session(
    engine: Engine, session_id: str, *, now: datetime | None = None
) -> FinalizeReport:
    """Summarise the session's turns not finalized yet into one episode, log what they
    report resolved and mark them finalized, in one transaction (see the module's
    docstring). Nothing new: nothing is written."""
    session_id = check_provenance_id("session_id", session_id)
    moment = _moment(engine, now)
    store = engine.store
    for _ in range(_ATTEMPTS):
        point = _point(engine, session_id)
        turns = _new_turns(engine, session_id, point)
        if not turns:
            return FinalizeReport(session_id, point.index)
        first = point.index + 1
        items = [(turn, item) for turn in turns for item in _items(turn)]
        text = _with_resolved(_summary_text(engine, turns), [item for _, item in items])
        summary = _summary_memory(engine, session_id, turns, text, moment, first)
        after = point.after([(m.created, m.id) for m in turns])
        from kioku.service.consolidation.outcomes import apply_outcomes, judge_outcomes
        from kioku.service.consolidation.resolutions import record_resolutions

        judged = judge_outcomes(engine, session_id, turns, point.through)
        with store.atomic():
            if _point(engine, session_id) != point:
                continue  # finalized meanwhile by another process: do it again on what is left
            stored, known = _store_summary(engine, session_id, summary)
            if not known:  # else its events were logged with it, in the same transaction
                log_events(engine, [_resolved_event(engine, t, i, moment) for t, i in items])
                record_resolutions(engine, [(i, t.id, t.session_id) for t, i in items], moment)
                apply_outcomes(engine, judged, moment)
            store.set_state(point_key(engine, session_id), after.to_json())
        return FinalizeReport(
            session_id,
            after.index,
            first_turn=first,
            last_turn=after.index,
            turn_ids=tuple(m.id for m in turns),
            summary_id=stored,
            resolved=tuple(item for _, item in items),
            already_stored=known,
        )
    raise StoreError(
        f"session {session_id!r} kept changing while it was being finalized",
        hint="another process is finalizing it; try again",
    )


def _resolved_event(engine: Engine, turn: Memory, item: str, at: datetime) -> ActivityEvent:
    return make_event(
        engine,
        EventType.ISSUE_RESOLVED,
        item,
        at=at,
        memory_ids=[turn.id],
        session_id=turn.session_id,
    )


def _items(turn: Memory) -> list[str]:
    return resolved_items(f"{turn.trigger}\n{turn.content}")


def _store_summary(engine: Engine, session_id: str, summary: Memory) -> tuple[str | None, bool]:
    """``(id, found stored already)`` of the session summary, stored unless an earlier
    attempt stored it; no id when its source was erased."""
    source = summary.source_ids[0]
    earlier = _stored_summary(engine, session_id, source)
    if earlier is not None:
        return earlier.id, True
    try:
        return insert(engine, summary, generated_id=True).id, False
    except ErasedSourceError:
        return None, False


def _idle(idle_minutes: float) -> timedelta:
    if (
        isinstance(idle_minutes, bool)
        or not isinstance(idle_minutes, int | float)
        or not 0 <= idle_minutes <= 525_600  # a year
    ):
        raise ValidationError("idle_minutes", idle_minutes, "minutes from 0 to 525600")
    return timedelta(minutes=idle_minutes)


def finalize_idle_sessions(
    engine: Engine, *, now: datetime | None = None, idle_minutes: float = IDLE.total_seconds() / 60
) -> list[FinalizeReport]:
    """Finalize every session of the scope whose last turn is at least ``idle_minutes`` before
    ``now`` and has turns not finalized yet, the longest quiet first. A session that fails
    with a kioku error is left for the next run, with a warning."""
    moment = _moment(engine, now)
    idle = _idle(idle_minutes)
    store = engine.store
    since = _sweep_point(store.get_state(sweep_key(engine)))
    sessions: dict[str, list[Memory]] = {}
    for memory in store.iter(_episodes(engine, created_after=since)):
        if memory.session_id is not None and not is_session_summary(memory):
            sessions.setdefault(memory.session_id, []).append(memory)
    last_turns: dict[str, datetime] = {}
    for session, turns in sessions.items():
        point = _point(engine, session)
        if any(point.is_new(m.created, m.id) for m in turns):
            last_turns[session] = turns[-1].created
    reports: list[FinalizeReport] = []
    # A session going on has a turn after ``now - idle``: the next run finds it from there.
    swept = min(moment, engine.clock.now()) - idle
    for session in idle_sessions(last_turns, moment, idle):
        try:
            reports.append(finalize_session(engine, session, now=moment))
        except KiokuError as exc:
            warn(engine, f"session {session!r} was not finalized: {exc}")
            swept = min(swept, last_turns[session])  # so the next run finds it again
    if since is None or swept > since:
        store.set_state(sweep_key(engine), swept.isoformat())
    return reports


def _sweep_point(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None  # unreadable: read every episode once, which is slower but complete
    return moment if moment.tzinfo is not None else None
