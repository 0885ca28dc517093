"""Turning what a caller gives into a complete, valid new memory.

Spec 000, 記憶生成 › 自動設定されるフィールド.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from kioku.config.schema import Config
from kioku.core.ids import make_memory_id
from kioku.core.model import Level, Memory
from kioku.core.retention import decay_coefficient, initial_memory_days
from kioku.core.validate import (
    check_arousal,
    check_category,
    check_intensity,
    check_kind,
    check_tags,
    check_valence,
    normalise_keywords,
    validate_memory,
)

__all__ = ["MemoryDraft", "build_memory"]


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """What a caller says about a new memory; everything else is derived."""

    trigger: str
    content: str
    intensity: int
    category: str
    valence: str = "neutral"
    arousal: int = 50
    tags: Iterable[str] = ()
    keywords: Iterable[str] = ()
    protected: bool = False
    created: datetime | None = None
    session_id: str | None = None
    source_ids: Iterable[str] = ()
    source_timestamps: Iterable[datetime] = ()
    kind: str = "episode"


def build_memory(
    draft: MemoryDraft,
    *,
    config: Config,
    now: datetime,
    id_suffix: str,
    user_id: str,
    agent_id: str,
) -> Memory:
    """A new Level 1 memory with the spec's initial values, validated.

    ``decay_coefficient`` from the category range and intensity, ``memory_days`` the time to
    the next batch, ``retention_score`` the intensity, ``current_level`` 1.
    """
    intensity = check_intensity(draft.intensity)
    category = check_category(draft.category, config.categories)
    created = draft.created or now
    if created.tzinfo is None:
        created = created.replace(tzinfo=now.tzinfo)
    memory = Memory(
        id=make_memory_id(created, id_suffix),
        created=created,
        trigger=draft.trigger,
        content=draft.content,
        emotional_intensity=intensity,
        emotional_valence=check_valence(draft.valence),
        emotional_arousal=check_arousal(draft.arousal),
        emotional_tags=check_tags(draft.tags),
        category=category,
        keywords=normalise_keywords(draft.keywords),
        decay_coefficient=decay_coefficient(
            category,
            intensity,
            config.retention.decay_by_category,
            config.retention.base_decay_coefficient,
        ),
        memory_days=initial_memory_days(created, config.compression.schedule_hour),
        retention_score=float(intensity),
        current_level=Level.FULL,
        protected=bool(draft.protected),
        user_id=user_id,
        agent_id=agent_id,
        kind=check_kind(draft.kind),
        session_id=draft.session_id,
        source_ids=tuple(draft.source_ids),
        source_timestamps=tuple(draft.source_timestamps),
    )
    validate_memory(memory, config.categories)
    return memory
