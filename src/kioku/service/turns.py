"""From an analysed conversation turn to a memory draft (記憶生成 › 生成フロー)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from kioku.ports.analyzer import Analysis
from kioku.service.drafts import MemoryDraft

__all__ = ["draft_from_analysis"]


def draft_from_analysis(
    analysis: Analysis,
    *,
    at: datetime | None,
    session_id: str | None,
    source_ids: Iterable[str],
    source_timestamps: Iterable[datetime],
    protected: bool | None = None,
) -> MemoryDraft:
    """The draft of the memory a turn becomes; ``protected`` overrides the analysis."""
    return MemoryDraft(
        trigger=analysis.trigger,
        content=analysis.content,
        intensity=analysis.intensity,
        category=analysis.category,
        valence=analysis.valence.value,
        arousal=analysis.arousal,
        tags=analysis.tags,
        keywords=analysis.keywords,
        protected=analysis.protected if protected is None else protected,
        created=at,
        session_id=session_id,
        source_ids=tuple(source_ids),
        source_timestamps=tuple(source_timestamps),
    )
