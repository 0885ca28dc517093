"""Plain-dict views of domain objects, for JSON output (spec 000 field names)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kioku.core.explain import RetentionExplanation
from kioku.core.kinds_json import details_to_dict
from kioku.core.model import Level, Memory
from kioku.core.timefmt import format_ts

__all__ = ["explanation_to_dict", "memory_to_dict"]


def _ts(moment: datetime | None) -> str | None:
    return None if moment is None else format_ts(moment)


def memory_to_dict(memory: Memory, *, include_embedding: bool = False) -> dict[str, Any]:
    """Every field of the memory under its spec name, plus scope and provenance.

    The embedding vector is left out unless asked for (it is large); its model and
    dimension are always given.
    """
    data: dict[str, Any] = {
        "id": memory.id,
        "created": format_ts(memory.created),
        "memory_days": memory.memory_days,
        "recalled_since_last_batch": memory.recalled_since_last_batch,
        "recall_count": memory.recall_count,
        "emotional_intensity": memory.emotional_intensity,
        "emotional_valence": memory.emotional_valence.value,
        "emotional_arousal": memory.emotional_arousal,
        "emotional_tags": list(memory.emotional_tags),
        "decay_coefficient": round(memory.decay_coefficient, 10),
        "category": memory.category,
        "keywords": list(memory.keywords),
        "current_level": memory.current_level,
        "level_name": Level.NAMES[memory.current_level],
        "trigger": memory.trigger,
        "content": memory.content,
        "relations": [{"id": r.id, "type": r.type.value} for r in memory.relations],
        "retention_score": round(memory.retention_score, 10),
        "archived_at": _ts(memory.archived_at),
        "protected": memory.protected,
        "revival_requested": memory.revival_requested,
        "revival_requested_at": _ts(memory.revival_requested_at),
        "user_id": memory.user_id,
        "agent_id": memory.agent_id,
        "kind": memory.kind.value,
        "session_id": memory.session_id,
        "source_ids": list(memory.source_ids),
        "source_timestamps": [format_ts(t) for t in memory.source_timestamps],
        "embedding_model": memory.embedding.model if memory.embedding else None,
        "embedding_dim": memory.embedding.dim if memory.embedding else None,
        "updated_at": _ts(memory.updated_at),
        "details": details_to_dict(memory.details),
    }
    if include_embedding:
        data["embedding"] = list(memory.embedding.vector) if memory.embedding else None
    return data


def explanation_to_dict(explanation: RetentionExplanation) -> dict[str, Any]:
    return {
        "formula": explanation.formula,
        "score_now": round(explanation.score_now, 6),
        "level": explanation.level,
        "level_name": explanation.level_name,
        "level_by_score": explanation.level_by_score,
        "next_batch_at": format_ts(explanation.next_batch_at),
        "next_level": explanation.next_level,
        "days_until_next_level": explanation.days_until_next_level,
        "next_level_at": _ts(explanation.next_level_at),
        "forecast": [
            {
                "level": m.level,
                "level_name": m.level_name,
                "score_at_or_below": m.threshold,
                "days": m.days,
                "at": format_ts(m.at),
            }
            for m in explanation.milestones
        ],
        "note": explanation.note,
        "referenced_by": list(explanation.referenced_by),
    }
