"""Remembering and recalling: ``/v1/turns``, ``/v1/recall``, ``/v1/prime``, ``/v1/search``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictBool

from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Reader, Writer
from kioku.interfaces.mcp import views as shared

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["recall"])

SearchKind = Literal["episode", "knowledge", "procedure", "profile"]


class Turn(BaseModel):
    """One conversation turn to remember."""

    model_config = ConfigDict(extra="forbid")

    user: str = Field(description="What the user said.")
    assistant: str = Field("", description="What the assistant replied.")
    session_id: str | None = Field(None, description="The conversation this turn belongs to.")


class RecallQuery(BaseModel):
    """What to recall memories for."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="The prompt or question to recall memories for.")
    top_k: int | None = Field(None, ge=1, le=1000, description="How many memories at most.")
    session_id: str | None = Field(None, description="The conversation, to carry its mood.")
    mark: StrictBool = Field(True, description="Count what is recalled as recalled.")
    at: AwareDatetime | None = Field(None, description="Recall as of this moment.")
    mood_shift: StrictBool | None = Field(
        None,
        description="Turn the mood shift on or off for this recall (null: the `[mood] shift` "
        "setting).",
    )


class PrimeQuery(BaseModel):
    """A message about to be answered."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="The message about to be answered.")
    session_id: str | None = Field(None, description="The conversation, to carry its mood.")
    sender: str | None = Field(None, description="Who sent it (their profile is primed).")
    max_chars: int | None = Field(None, ge=1, le=1_000_000, description="The block's budget.")


class SearchQuery(BaseModel):
    """A deliberate search of every memory."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="What to look for: words, a name, a question.")
    kinds: list[SearchKind] | None = Field(None, description="Only these kinds (default all).")
    top_k: int = Field(10, ge=1, le=1000, description="How many results.")
    include_archive: StrictBool = Field(True, description="Also search archived memories.")
    since: AwareDatetime | None = Field(None, description="Only those made at or after this.")
    until: AwareDatetime | None = Field(None, description="Only those made before this.")


@router.post(
    "/turns",
    status_code=201,
    summary="Remember one conversation turn (200 with already_known when stored before)",
)
async def remember_turn(body: Turn, caller: Writer, response: Response) -> dict[str, Any]:
    data = await caller.run(
        lambda k: shared.remembered(
            k.remember_turn(body.user, body.assistant, session_id=body.session_id)
        )
    )
    if data["already_known"]:
        response.status_code = 200
    return data


@router.post(
    "/recall",
    summary="Recall the memories that matter for a prompt, with the block to inject",
    description="What is recalled counts as recalled (strengthened at the next batch) when "
    "`mark` is true and the key may write; a read-only key recalls without leaving a trace.",
)
async def recall(body: RecallQuery, caller: Reader) -> dict[str, Any]:
    at: datetime | None = body.at
    mark = body.mark and caller.access.can_write
    return await caller.run(
        lambda k: views.recalled(
            k.recall(
                body.query,
                top_k=body.top_k,
                session_id=body.session_id,
                mark=mark,
                at=at,
                mood_shift=body.mood_shift,
            )
        )
    )


@router.post(
    "/prime",
    summary="What to bring to mind before answering a message",
    description="What is primed counts as recalled when the key may write; a read-only key "
    "primes without leaving a trace.",
)
async def prime(body: PrimeQuery, caller: Reader) -> dict[str, Any]:
    mark = caller.access.can_write
    return await caller.run(
        lambda k: shared.primed(
            k.prime(
                body.message,
                session_id=body.session_id,
                sender=body.sender,
                max_chars=body.max_chars,
                mark=mark,
            )
        )
    )


@router.post("/search", summary="Search every memory on purpose, archive included")
async def search(body: SearchQuery, caller: Reader) -> dict[str, Any]:
    return await caller.run(
        lambda k: shared.searched(
            k.search_memory(
                body.query,
                kinds=body.kinds,
                since=body.since,
                until=body.until,
                include_archive=body.include_archive,
                top_k=body.top_k,
            )
        )
    )
