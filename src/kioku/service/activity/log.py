"""Recording and reading the unified activity log (spec 001).

Every event is one JSON line in spec 001's shape (:mod:`kioku.core.activity.jsonl`), stored
in the owner's scope with the ids of the memories it mentions: erasing a memory takes its
text out of every event that quoted it. Recording never fails the operation it records: a
log that cannot be written is reported through ``on_warning`` and the operation goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.activity.events import ActivityEvent, EventType, check_event
from kioku.core.activity.jsonl import checked_line, from_jsonl, to_jsonl
from kioku.errors import KiokuError
from kioku.ports.store import ActivityQuery, ActivityRow, StoredActivity
from kioku.service.engine import warn

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["MAX_LOGGED_CHARS", "log_events", "make_event", "read_events"]

#: Event content is cut here: the log points at memories, it does not copy them whole.
MAX_LOGGED_CHARS: Final = 2000


def make_event(
    engine: Engine,
    type: EventType,
    content: str = "",
    *,
    at: datetime | None = None,
    memory_ids: Sequence[str] = (),
    session_id: str | None = None,
    **fields: object,
) -> ActivityEvent:
    """An event of ``type`` in the engine's scope, now (or ``at``)."""
    event = ActivityEvent(
        ts=at or engine.clock.now(),
        type=type,
        content=content[:MAX_LOGGED_CHARS],
        session_id=session_id or "",
        memory_ids=tuple(memory_ids),
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        **fields,  # type: ignore[arg-type]
    )
    checked = check_event(event)
    if len(_MADE) >= _MADE_KEPT:
        _MADE.clear()
    _MADE[id(checked)] = checked
    return checked


#: The events :func:`make_event` checked lately, by identity: :func:`log_events` writes them
#: without checking them again (a stored turn's lines are made and written at once). Each is
#: held here, so its id names no other object while it is kept.
_MADE: dict[int, ActivityEvent] = {}
_MADE_KEPT: Final = 512


def _line(event: ActivityEvent) -> str:
    if _MADE.get(id(event)) is event:
        return checked_line(event)
    return to_jsonl(event)


def log_events(engine: Engine, events: Sequence[ActivityEvent]) -> None:
    """Append ``events`` (in the caller's transaction, if any); a failure only warns."""
    if not events:
        return
    try:
        engine.store.append_activity(
            [
                ActivityRow(
                    at=e.ts,
                    type=e.type.value,
                    user_id=e.user_id or engine.user_id,
                    agent_id=e.agent_id or engine.agent_id,
                    line=_line(e),
                    session_id=e.session_id or None,
                    memory_ids=e.memory_ids,
                )
                for e in events
            ]
        )
    except KiokuError as exc:
        warn(engine, f"the activity log could not be written: {exc}")


def read_events(
    engine: Engine,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    types: Sequence[str] = (),
    session_id: str | None = None,
    limit: int | None = None,
) -> list[tuple[StoredActivity, ActivityEvent | None]]:
    """The scope's events, oldest first (the newest ``limit``), each with its parsed form
    (None for a line that no longer parses, such as a redacted one)."""
    stored = engine.store.read_activity(
        ActivityQuery(
            user_id=engine.user_id,
            agent_id=engine.agent_id,
            session_id=session_id,
            since=since,
            until=until,
            types=tuple(types),
            limit=limit,
        )
    )
    out: list[tuple[StoredActivity, ActivityEvent | None]] = []
    for row in stored:
        try:
            event: ActivityEvent | None = from_jsonl(row.line, engine.clock.tz)
        except KiokuError:
            event = None
        out.append((row, event))
    return out
