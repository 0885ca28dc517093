"""Reading one scope's memories: listing, counting, and why a memory has its score and level."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kioku.core.model import Level, Memory
from kioku.ports.store import Order
from kioku.service.scope import get_owned, scoped

if TYPE_CHECKING:
    from kioku.core.explain import RetentionExplanation
    from kioku.service.engine import Engine

__all__ = ["count_memories", "explain", "list_memories"]


def list_memories(
    engine: Engine,
    *,
    level: int | Iterable[int] | None = None,
    category: str | Iterable[str] | None = None,
    archived: bool | None = False,
    protected: bool | None = None,
    kind: str | None = None,
    session_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    order: Order = Order.CREATED_DESC,
) -> list[Memory]:
    """Memories of ``engine``'s scope (see :meth:`Kioku.list`)."""
    levels = (level,) if isinstance(level, int) else (tuple(level) if level else None)
    cats = (category,) if isinstance(category, str) else (tuple(category) if category else None)
    if levels and Level.ARCHIVED in levels and archived is False:
        archived = None
    return engine.store.list(
        scoped(
            engine,
            levels=levels,
            categories=cats,
            archived=archived,
            protected=protected,
            kind=kind,
            session_id=session_id,
            limit=limit,
            offset=offset,
            order=order,
        )
    )


def count_memories(
    engine: Engine, *, archived: bool | None = None, kind: str | None = "episode"
) -> int:
    """How many memories of ``kind`` (default episodes; None: every kind) ``engine``'s scope
    has (only archived, only active, or all)."""
    return engine.store.count(scoped(engine, archived=archived, kind=kind))


def explain(engine: Engine, memory: Memory | str) -> RetentionExplanation:
    """Why the memory has its score and level, and when it will fade if never recalled."""
    from kioku.core.explain import explain_retention

    mem = get_owned(engine, memory) if isinstance(memory, str) else memory
    referencing = engine.store.referencing(mem.id)
    return explain_retention(mem, engine.config, engine.clock.now(), referencing)
