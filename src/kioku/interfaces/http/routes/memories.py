"""``/v1/memories``: the caller's memories of every kind: list, write, get, edit, erase."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Reader, Writer
from kioku.interfaces.http.problems import Problem
from kioku.interfaces.mcp import views as shared

__all__ = ["router"]

router = APIRouter(prefix="/v1/memories", tags=["memories"])

Kind = Literal["episode", "knowledge", "procedure", "profile"]


class NewMemory(BaseModel):
    """A memory written on purpose: an episode, a knowledge item or a procedure."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["episode", "knowledge", "procedure"] = Field(description="What to keep.")
    text: str = Field(description="The fact, the event, or a procedure's notes.")
    title: str = Field("", description="Subject, name or what happened.")
    description: str = Field("", description="What a procedure is for.")
    steps: list[str] = Field(default_factory=list, description="A procedure's steps, in order.")
    keywords: list[str] = Field(default_factory=list, description="Words to find it by.")
    protected: StrictBool = Field(False, description="Never forget it.")


class MemoryEdit(BaseModel):
    """The fields to change; those left out stay as they are."""

    model_config = ConfigDict(extra="forbid")

    trigger: str | None = Field(None, description="What the memory is about (its headline).")
    content: str | None = Field(None, description="What it says.")
    category: str | None = Field(None, description="One of the store's categories.")
    intensity: int | None = Field(None, description="Emotional intensity, 0 to 100.")
    tags: list[str] | None = Field(None, description="Emotion tags from the spec's set.")
    keywords: list[str] | None = Field(None, description="Words to find it by.")


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
    since: Annotated[
        datetime | None, Query(description="Only those made at or after this time (ISO 8601).")
    ] = None,
    until: Annotated[
        datetime | None, Query(description="Only those made before this time (ISO 8601).")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    for name, moment in (("since", since), ("until", until)):
        if moment is not None and moment.tzinfo is None:
            raise Problem(
                422,
                "invalid",
                f"{name} has no UTC offset",
                hint="give a time with its offset, e.g. 2026-03-01T00:00:00+09:00",
                errors=[{"field": name, "problem": "a time with its UTC offset"}],
            )
    memories = await caller.run(
        lambda k: views.list_memories(
            k,
            since=since,
            until=until,
            kind=kind,
            level=level,
            category=category,
            protected=protected,
            archived=archived,
            limit=limit + 1,
            offset=offset,
        )
    )
    items, next_offset = views.page(memories, offset, limit)
    return {
        "items": [views.memory(m) for m in items],
        "offset": offset,
        "limit": limit,
        "next_offset": next_offset,
    }


@router.post("", status_code=201, summary="Write a memory on purpose")
async def write_memory(body: NewMemory, caller: Writer) -> dict[str, Any]:
    def work(k: Any) -> dict[str, Any]:
        memory = k.write_memory(
            body.kind,
            body.text,
            title=body.title,
            description=body.description,
            steps=body.steps,
            keywords=body.keywords,
            protected=body.protected,
        )
        if body.protected and not memory.protected:  # an episode is stored as a turn is
            memory = k.protect(memory.id)
        return shared.brief(memory)

    return await caller.run(work)


@router.get("/{memory_id}", summary="One memory, every field (does not count as a recall)")
async def get_memory(memory_id: str, caller: Reader) -> dict[str, Any]:
    return views.memory(await caller.run(lambda k: k.get(memory_id)))


@router.patch("/{memory_id}", summary="Edit a memory: only the fields given change")
async def edit_memory(memory_id: str, body: MemoryEdit, caller: Writer) -> dict[str, Any]:
    edited = await caller.run(
        lambda k: k.edit_memory(
            memory_id,
            trigger=body.trigger,
            content=body.content,
            category=body.category,
            intensity=body.intensity,
            tags=body.tags,
            keywords=body.keywords,
        )
    )
    return views.memory(edited)


@router.delete("/{memory_id}", summary="Erase a memory for good (confirm repeats its id)")
async def forget_memory(
    memory_id: str,
    caller: Writer,
    confirm: Annotated[
        str | None, Query(description="The id of the memory again, to confirm the erasure.")
    ] = None,
    force: Annotated[bool, Query(description="Erase it even if it is protected.")] = False,
) -> dict[str, Any]:
    if confirm != memory_id:
        raise Problem(
            422,
            "confirmation-required",
            "nothing was erased: confirm must repeat the id of the memory to erase",
            hint=f"repeat the request with ?confirm={memory_id} if that memory is to go",
            errors=[{"field": "confirm", "problem": "the same id as the path"}],
        )
    report = await caller.run(lambda k: k.erase(memory_id, force=force))
    return shared.erased(memory_id, report)
