"""Validation of memory fields: the rules a record must satisfy before it is stored.

Each failure raises :class:`~kioku.errors.ValidationError` naming the field (with its
spec name, e.g. ``emotional_intensity``), the value and what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from kioku.core.ids import is_memory_id
from kioku.core.model import ALL_TAGS, Kind, Level, Memory, Valence
from kioku.errors import ValidationError

__all__ = [
    "MAX_TEXT_CHARS",
    "check_arousal",
    "check_category",
    "check_intensity",
    "check_kind",
    "check_tags",
    "check_valence",
    "normalise_keywords",
    "validate_memory",
]

#: A single trigger or content may hold at most this many characters (1 MiB of text).
MAX_TEXT_CHARS = 1_048_576
_MAX_SCOPE_CHARS = 200


def _check_int_range(field: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, value, f"an integer from {low} to {high}")
    if not low <= value <= high:
        raise ValidationError(field, value, f"an integer from {low} to {high}")
    return value


def check_intensity(value: object) -> int:
    return _check_int_range("emotional_intensity", value, 0, 100)


def check_arousal(value: object) -> int:
    return _check_int_range("emotional_arousal", value, 0, 100)


def check_valence(value: object) -> Valence:
    try:
        return Valence(str(value))
    except ValueError:
        allowed = ", ".join(v.value for v in Valence)
        raise ValidationError("emotional_valence", value, f"one of {allowed}") from None


def check_kind(value: object) -> Kind:
    try:
        return Kind(str(value))
    except ValueError:
        allowed = ", ".join(k.value for k in Kind)
        raise ValidationError("kind", value, f"one of {allowed}") from None


def check_category(value: object, categories: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in categories:
        raise ValidationError(
            "category",
            value,
            f"one of {', '.join(categories)}",
            hint="add the category under [retention.decay_by_category] in the config to allow it",
        )
    return value


def check_tags(tags: Iterable[object]) -> tuple[str, ...]:
    """Tags from the spec's set only, lower-cased, duplicates removed, order kept."""
    seen: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str):
            raise ValidationError("emotional_tags", tag, "tag names as strings")
        name = tag.strip().lower()
        if not name:
            continue
        if name not in ALL_TAGS:
            raise ValidationError(
                "emotional_tags",
                tag,
                f"tags from the spec's set: {', '.join(sorted(ALL_TAGS))}",
            )
        seen.setdefault(name, None)
    return tuple(seen)


def normalise_keywords(keywords: Iterable[object]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for word in keywords:
        if not isinstance(word, str):
            raise ValidationError("keywords", word, "keywords as strings")
        text = word.strip()
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _check_text(field: str, value: object, *, allow_empty: bool) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, value, "text")
    if not allow_empty and not value.strip():
        raise ValidationError(field, value, "non-empty text")
    if len(value) > MAX_TEXT_CHARS:
        raise ValidationError(
            field, f"<{len(value)} characters>", f"at most {MAX_TEXT_CHARS} characters"
        )
    if "\x00" in value:
        raise ValidationError(field, "<text with NUL>", "text without NUL characters")
    return value


def _check_scope(field: str, value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_SCOPE_CHARS:
        raise ValidationError(field, value, f"a non-empty id of at most {_MAX_SCOPE_CHARS} chars")
    return value


def validate_memory(memory: Memory, categories: Sequence[str]) -> None:
    """Check every field of ``memory``; raise on the first violation."""
    if not is_memory_id(memory.id):
        raise ValidationError(
            "id", memory.id, "letters, digits and _.:- (at most 128, starting alphanumeric)"
        )
    if memory.created.tzinfo is None:
        raise ValidationError("created", memory.created, "a timezone-aware timestamp")
    _check_text("trigger", memory.trigger, allow_empty=False)
    _check_text("content", memory.content, allow_empty=False)
    check_intensity(memory.emotional_intensity)
    check_arousal(memory.emotional_arousal)
    check_valence(memory.emotional_valence)
    check_category(memory.category, categories)
    check_kind(memory.kind)
    if check_tags(memory.emotional_tags) != memory.emotional_tags:
        raise ValidationError("emotional_tags", list(memory.emotional_tags), "normalised tags")
    if not (0.0 < memory.decay_coefficient < 1.0):
        raise ValidationError("decay_coefficient", memory.decay_coefficient, "a number in (0, 1)")
    if not math.isfinite(memory.memory_days) or memory.memory_days < 0:
        raise ValidationError("memory_days", memory.memory_days, "a finite number >= 0")
    if not math.isfinite(memory.retention_score) or memory.retention_score < 0:
        raise ValidationError("retention_score", memory.retention_score, "a finite number >= 0")
    if memory.current_level not in Level.NAMES:
        raise ValidationError("current_level", memory.current_level, "1, 2, 3 or 4")
    if (memory.current_level == Level.ARCHIVED) != (memory.archived_at is not None):
        raise ValidationError(
            "archived_at", memory.archived_at, "set exactly when current_level is 4"
        )
    if memory.recall_count < 0:
        raise ValidationError("recall_count", memory.recall_count, "an integer >= 0")
    _check_scope("user_id", memory.user_id)
    _check_scope("agent_id", memory.agent_id)
    for rel in memory.relations:
        if rel.id == memory.id:
            raise ValidationError("relations", rel.id, "links to other memories, not itself")
    if memory.embedding is not None and not all(math.isfinite(x) for x in memory.embedding.vector):
        raise ValidationError("embedding", "<vector>", "finite numbers")
