"""What the ``/v1`` routes answer: JSON-ready dicts built from the service's results.

The MCP face's views (:mod:`kioku.interfaces.mcp.views`) are reused for what both faces
show (search, read, a turn, priming, explain, an erasure); this module adds what only the
HTTP API shows. Memory text is always the value of a field, never free text around it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kioku.core.serialize import memory_to_dict
from kioku.core.timefmt import format_ts

if TYPE_CHECKING:
    from datetime import datetime

    from kioku.core.activity.events import ActivityEvent
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.model import Memory
    from kioku.ports.store import StoredActivity
    from kioku.ports.store_records import ConsolidationRun, MidTermEntry, Resolution
    from kioku.service.inspection.reports import Stats
    from kioku.service.kioku import Kioku
    from kioku.service.recall.results import RecallResult

__all__ = [
    "activity_entry",
    "consolidation_run",
    "consolidation_runs",
    "history",
    "list_memories",
    "log_entry",
    "memory",
    "midterm_entry",
    "page",
    "recalled",
    "resolution",
    "stats",
]

T = TypeVar("T")


def page(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], int | None]:
    """The first ``limit`` of ``items`` (fetched with one more) and the next page's offset."""
    more = len(items) > limit
    return list(items[:limit]), (offset + limit if more else None)


def list_memories(
    kioku: Kioku,
    *,
    since: datetime | None,
    until: datetime | None,
    **criteria: Any,
) -> list[Memory]:
    """:meth:`Kioku.list`, and from ``since`` (inclusive) to ``until`` (exclusive) of their
    creation when given: the store's filter of the caller's own scope, as the list reads."""
    if since is None and until is None:
        return kioku.list(**criteria)
    from kioku.ports.store import Order
    from kioku.service.scope import scoped

    levels = criteria.pop("level", None)
    category = criteria.pop("category", None)
    archived = criteria.pop("archived", False)
    if levels == 4 and archived is False:
        archived = None
    return kioku.store.list(
        scoped(
            kioku,
            levels=None if levels is None else (levels,),
            categories=None if category is None else (category,),
            archived=archived,
            created_after=since,
            created_before=until,
            order=Order.CREATED_DESC,
            **criteria,
        )
    )


def recalled(result: RecallResult) -> dict[str, Any]:
    """A recall: the ``<memories>`` block to inject and each memory chosen, best first."""
    return {
        "query": result.query,
        "block": result.block,
        "count": len(result.items),
        "unknown_names": list(result.unknown_names),
        "limited": list(result.limited),
        "mood_shifted": result.mood_shifted,
        "results": [
            {
                "id": item.memory.id,
                "kind": item.memory.kind.value,
                "score": round(item.final, 4),
                "relevance": round(item.relevance, 4),
                "retention": round(item.retention, 4),
                "via": item.via,
                "level": item.memory.current_level,
                "archived": item.archived,
                "created": format_ts(item.memory.created),
                "trigger": item.memory.trigger,
                "content": item.memory.content,
            }
            for item in result.items
        ],
    }


def stats(found: Stats) -> dict[str, Any]:
    """Counts of the caller's scope: levels, categories, kinds, protection, the archive."""
    return found.counts()


def activity_entry(stored: StoredActivity, event: ActivityEvent | None) -> dict[str, Any]:
    """One activity event in spec 001's JSONL shape (``erased`` when its text was erased)."""
    return {
        "seq": stored.seq,
        "day": stored.day,
        "erased": event is None,
        "event": json.loads(stored.line),
    }


def log_entry(entry: LogEntry) -> dict[str, Any]:
    """One row of the lifecycle log."""
    return {
        "seq": entry.seq,
        "at": format_ts(entry.at),
        "event": entry.event.value,
        "memory_id": entry.memory_id,
        "batch_day": entry.batch_day,
        "level_before": entry.level_before,
        "level_after": entry.level_after,
        "score_before": entry.score_before,
        "score_after": entry.score_after,
        "details": dict(entry.details),
    }


def midterm_entry(entry: MidTermEntry) -> dict[str, Any]:
    """One thread of the mid-term tier, with its turns."""
    return {
        "thread_id": entry.thread_id,
        "session_id": entry.session_id,
        "created": format_ts(entry.created),
        "hot_until": format_ts(entry.hot_until),
        "expires": format_ts(entry.expires),
        "summary": entry.summary,
        "keywords": list(entry.keywords),
        "turn_count": entry.turn_count,
        "turns": list(entry.turns),
    }


def resolution(item: Resolution) -> dict[str, Any]:
    """One item reported resolved."""
    return {
        "seq": item.seq,
        "item": item.item,
        "at": format_ts(item.at),
        "agent_id": item.agent_id,
        "session_id": item.session_id,
        "source": item.source,
    }


def consolidation_run(run: ConsolidationRun) -> dict[str, Any]:
    """One recorded consolidation of the caller's scope (counts and ids, no text)."""
    return {
        "kind": run.kind,
        "period": run.period,
        "done_at": format_ts(run.done_at),
        "report": dict(run.report),
    }


def consolidation_runs(kioku: Kioku, level: str | None, limit: int) -> list[dict[str, Any]]:
    """The recorded consolidations of the caller's own scope (of ``level``), newest first."""
    runs = kioku.store.consolidation_runs(kioku.user_id, kioku.agent_id, level, limit=limit)
    return [consolidation_run(r) for r in runs]


def history(kioku: Kioku, memory_id: str) -> dict[str, Any]:
    """What a memory replaced and what replaced it, and every saved version in full."""
    found = kioku.history(memory_id)
    found["versions"] = [
        {
            "version": v.version,
            "saved_at": format_ts(v.saved_at),
            "trigger": v.trigger,
            "content": v.content,
        }
        for v in kioku.versions(memory_id)
    ]
    return {"id": memory_id, **found}


def memory(found: Memory) -> dict[str, Any]:
    """Every field of a memory (the embedding's model, not its vector)."""
    return memory_to_dict(found)
