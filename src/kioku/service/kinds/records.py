"""A new knowledge item, procedure or profile: the fields every kind but the episode shares."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.ids import make_memory_id
from kioku.core.model import Kind, Memory, Valence

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["base_record", "new_record"]

#: Knowledge, procedures and profiles are never decayed by the batch; these only fill the row.
_NEUTRAL_INTENSITY: Final = 50
_CATEGORY: Final = "work"


def new_record(engine: Engine, kind: Kind, title: str, text: str) -> Memory:
    """A new memory of a kind that is not an episode, now, in the engine's scope."""
    return base_record(engine, kind, title, text, None)


def base_record(engine: Engine, kind: Kind, title: str, text: str, at: datetime | None) -> Memory:
    """A new memory of ``kind`` made at ``at`` (default now), neutral in emotion."""
    now = engine.clock.now()
    created = at or now
    return Memory(
        id=make_memory_id(created, secrets.token_hex(4)),
        created=created,
        trigger=title,
        content=text,
        emotional_intensity=_NEUTRAL_INTENSITY,
        emotional_valence=Valence.NEUTRAL,
        emotional_arousal=_NEUTRAL_INTENSITY,
        category=_CATEGORY if _CATEGORY in engine.config.categories else "casual",
        decay_coefficient=engine.config.retention.max_decay_coefficient,
        retention_score=float(_NEUTRAL_INTENSITY),
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=kind,
        updated_at=now,
    )
