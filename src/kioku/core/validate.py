"""Validation of memory fields: the rules a record must satisfy before it is stored.

Each failure raises :class:`~kioku.errors.ValidationError` naming the field (with its
spec name, e.g. ``emotional_intensity``), the value and what is allowed.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from kioku.core.ids import is_memory_id
from kioku.core.model import ALL_TAGS, Kind, Level, Memory, Valence
from kioku.errors import ValidationError

__all__ = [
    "EARLIEST",
    "FUTURE_TOLERANCE",
    "LATEST",
    "MAX_ID_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_VECTOR_LENGTH",
    "MIN_VECTOR_LENGTH",
    "VECTOR_EXPECTED",
    "check_arousal",
    "check_category",
    "check_created",
    "check_intensity",
    "check_kind",
    "check_provenance_id",
    "check_scope_id",
    "check_tags",
    "check_turn",
    "check_turn_text",
    "check_valence",
    "is_blank",
    "normalise_keywords",
    "storable_vector",
    "validate_memory",
]

#: The lengths (Euclidean norms) a memory's vector may have, unless it is all zeros. Both
#: stores compute a vector's length from its float32 values, and pgvector sums the squares
#: and products in single precision: past about 1.8e19 the sum overflows (the cosine is NaN)
#: and below about 1e-19 every square vanishes (the vector then matched every query
#: perfectly), so such a vector could be stored but never ranked. These bounds keep every sum
#: well inside float32's normal range for up to 16,000 values.
MIN_VECTOR_LENGTH = 1e-15
MAX_VECTOR_LENGTH = 1e18
#: What a refused vector should have been, for the error.
VECTOR_EXPECTED = (
    f"finite numbers, all zero or of length from {MIN_VECTOR_LENGTH:.0e} to "
    f"{MAX_VECTOR_LENGTH:.0e} (scale the vector, for example to unit length)"
)
#: A single trigger or content may hold at most this many characters (1 MiB of text).
MAX_TEXT_CHARS = 1_048_576
_MAX_SCOPE_CHARS = 200
#: A session id or source id may hold at most this many characters.
MAX_ID_CHARS = 1000
#: The earliest creation time a memory may have: the Unix epoch. ``created_utc`` (epoch
#: seconds) is then never negative and the id's date part always has eight digits.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
#: The latest creation time any memory may have. Well before the end of ``datetime`` so the
#: next batch, the retention forecast and a year of projections can always be computed.
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
#: How far after "now" a new memory may be dated: any UTC offset mistake or clock skew
#: stays within it, a date in another year does not (a future memory would keep the recency
#: bonus of a brand-new one until its date came).
FUTURE_TOLERANCE = timedelta(days=1)
#: Unicode categories that show nothing: separators, control, format, surrogate, unassigned.
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Cn"})


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
        if _has_surrogate(word):
            raise ValidationError("keywords", word, "keywords as UTF-8 text")
        text = word.strip()
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace, control or format characters."""
    if text and "!" <= text[0] <= "~":
        return False  # a visible ASCII character first, as most text has
    return all(unicodedata.category(c) in _INVISIBLE for c in text)


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
    if _has_surrogate(value):
        raise ValidationError(
            field, "<text with a lone surrogate>", "valid Unicode text (it is not UTF-8)"
        )
    return value


def check_turn_text(field: str, value: object) -> str:
    """One side of a conversation turn: text of at most MAX_TEXT_CHARS characters.

    Control characters and lone surrogates inside it are left to the analyzer, which drops
    them; they never reach a stored memory (:func:`validate_memory` refuses them).
    """
    if not isinstance(value, str):
        raise ValidationError(field, value, "text")
    if len(value) > MAX_TEXT_CHARS:
        raise ValidationError(
            field, f"<{len(value)} characters>", f"at most {MAX_TEXT_CHARS} characters"
        )
    return value


def check_turn(user: object, assistant: object) -> tuple[str, str]:
    """A conversation turn worth remembering: text on at least one side.

    A turn whose user and assistant texts are both blank (empty, whitespace, control or
    format characters only) is refused: it would be stored as "(empty turn)" and injected
    into later prompts.
    """
    user_text = check_turn_text("user", user)
    assistant_text = check_turn_text("assistant", assistant)
    if is_blank(user_text) and is_blank(assistant_text):
        raise ValidationError(
            "user",
            user_text,
            "a turn with some text (the user's message, the assistant's reply or both)",
            hint="an empty turn is not stored; give the text of the turn",
        )
    return user_text, assistant_text


def check_provenance_id(field: str, value: object) -> str:
    """A session id or source id: non-blank text of at most MAX_ID_CHARS characters."""
    allowed = f"a non-empty id of at most {MAX_ID_CHARS} characters, without control characters"
    if not isinstance(value, str) or is_blank(value) or len(value) > MAX_ID_CHARS:
        raise ValidationError(field, value, allowed)
    if _has_surrogate(value) or (
        # Printable text has no control character: only other text is read character by
        # character.
        not value.isprintable() and any(unicodedata.category(c) == "Cc" for c in value)
    ):
        raise ValidationError(field, value, allowed)
    return value


def check_created(field: str, value: object, now: datetime | None = None) -> datetime:
    """A creation time: timezone-aware, from 1970-01-01 UTC, and with ``now`` given, at most
    FUTURE_TOLERANCE after it (else before LATEST)."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValidationError(field, value, "a timezone-aware timestamp")
    latest = LATEST if now is None else min(LATEST, now + FUTURE_TOLERANCE)
    if not EARLIEST <= value <= latest:
        shown = value.isoformat(timespec="seconds")
        upper = (
            "9000-01-01"
            if latest == LATEST
            else f"{latest.isoformat(timespec='seconds')} (a day after now)"
        )
        raise ValidationError(
            field,
            shown,
            f"a time from 1970-01-01T00:00:00Z to {upper}",
            hint="check the year and the UTC offset of the timestamp",
        )
    return value


def _check_scope(field: str, value: object) -> str:
    if (
        not isinstance(value, str)
        or is_blank(value)
        or len(value) > _MAX_SCOPE_CHARS
        or _has_surrogate(value)
        or "\x00" in value
    ):
        raise ValidationError(field, value, f"a non-empty id of at most {_MAX_SCOPE_CHARS} chars")
    return value


def check_scope_id(field: str, value: object) -> str:
    """A user_id or agent_id: non-blank text of at most 200 characters, storable as UTF-8."""
    return _check_scope(field, value)


def validate_memory(memory: Memory, categories: Sequence[str]) -> None:
    """Check every field of ``memory``; raise on the first violation."""
    if not is_memory_id(memory.id):
        raise ValidationError(
            "id", memory.id, "letters, digits and _.:- (at most 128, starting alphanumeric)"
        )
    check_created("created", memory.created)
    _check_text("trigger", memory.trigger, allow_empty=False)
    _check_text("content", memory.content, allow_empty=False)
    check_intensity(memory.emotional_intensity)
    check_arousal(memory.emotional_arousal)
    check_valence(memory.emotional_valence)
    check_category(memory.category, categories)
    check_kind(memory.kind)
    from kioku.core.kinds_json import check_details

    check_details(memory.kind, memory.details)
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
    if memory.session_id is not None:
        check_provenance_id("session_id", memory.session_id)
    for source in memory.source_ids:
        check_provenance_id("source_ids", source)
    for moment in memory.source_timestamps:
        check_created("source_timestamps", moment)
    for rel in memory.relations:
        if rel.id == memory.id:
            raise ValidationError("relations", rel.id, "links to other memories, not itself")
    if memory.embedding is not None and not storable_vector(memory.embedding.vector):
        raise ValidationError("embedding", "<vector>", VECTOR_EXPECTED)


def storable_vector(vector: Sequence[float]) -> bool:
    """Whether ``vector`` may be stored: every number finite, and all zero or its length
    between :data:`MIN_VECTOR_LENGTH` and :data:`MAX_VECTOR_LENGTH`. ``math.hypot`` is
    infinite when a number is and NaN when one is NaN, and neither overflows nor vanishes
    on finite numbers."""
    length = math.hypot(*vector)
    return length == 0.0 or MIN_VECTOR_LENGTH <= length <= MAX_VECTOR_LENGTH
