"""``/v1/erasure``: the right to erasure (spec 003 §9.1) for the caller's own user.

First the plan (counts, never text, and a token for exactly the memories there are now),
then the erasure with that token: every memory of the user under every agent goes, and
every API key of the user is deleted with them, the one used for the call included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from kioku.interfaces.http.deps import Writer

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["router"]

router = APIRouter(prefix="/v1/erasure", tags=["erasure"])


class Erasure(BaseModel):
    """The confirmation of an erasure."""

    model_config = ConfigDict(extra="forbid")

    token: str = Field(description="The token POST /v1/erasure/plan gave, for this user.")


@router.post(
    "/plan",
    summary="What erasing the caller's user would delete (counts only) and its token",
)
async def plan(caller: Writer) -> dict[str, Any]:
    return await caller.run(lambda k: k.plan_erasure().to_dict())


@router.post(
    "",
    summary="Erase everything of the caller's user, API keys included",
    description="Needs the token of POST /v1/erasure/plan; it covers exactly the memories "
    "planned, so a memory written meanwhile makes it refused. Every memory of the user, "
    "under every agent, is erased; every API key of the user is deleted, this one too.",
)
async def erase(body: Erasure, caller: Writer) -> dict[str, Any]:
    def work(k: Kioku) -> dict[str, Any]:
        return k.erase_user(k.user_id, body.token).to_dict()

    return await caller.run(work)
