"""Editing a memory by hand: its text, category, emotion or words, and nothing else.

An edit is checked as a new memory is (:func:`~kioku.core.validate.validate_memory` on the
memory as it would be), saves the memory as it was as a version (so its history shows what
it said before), gives it a vector of its new text when the text changes, and is logged in
the activity log as a memory write. The lexical index follows the store's update. Everything
is written in one transaction.

Identity, time, scope, provenance, level and retention are not editable: a memory's origin
never changes, and its fading is the batch's to compute (the next batch scores it with the
new intensity). Profiles are edited with :func:`kioku.service.kinds.profiles.edit_profile`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from kioku.core.model import Kind
from kioku.core.validate import (
    check_intensity,
    check_tags,
    normalise_keywords,
    storable_vector,
    validate_memory,
)
from kioku.errors import ValidationError
from kioku.ports.store import MemoryPatch
from kioku.service.scope import get_owned
from kioku.service.vectors import embed_memory, note_vector_model

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine

__all__ = ["EDITABLE", "edit_memory"]

#: The fields an edit may change, as :func:`edit_memory` names them.
EDITABLE: Final = ("trigger", "content", "category", "intensity", "tags", "keywords")


def _words(field: str, value: Iterable[str]) -> Iterable[str]:
    if isinstance(value, str | bytes):
        raise ValidationError(field, value, "a list of strings, not one string")
    return value


def _edited(
    memory: Memory,
    *,
    trigger: str | None,
    content: str | None,
    category: str | None,
    intensity: int | None,
    tags: Iterable[str] | None,
    keywords: Iterable[str] | None,
) -> Memory:
    """``memory`` with the given fields replaced (each normalised as a new memory's is)."""
    changed = memory
    if trigger is not None:
        changed = replace(changed, trigger=trigger)
    if content is not None:
        changed = replace(changed, content=content)
    if category is not None:
        changed = replace(changed, category=category)
    if intensity is not None:
        changed = replace(changed, emotional_intensity=check_intensity(intensity))
    if tags is not None:
        changed = replace(changed, emotional_tags=check_tags(_words("emotional_tags", tags)))
    if keywords is not None:
        changed = replace(changed, keywords=normalise_keywords(_words("keywords", keywords)))
    return changed


def _patch(old: Memory, new: Memory) -> MemoryPatch:
    """The store's patch from ``old`` to ``new`` (only the fields that differ)."""
    fields: dict[str, object] = {}
    if new.trigger != old.trigger:
        fields["trigger"] = new.trigger
    if new.content != old.content:
        fields["content"] = new.content
    if new.category != old.category:
        fields["category"] = new.category
    if new.emotional_intensity != old.emotional_intensity:
        fields["emotional_intensity"] = new.emotional_intensity
    if new.emotional_tags != old.emotional_tags:
        fields["emotional_tags"] = new.emotional_tags
    if new.keywords != old.keywords:
        fields["keywords"] = new.keywords
    if new.embedding is not old.embedding:
        fields["embedding"] = new.embedding
    return MemoryPatch(**fields)  # type: ignore[arg-type]  # names and types as above


def _log_edit(engine: Engine, memory: Memory, changed: Iterable[str]) -> None:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    event = make_event(
        engine,
        EventType.MEMORY_WRITE,
        memory.trigger,
        memory_ids=[memory.id],
        summary=f"{memory.kind.value} edited: {', '.join(changed)}",
    )
    log_events(engine, [event])


def edit_memory(
    engine: Engine,
    memory_id: str,
    *,
    trigger: str | None = None,
    content: str | None = None,
    category: str | None = None,
    intensity: int | None = None,
    tags: Iterable[str] | None = None,
    keywords: Iterable[str] | None = None,
) -> Memory:
    """Change the given fields of a memory of ``engine``'s scope; the memory as stored.

    Raises ValidationError when no field is given, when a value would not be accepted in a
    new memory, or for a profile; MemoryNotFoundError when the scope has no such memory. A
    change that leaves every field as it was writes nothing and returns the memory.
    """
    given = {
        "trigger": trigger,
        "content": content,
        "category": category,
        "intensity": intensity,
        "tags": tags,
        "keywords": keywords,
    }
    if all(value is None for value in given.values()):
        raise ValidationError(
            "change", {}, f"at least one of {', '.join(EDITABLE)}", hint="name what to change"
        )
    if intensity is not None and (isinstance(intensity, bool) or not isinstance(intensity, int)):
        raise ValidationError("emotional_intensity", intensity, "an integer from 0 to 100")
    store = engine.store
    with store.atomic():
        old = get_owned(engine, memory_id)
        if old.kind is Kind.PROFILE:
            raise ValidationError(
                "id",
                memory_id,
                "the id of an episode, knowledge item or procedure",
                hint="a profile is edited with edit_profile (PATCH /v1/profiles/{person})",
            )
        new = _edited(
            old,
            trigger=trigger,
            content=content,
            category=category,
            intensity=intensity,
            tags=tags,
            keywords=keywords,
        )
        # A vector no store can rank (written before stores refused such vectors) is made
        # again from the text rather than blocking the edit.
        unrankable = new.embedding is not None and not storable_vector(new.embedding.vector)
        if unrankable:
            new = replace(new, embedding=None)
        validate_memory(new, engine.config.categories)
        if new == old:
            return old
        if unrankable or (new.trigger, new.content) != (old.trigger, old.content):
            new = embed_memory(engine, replace(new, embedding=None))
        patch = _patch(old, new)
        store.save_version(old, engine.clock.now())
        store.update(memory_id, patch)
        note_vector_model(engine, new)
        _log_edit(engine, new, [name for name, value in given.items() if value is not None])
    return get_owned(engine, memory_id)
