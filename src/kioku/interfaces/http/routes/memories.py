"""``/v1/memories``: memories of every kind: list, get, create, protect, forget."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from kioku.core.serialize import memory_to_dict
from kioku.interfaces.http.deps import Reader

__all__ = ["router"]

router = APIRouter(prefix="/v1/memories", tags=["memories"])

Kind = Literal["episode", "knowledge", "procedure", "profile"]


@router.get("", summary="List memories, newest first, with filters and paging")
async def list_memories(
    caller: Reader,
    kind: Annotated[Kind | None, Query(description="Only this kind.")] = None,
    level: Annotated[int | None, Query(ge=1, le=4, description="Only this level.")] = None,
    category: Annotated[str | None, Query(description="Only this category.")] = None,
    protected: Annotated[bool | None, Query(description="Only (un)protected ones.")] = None,
    archived: Annotated[
        bool | None, Query(description="Archived ones (true), active ones (false, default).")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    memories = await caller.run(
        lambda k: k.list(
            kind=kind,
            level=level,
            category=category,
            protected=protected,
            archived=archived,
            limit=limit + 1,
            offset=offset,
        )
    )
    more = len(memories) > limit
    return {
        "items": [memory_to_dict(m) for m in memories[:limit]],
        "offset": offset,
        "limit": limit,
        "next_offset": offset + limit if more else None,
    }


@router.get("/{memory_id}", summary="One memory, every field")
async def get_memory(memory_id: str, caller: Reader) -> dict[str, Any]:
    return memory_to_dict(await caller.run(lambda k: k.get(memory_id)))
