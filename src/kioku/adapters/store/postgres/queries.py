"""SQL for reading and updating memories, assembled only from the constant fragments here.

As on SQLite (:mod:`..sqlite.queries`), no caller-supplied string ever becomes SQL text:
filters and patches choose among fixed fragments, and every value travels as a ``%s``
parameter. A list criterion is one array parameter (``= ANY(%s)``), whatever its length.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Final, NamedTuple

from kioku.adapters.store.arguments import epoch_seconds
from kioku.adapters.store.postgres.codec import encode_vector
from kioku.adapters.store.sqlite.codec import encode_instant, encode_ts
from kioku.adapters.store.sqlite.queries import check_page, kind_value, sql_int
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.kinds_json import details_to_json
from kioku.core.model import Embedding
from kioku.errors import ValidationError
from kioku.ports.store import MemoryFilter, Order

__all__ = [
    "PATCH_RELATIONS",
    "PATCH_WHITELIST",
    "PatchColumn",
    "and_clause",
    "check_page",
    "keyset_clause",
    "order_clause",
    "scope_filter",
    "sql_int",
    "where_clause",
]

Encoder = Callable[[str, object], tuple[object, ...]]


class PatchColumn(NamedTuple):
    """A patchable field: its fixed SQL assignment and how its value becomes parameters."""

    sql: str
    encode: Encoder


def _text(field: str, value: object) -> tuple[object, ...]:
    if not isinstance(value, str):
        raise ValidationError(field, value, "text")
    return (value,)


def _integer(field: str, value: object) -> tuple[object, ...]:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, value, "an integer")
    return (value,)


def _real(field: str, value: object) -> tuple[object, ...]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(field, value, "a number")
    return (float(value),)


def _flag(field: str, value: object) -> tuple[object, ...]:
    if not isinstance(value, bool):
        raise ValidationError(field, value, "true or false")
    return (value,)


def _text_list(field: str, value: object) -> tuple[object, ...]:
    if not isinstance(value, tuple | list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(field, value, "a sequence of strings")
    return (list(value),)


def _moment(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(value, datetime):
        raise ValidationError(field, value, "a timezone-aware datetime or None")
    return (encode_ts(value, field),)


def _seconds(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(value, datetime):
        raise ValidationError(field, value, "a timezone-aware datetime or None")
    return (encode_instant(value, field),)


def _embedding(field: str, value: object) -> tuple[object, ...]:
    if value is None:
        return None, None, None
    if not isinstance(value, Embedding) or not value.vector:
        raise ValidationError(field, value, "an Embedding or None")
    return encode_vector(value.vector, field), value.model, len(value.vector)


def _details(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(
        value, KnowledgeDetails | ProcedureDetails | ProfileDetails
    ):
        raise ValidationError(field, value, "kind details or None")
    return (details_to_json(value),)


#: The only fields :meth:`PostgresStore.update` can change, each with its fixed assignment.
PATCH_WHITELIST: Final[Mapping[str, PatchColumn]] = MappingProxyType(
    {
        "trigger": PatchColumn("trigger = %s", _text),
        "content": PatchColumn("content = %s", _text),
        "memory_days": PatchColumn("memory_days = %s", _real),
        "recalled_since_last_batch": PatchColumn("recalled_since_last_batch = %s", _flag),
        "recall_count": PatchColumn("recall_count = %s", _integer),
        "emotional_intensity": PatchColumn("emotional_intensity = %s", _integer),
        "emotional_valence": PatchColumn("emotional_valence = %s", _text),
        "emotional_arousal": PatchColumn("emotional_arousal = %s", _integer),
        "emotional_tags": PatchColumn("emotional_tags = %s::text[]", _text_list),
        "decay_coefficient": PatchColumn("decay_coefficient = %s", _real),
        "category": PatchColumn("category = %s", _text),
        "keywords": PatchColumn("keywords = %s::text[]", _text_list),
        "current_level": PatchColumn("current_level = %s", _integer),
        "retention_score": PatchColumn("retention_score = %s", _real),
        "archived_at": PatchColumn("archived_at = %s", _moment),
        "protected": PatchColumn("protected = %s", _flag),
        "revival_requested": PatchColumn("revival_requested = %s", _flag),
        "revival_requested_at": PatchColumn("revival_requested_at = %s", _moment),
        "embedding": PatchColumn(
            "embedding = %s::vector, embedding_model = %s, embedding_dim = %s", _embedding
        ),
        "details": PatchColumn("details = %s::jsonb", _details),
        "last_access": PatchColumn("last_access_utc = %s", _seconds),
        "low_activity_since": PatchColumn("low_since_utc = %s", _seconds),
    }
)
#: The patch field stored in the ``relations`` table rather than a column.
PATCH_RELATIONS: Final = "relations"

_ORDER: Final[Mapping[Order, tuple[str, str, str]]] = MappingProxyType(
    {
        # order -> (key column, direction, keyset comparison)
        Order.CREATED_DESC: ("created_utc", "DESC", "<"),
        Order.CREATED_ASC: ("created_utc", "ASC", ">"),
        Order.SCORE_DESC: ("retention_score", "DESC", "<"),
        Order.SCORE_ASC: ("retention_score", "ASC", ">"),
    }
)


def where_clause(flt: MemoryFilter, table: str = "") -> tuple[str, list[object]]:
    """`` WHERE ...`` (or ``""``) and its parameters for every criterion of ``flt``;
    ``table`` (a fixed alias such as ``"m."``) prefixes the columns.

    ``created_after`` is inclusive and ``created_before`` exclusive, compared as instants.
    """
    parts: list[str] = []
    params: list[object] = []
    equal: tuple[tuple[str, object], ...] = (
        ("user_id", flt.user_id),
        ("agent_id", flt.agent_id),
        ("kind", None if flt.kind is None else kind_value(flt.kind)),
        ("session_id", flt.session_id),
        ("protected", flt.protected),
        ("recalled_since_last_batch", flt.recalled_since_last_batch),
        ("revival_requested", flt.revival_requested),
    )
    for column, value in equal:
        if value is not None:
            parts.append(f"{table}{column} = %s")
            params.append(bool(value) if isinstance(value, bool) else value)
    lists: tuple[tuple[str, str, list[object] | None], ...] = (
        ("kind", "text", None if flt.kinds is None else [kind_value(k) for k in flt.kinds]),
        (
            "current_level",
            "integer",
            None if flt.levels is None else [int(level) for level in flt.levels],
        ),
        ("category", "text", None if flt.categories is None else list(flt.categories)),
    )
    for column, sql_type, values in lists:
        if values is not None:
            parts.append(f"{table}{column} = ANY(%s::{sql_type}[])")
            params.append(values)
    if flt.archived is not None:
        parts.append(f"{table}archived_at IS {'NOT ' if flt.archived else ''}NULL")
    if flt.created_after is not None:
        parts.append(f"{table}created_utc >= %s")
        params.append(epoch_seconds("created_after", flt.created_after))
    if flt.created_before is not None:
        parts.append(f"{table}created_utc < %s")
        params.append(epoch_seconds("created_before", flt.created_before))
    return (" WHERE " + " AND ".join(parts) if parts else ""), params


def and_clause(flt: MemoryFilter, table: str = "") -> tuple[str, list[object]]:
    """The criteria of ``flt`` as `` AND ...`` (or ``""``), to follow a WHERE of one's own."""
    where, params = where_clause(flt, table)
    return (" AND " + where.removeprefix(" WHERE ") if where else ""), params


def scope_filter(flt: MemoryFilter) -> MemoryFilter:
    """What search honours of ``flt`` (as on SQLite): scope, kinds, time bounds, ``archived``."""
    return MemoryFilter(
        user_id=flt.user_id,
        agent_id=flt.agent_id,
        archived=flt.archived,
        kind=flt.kind,
        kinds=flt.kinds,
        created_after=flt.created_after,
        created_before=flt.created_before,
    )


def order_clause(order: Order) -> str:
    """`` ORDER BY ...`` with ties broken by id in the same direction, so order is total."""
    column, direction, _ = _ORDER[Order(order)]
    return f" ORDER BY {column} {direction}, id {direction}"


def keyset_clause(order: Order) -> tuple[int, str]:
    """``(index of the key in a memory row, condition)`` selecting rows after ``(key, id)``."""
    from kioku.adapters.store.postgres.codec import STORED_COLUMNS

    column, _, comparison = _ORDER[Order(order)]
    return STORED_COLUMNS.index(column), f"({column}, id) {comparison} (%s, %s)"
