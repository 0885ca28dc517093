"""Checks of store-method arguments that do not depend on the database: both adapters
(SQLite and PostgreSQL) validate consolidation's runs, versions and mid-term threads with
these, so they refuse the same values with the same errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.model import Memory
from kioku.core.timefmt import format_ts
from kioku.errors import ValidationError

__all__ = [
    "aware",
    "epoch_seconds",
    "moment",
    "nonempty_text",
    "report_json",
    "text_list",
    "version_of",
]


def nonempty_text(field: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(field, value, "non-empty text")
    return value


def text_list(field: str, values: object) -> list[str]:
    if not isinstance(values, tuple | list) or not all(isinstance(v, str) for v in values):
        raise ValidationError(field, values, "a sequence of strings")
    return list(values)


def aware(field: str, value: object) -> datetime:
    """``value`` when it is a timezone-aware datetime; ValidationError naming ``field`` when
    it is not (a naive time would be read in whatever zone the reader assumes)."""
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(field, value, "a timezone-aware datetime")
    return value


def epoch_seconds(field: str, value: object) -> float:
    """Seconds since the epoch of a timezone-aware ``value`` (see :func:`aware`)."""
    return aware(field, value).timestamp()


def moment(value: datetime, field: str) -> tuple[str, float]:
    """``(ISO text, seconds since the epoch)`` of a timezone-aware ``value``."""
    checked = aware(field, value)
    return format_ts(checked), checked.timestamp()


def report_json(report: Mapping[str, object]) -> str:
    try:
        return json.dumps(dict(report), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError("report", type(report).__name__, "JSON of counts and ids") from exc


def version_of(memory: Memory) -> int:
    """The version a saved copy of ``memory`` records (knowledge and procedures count theirs)."""
    details = memory.details
    if isinstance(details, KnowledgeDetails | ProcedureDetails):
        return int(details.version)
    return 1
