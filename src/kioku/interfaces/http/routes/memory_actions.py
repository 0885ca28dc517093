"""``/v1/memories/{id}/...``: what is done to one memory of the caller: read it (a recall),
protect it, explain it, show its history, report a procedure's outcome."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Reader, Writer
from kioku.interfaces.mcp import views as shared

__all__ = ["router"]

router = APIRouter(prefix="/v1/memories/{memory_id}", tags=["memories"])


class Outcome(BaseModel):
    """Whether following a procedure worked."""

    model_config = ConfigDict(extra="forbid")

    success: StrictBool = Field(description="True if it worked, false if it failed.")


@router.post("/read", summary="Read a memory in full; counts as recalling it")
async def read_memory(memory_id: str, caller: Writer) -> dict[str, Any]:
    return await caller.run(lambda k: shared.read(k.read_memory(memory_id)))


@router.post("/protect", summary="Protect a memory from compression, archiving and deletion")
async def protect(memory_id: str, caller: Writer) -> dict[str, Any]:
    return views.memory(await caller.run(lambda k: k.protect(memory_id)))


@router.delete("/protect", summary="Remove a memory's protection")
async def unprotect(memory_id: str, caller: Writer) -> dict[str, Any]:
    return views.memory(await caller.run(lambda k: k.unprotect(memory_id)))


@router.get("/explain", summary="Why a memory is as it is: score, level, fading forecast")
async def explain(memory_id: str, caller: Reader) -> dict[str, Any]:
    return await caller.run(lambda k: shared.explained(k, memory_id))


@router.get("/history", summary="What a memory replaced, what replaced it, its versions")
async def history(memory_id: str, caller: Reader) -> dict[str, Any]:
    return await caller.run(lambda k: views.history(k, memory_id))


@router.post("/outcome", summary="Count one success or failure of a procedure")
async def outcome(memory_id: str, body: Outcome, caller: Writer) -> dict[str, Any]:
    return await caller.run(
        lambda k: shared.brief(k.report_procedure_outcome(memory_id, body.success))
    )
