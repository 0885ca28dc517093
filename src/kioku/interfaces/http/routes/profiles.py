"""``/v1/profiles``: what the caller's memory knows about people, and corrections by hand."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Reader, Writer

__all__ = ["router"]

router = APIRouter(prefix="/v1/profiles", tags=["profiles"])


class ProfileEdit(BaseModel):
    """Corrections to a person's profile (created when there is none yet)."""

    model_config = ConfigDict(extra="forbid")

    facts: dict[str, str] = Field(
        default_factory=dict, description="Facts to set, by key (e.g. {'city': 'Kobe'})."
    )
    remove_facts: list[str] = Field(default_factory=list, description="Fact keys to remove.")
    likes: list[str] = Field(default_factory=list, description="Things the person likes.")
    dislikes: list[str] = Field(default_factory=list, description="Things they dislike.")
    remove_preferences: list[str] = Field(
        default_factory=list, description="Likes or dislikes to remove."
    )
    aliases: list[str] = Field(default_factory=list, description="Other names of the person.")


@router.get("", summary="Every profile of the caller's memory")
async def list_profiles(caller: Reader) -> dict[str, Any]:
    found = await caller.run(lambda k: k.profiles())
    return {"items": [views.memory(m) for m in found], "count": len(found)}


@router.get("/{person}", summary="The profile of a person (by name or alias, any case)")
async def get_profile(person: str, caller: Reader) -> dict[str, Any]:
    return views.memory(await caller.run(lambda k: k.profile(person)))


@router.patch("/{person}", summary="Correct a person's profile: facts, preferences, aliases")
async def edit_profile(person: str, body: ProfileEdit, caller: Writer) -> dict[str, Any]:
    edited = await caller.run(
        lambda k: k.edit_profile(
            person,
            facts=list(body.facts.items()),
            remove_facts=body.remove_facts,
            likes=body.likes,
            dislikes=body.dislikes,
            remove_preferences=body.remove_preferences,
            aliases=body.aliases,
        )
    )
    return views.memory(edited)
