"""SQL for reading and updating memories, assembled only from the constant fragments here.

No caller-supplied string ever becomes SQL text: filters and patches choose among fixed
fragments, and every value travels as a ``?`` parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Final, NamedTuple

from kioku.adapters.store.arguments import epoch_seconds
from kioku.adapters.store.sqlite.codec import (
    STORED_COLUMNS,
    encode_embedding,
    encode_instant,
    encode_text_list,
    encode_ts,
)
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.kinds_json import details_to_json
from kioku.core.model import Embedding
from kioku.errors import ValidationError
from kioku.ports.store import MemoryFilter, Order

__all__ = [
    "INSERT_MEMORY",
    "INSERT_RELATION",
    "PATCH_RELATIONS",
    "PATCH_WHITELIST",
    "SELECT_MEMORIES",
    "PatchColumn",
    "keyset_clause",
    "order_clause",
    "placeholders",
    "sql_int",
    "where_clause",
]

SELECT_MEMORIES: Final = "SELECT " + ", ".join(STORED_COLUMNS) + " FROM memories"
INSERT_MEMORY: Final = (
    "INSERT INTO memories ("
    + ", ".join(STORED_COLUMNS)
    + ") VALUES ("
    + ", ".join("?" for _ in STORED_COLUMNS)
    + ")"
)
INSERT_RELATION: Final = (
    "INSERT INTO relations (source_id, target_id, type, created_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (source_id, target_id) DO UPDATE SET type = excluded.type"
)

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
    return (int(value),)


def _text_list(field: str, value: object) -> tuple[object, ...]:
    if not isinstance(value, tuple | list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(field, value, "a sequence of strings")
    return (encode_text_list(value),)


def _moment(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(value, datetime):
        raise ValidationError(field, value, "a timezone-aware datetime or None")
    return (encode_ts(value, field),)


def _seconds(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(value, datetime):
        raise ValidationError(field, value, "a timezone-aware datetime or None")
    return (encode_instant(value, field),)


def _embedding(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(value, Embedding):
        raise ValidationError(field, value, "an Embedding or None")
    return encode_embedding(value)


def _details(field: str, value: object) -> tuple[object, ...]:
    if value is not None and not isinstance(
        value, KnowledgeDetails | ProcedureDetails | ProfileDetails
    ):
        raise ValidationError(field, value, "kind details or None")
    return (details_to_json(value),)


#: The only fields :meth:`SqliteStore.update` can change, each with its fixed assignment.
PATCH_WHITELIST: Final[Mapping[str, PatchColumn]] = MappingProxyType(
    {
        "trigger": PatchColumn("trigger = ?", _text),
        "content": PatchColumn("content = ?", _text),
        "memory_days": PatchColumn("memory_days = ?", _real),
        "recalled_since_last_batch": PatchColumn("recalled_since_last_batch = ?", _flag),
        "recall_count": PatchColumn("recall_count = ?", _integer),
        "emotional_intensity": PatchColumn("emotional_intensity = ?", _integer),
        "emotional_valence": PatchColumn("emotional_valence = ?", _text),
        "emotional_arousal": PatchColumn("emotional_arousal = ?", _integer),
        "emotional_tags": PatchColumn("emotional_tags = ?", _text_list),
        "decay_coefficient": PatchColumn("decay_coefficient = ?", _real),
        "category": PatchColumn("category = ?", _text),
        "keywords": PatchColumn("keywords = ?", _text_list),
        "current_level": PatchColumn("current_level = ?", _integer),
        "retention_score": PatchColumn("retention_score = ?", _real),
        "archived_at": PatchColumn("archived_at = ?", _moment),
        "protected": PatchColumn("protected = ?", _flag),
        "revival_requested": PatchColumn("revival_requested = ?", _flag),
        "revival_requested_at": PatchColumn("revival_requested_at = ?", _moment),
        "embedding": PatchColumn(
            "embedding = ?, embedding_model = ?, embedding_dim = ?", _embedding
        ),
        "details": PatchColumn("details = ?", _details),
        "last_access": PatchColumn("last_access_utc = ?", _seconds),
        "low_activity_since": PatchColumn("low_since_utc = ?", _seconds),
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


def kind_value(kind: object) -> str:
    """The stored name of a kind, old names accepted (``semantic`` is ``knowledge``)."""
    from kioku.core.validate import check_kind

    return check_kind(kind).value


def placeholders(count: int) -> str:
    """``?, ?, ?`` for ``count`` values."""
    return ", ".join("?" for _ in range(count))


def _in(column: str, values: Sequence[object], parts: list[str], params: list[object]) -> None:
    if not values:
        parts.append("0 = 1")
        return
    parts.append(f"{column} IN ({placeholders(len(values))})")
    params.extend(values)


def where_clause(flt: MemoryFilter) -> tuple[str, list[object]]:
    """`` WHERE ...`` (or ``""``) and its parameters for every criterion of ``flt``.

    ``created_after`` is inclusive and ``created_before`` exclusive, compared as instants.
    """
    parts: list[str] = []
    params: list[object] = []
    equal: tuple[tuple[str, object], ...] = (
        ("user_id", flt.user_id),
        ("agent_id", flt.agent_id),
        ("kind", None if flt.kind is None else kind_value(flt.kind)),
        ("session_id", flt.session_id),
    )
    for column, value in equal:
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    flags = (
        ("protected", flt.protected),
        ("recalled_since_last_batch", flt.recalled_since_last_batch),
        ("revival_requested", flt.revival_requested),
    )
    for column, flag in flags:
        if flag is not None:
            parts.append(f"{column} = ?")
            params.append(int(flag))
    if flt.kinds is not None:
        _in("kind", [kind_value(k) for k in flt.kinds], parts, params)
    if flt.levels is not None:
        _in("current_level", [int(level) for level in flt.levels], parts, params)
    if flt.categories is not None:
        _in("category", list(flt.categories), parts, params)
    if flt.archived is not None:
        parts.append("archived_at IS NOT NULL" if flt.archived else "archived_at IS NULL")
    if flt.created_after is not None:
        parts.append("created_utc >= ?")
        params.append(epoch_seconds("created_after", flt.created_after))
    if flt.created_before is not None:
        parts.append("created_utc < ?")
        params.append(epoch_seconds("created_before", flt.created_before))
    return (" WHERE " + " AND ".join(parts) if parts else ""), params


def order_clause(order: Order) -> str:
    """`` ORDER BY ...`` with ties broken by id in the same direction, so order is total."""
    column, direction, _ = _ORDER[Order(order)]
    return f" ORDER BY {column} {direction}, id {direction}"


def keyset_clause(order: Order) -> tuple[str, str]:
    """``(key column, condition)`` that selects the rows after a given ``(key, id)``."""
    column, _, comparison = _ORDER[Order(order)]
    return column, f"({column}, id) {comparison} (?, ?)"


#: The largest integer SQLite holds; Python's ints go past it.
SQL_INT_MAX: Final = 2**63 - 1


def sql_int(value: int) -> int:
    """A limit or offset as SQLite can take it: capped at SQL_INT_MAX, which means the same
    (no table holds that many rows)."""
    return min(value, SQL_INT_MAX)


def check_page(limit: int | None, offset: int) -> None:
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise ValidationError("limit", limit, "a non-negative integer or None")
    if isinstance(offset, bool) or offset < 0:
        raise ValidationError("offset", offset, "a non-negative integer")
