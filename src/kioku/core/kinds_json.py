"""Kind details to and from plain JSON values (the store's ``details`` column, exports).

The shape is flat and named after spec 001's front matter, so a details object reads the
same in ``kioku show --json``, in an export and in the database. Reading is strict: a value
of the wrong type is a :class:`~kioku.errors.ValidationError` naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kioku.core.kinds import (
    Details,
    KnowledgeDetails,
    Preference,
    ProcedureDetails,
    ProfileDetails,
    ProfileFact,
)
from kioku.core.model import Kind
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import ValidationError

__all__ = [
    "check_details",
    "details_from_dict",
    "details_from_json",
    "details_kind",
    "details_to_dict",
    "details_to_json",
]


def details_kind(details: Details) -> Kind:
    """The kind whose details ``details`` are."""
    if isinstance(details, KnowledgeDetails):
        return Kind.KNOWLEDGE
    if isinstance(details, ProcedureDetails):
        return Kind.PROCEDURE
    return Kind.PROFILE


def check_details(kind: Kind, details: object) -> None:
    """Refuse details that are not of ``kind`` (episodes have none)."""
    if details is None:
        return
    if not isinstance(details, KnowledgeDetails | ProcedureDetails | ProfileDetails):
        raise ValidationError("details", type(details).__name__, "kind details or None")
    if details_kind(details) is not kind:
        raise ValidationError(
            "details",
            type(details).__name__,
            f"details of a {kind.value}" if kind is not Kind.EPISODE else "none for an episode",
        )


def _ts(moment: datetime | None) -> str | None:
    return None if moment is None else format_ts(moment)


def details_to_dict(details: Details | None) -> dict[str, Any] | None:
    """A JSON-ready dict of ``details`` (None stays None)."""
    if details is None:
        return None
    if isinstance(details, KnowledgeDetails):
        return {
            "confidence": details.confidence,
            "source_episodes": list(details.source_episodes),
            "auto_consolidated": details.auto_consolidated,
            "version": details.version,
            "supersedes": details.supersedes,
            "superseded_by": details.superseded_by,
            "valid_from": _ts(details.valid_from),
            "valid_until": _ts(details.valid_until),
            "merged_from": list(details.merged_from),
            "notes": list(details.notes),
        }
    if isinstance(details, ProcedureDetails):
        return {
            "description": details.description,
            "steps": list(details.steps),
            "confidence": details.confidence,
            "success_count": details.success_count,
            "failure_count": details.failure_count,
            "version": details.version,
            "auto_distilled": details.auto_distilled,
            "source_episodes": list(details.source_episodes),
        }
    return {
        "person": details.person,
        "aliases": list(details.aliases),
        "preferences": [
            {
                "topic": p.topic,
                "value": p.value,
                "polarity": p.polarity,
                "count": p.count,
                "sources": list(p.sources),
                "last_said": _ts(p.last_said),
            }
            for p in details.preferences
        ],
        "facts": [
            {
                "key": f.key,
                "value": f.value,
                "sources": list(f.sources),
                "confidence": f.confidence,
                "first_said": _ts(f.first_said),
                "last_said": _ts(f.last_said),
            }
            for f in details.facts
        ],
        "mentions": dict(details.mentions),
    }


def details_to_json(details: Details | None) -> str | None:
    data = details_to_dict(details)
    return None if data is None else json.dumps(data, ensure_ascii=False, sort_keys=True)


class _Reader:
    """Typed access to one JSON object, with errors that name the field."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, Mapping):
            raise ValidationError(where, data, "a JSON object")
        self.data = data
        self.where = where

    def _bad(self, key: str, what: str) -> ValidationError:
        return ValidationError(f"{self.where}.{key}", self.data.get(key), what)

    def text(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self._bad(key, "text")
        return value

    def opt_text(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, str):
            raise self._bad(key, "text or null")
        return value

    def number(self, key: str, default: float) -> float:
        value = self.data.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self._bad(key, "a finite number")
        return float(value)

    def unit(self, key: str, default: float) -> float:
        value = self.number(key, default)
        if not 0.0 <= value <= 1.0:
            raise self._bad(key, "a number from 0 to 1")
        return value

    def count(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self._bad(key, f"a whole number of at least {minimum}")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(key, "a list of texts")
        return tuple(value)

    def moment(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(key, "an ISO 8601 time with its offset")
        try:
            return parse_ts(value, UTC)
        except ValueError:
            raise self._bad(key, "an ISO 8601 time with its offset") from None

    def items(self, key: str) -> list[_Reader]:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise self._bad(key, "a list of objects")
        return [_Reader(item, f"{self.where}.{key}[{i}]") for i, item in enumerate(value)]


def details_from_dict(kind: Kind, data: object) -> Details | None:
    """The details of a memory of ``kind`` from their JSON form (None for episodes)."""
    if kind is Kind.EPISODE:
        if data not in (None, {}):
            raise ValidationError("details", data, "nothing: episodes have no details")
        return None
    r = _Reader({} if data is None else data, "details")
    if kind is Kind.KNOWLEDGE:
        return KnowledgeDetails(
            confidence=r.unit("confidence", KnowledgeDetails().confidence),
            source_episodes=r.texts("source_episodes"),
            auto_consolidated=r.flag("auto_consolidated"),
            version=r.count("version", 1, minimum=1),
            supersedes=r.opt_text("supersedes"),
            superseded_by=r.opt_text("superseded_by"),
            valid_from=r.moment("valid_from"),
            valid_until=r.moment("valid_until"),
            merged_from=r.texts("merged_from"),
            notes=r.texts("notes"),
        )
    if kind is Kind.PROCEDURE:
        return ProcedureDetails(
            description=r.text("description", ""),
            steps=r.texts("steps"),
            confidence=r.unit("confidence", ProcedureDetails("").confidence),
            success_count=r.count("success_count", 0),
            failure_count=r.count("failure_count", 0),
            version=r.count("version", 1, minimum=1),
            auto_distilled=r.flag("auto_distilled"),
            source_episodes=r.texts("source_episodes"),
        )
    mentions = r.data.get("mentions", {})
    if not isinstance(mentions, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in mentions.items()
    ):
        raise ValidationError("details.mentions", mentions, "an object of speaker: count")
    return ProfileDetails(
        person=r.text("person", ""),
        aliases=r.texts("aliases"),
        preferences=tuple(
            Preference(
                topic=p.text("topic"),
                value=p.text("value"),
                polarity=_polarity(p),
                count=p.count("count", 1, minimum=1),
                sources=p.texts("sources"),
                last_said=p.moment("last_said"),
            )
            for p in r.items("preferences")
        ),
        facts=tuple(
            ProfileFact(
                key=f.text("key"),
                value=f.text("value"),
                sources=f.texts("sources"),
                confidence=f.unit("confidence", 1.0),
                first_said=f.moment("first_said"),
                last_said=f.moment("last_said"),
            )
            for f in r.items("facts")
        ),
        mentions=tuple(sorted((str(k), int(v)) for k, v in mentions.items())),
    )


def _polarity(r: _Reader) -> int:
    value = r.count("polarity", 1, minimum=-1)
    if value not in (-1, 1):
        raise ValidationError(f"{r.where}.polarity", value, "1 (likes) or -1 (dislikes)")
    return value


def details_from_json(kind: Kind, text: str | None) -> Details | None:
    """Details from the store's column; a missing value stays None (the kind's defaults)."""
    if text is None or text == "":
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValidationError("details", text[:80], f"JSON ({exc})") from None
    return details_from_dict(kind, data)
