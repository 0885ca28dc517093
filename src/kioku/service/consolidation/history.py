"""What a knowledge item or procedure replaced, what replaced it, and its earlier versions:
the history ``kioku show`` prints, so it can say what a fact replaced and when."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kioku.core.kinds import KnowledgeDetails
from kioku.core.timefmt import format_ts

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine

__all__ = ["item_history"]


def _brief(engine: Engine, memory_id: str | None) -> dict[str, Any] | None:
    if memory_id is None:
        return None
    found = engine.store.get(memory_id)
    if found is None:
        return {"id": memory_id, "text": None}
    details = found.details
    out: dict[str, Any] = {"id": found.id, "text": found.content}
    if isinstance(details, KnowledgeDetails):
        out["valid_from"] = None if details.valid_from is None else format_ts(details.valid_from)
        out["valid_until"] = None if details.valid_until is None else format_ts(details.valid_until)
    return out


def item_history(engine: Engine, memory: Memory) -> dict[str, Any]:
    """The item's place in consolidation: what it replaced (and until when that held), what
    replaced it (and since when), what it was merged from, its saved versions and its
    low-activation mark."""
    details = memory.details
    out: dict[str, Any] = {}
    if isinstance(details, KnowledgeDetails):
        out["replaces"] = _brief(engine, details.supersedes)
        out["replaced_by"] = _brief(engine, details.superseded_by)
        out["merged_from"] = [_brief(engine, i) for i in details.merged_from]
        out["notes"] = list(details.notes)
    out["versions"] = [
        {"version": v.version, "saved_at": format_ts(v.saved_at), "text": v.content}
        for v in engine.store.versions(memory.id)
    ]
    out["low_activity_since"] = (
        None if memory.low_activity_since is None else format_ts(memory.low_activity_since)
    )
    return out
