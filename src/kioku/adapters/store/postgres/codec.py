"""Conversion between :class:`~kioku.core.model.Memory` and rows of PostgreSQL's ``memories``.

Times are encoded exactly as the SQLite store encodes them (:mod:`..sqlite.codec`); lists are
``text[]``, flags booleans, details ``jsonb`` and embeddings pgvector ``vector`` values. A
vector is rounded to float32 and sent in pgvector's binary form (:class:`VectorParam`: no
decimal text to format or parse), or as text where a text form is wanted; either way the
server holds exactly those float32 values, and reading back through float32 gives them again,
as on SQLite.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Final

import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

from kioku.adapters.store.sqlite.codec import decode_instant, encode_instant, encode_ts
from kioku.core.kinds import Details
from kioku.core.kinds_json import check_details, details_from_json, details_to_json
from kioku.core.model import Embedding, Kind, Memory, Relation, Valence
from kioku.core.timefmt import parse_ts
from kioku.core.validate import VECTOR_EXPECTED, storable_vector
from kioku.errors import StoreCorruptError, ValidationError

__all__ = [
    "INSERT_MEMORY",
    "SELECT_MEMORIES",
    "STORED_COLUMNS",
    "VectorParam",
    "decode_memory",
    "decode_vector",
    "encode_row",
    "encode_vector",
    "rule_problem",
    "vector_param",
]

#: Every stored column of a memory, in the order :func:`encode_row` produces values.
STORED_COLUMNS: Final = (
    "id",
    "created",
    "created_utc",
    "memory_days",
    "recalled_since_last_batch",
    "recall_count",
    "emotional_intensity",
    "emotional_valence",
    "emotional_arousal",
    "emotional_tags",
    "decay_coefficient",
    "category",
    "keywords",
    "current_level",
    "trigger",
    "content",
    "embedding",
    "embedding_model",
    "embedding_dim",
    "retention_score",
    "archived_at",
    "protected",
    "revival_requested",
    "revival_requested_at",
    "user_id",
    "agent_id",
    "kind",
    "session_id",
    "source_ids",
    "source_timestamps",
    "updated_at",
    "details",
    "last_access_utc",
    "low_since_utc",
)
#: How a column is read and written when it is not plain (text in, text out).
_CASTS: Final[Mapping[str, str]] = {"embedding": "vector", "details": "jsonb"}
SELECT_MEMORIES: Final = (
    "SELECT "
    + ", ".join(f"{c}::text AS {c}" if c in _CASTS else c for c in STORED_COLUMNS)
    + " FROM memories"
)
INSERT_MEMORY: Final = (
    "INSERT INTO memories ("
    + ", ".join(STORED_COLUMNS)
    + ") VALUES ("
    + ", ".join(f"%s::{_CASTS[c]}" if c in _CASTS else "%s" for c in STORED_COLUMNS)
    + ")"
)
_COLUMN: Final = {name: index for index, name in enumerate(STORED_COLUMNS)}
_VALENCES: Final = frozenset(v.value for v in Valence)


def _float32(values: Sequence[float], field: str) -> array[float]:
    """``values`` rounded to float32; ValidationError unless a store can rank them."""
    try:
        rounded = array("f", values)
    except (TypeError, OverflowError) as exc:
        raise ValidationError(field, "vector", VECTOR_EXPECTED) from exc
    if not storable_vector(rounded):
        raise ValidationError(field, "vector", VECTOR_EXPECTED)
    return rounded


def encode_vector(values: Sequence[float], field: str = "embedding") -> str:
    """pgvector's text form of ``values``, rounded to float32 first."""
    return "[" + ",".join(repr(v) for v in _float32(values, field)) + "]"


#: The most values pgvector's ``vector`` holds.
_MAX_DIM: Final = 16000


class VectorParam:
    """A vector as pgvector's binary input: dimension and a zero (two big-endian ``uint16``),
    then the float32 values, big-endian. Bound to a parameter cast to ``vector``."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _VectorDumper(Dumper):
    # No type OID: the server takes the type from the statement's ``::vector`` cast, and the
    # ``vector`` type's OID differs from one database to the next.
    format = Format.BINARY

    def dump(self, obj: object) -> bytes:
        assert isinstance(obj, VectorParam)
        return obj.data


psycopg.adapters.register_dumper(VectorParam, _VectorDumper)


def vector_param(values: Sequence[float], field: str = "embedding") -> VectorParam:
    """``values`` rounded to float32, as a parameter for ``%s::vector``."""
    rounded = _float32(values, field)
    if len(rounded) > _MAX_DIM:
        raise ValidationError(field, "vector", f"at most {_MAX_DIM:,} values (pgvector's limit)")
    if sys.byteorder == "little":
        rounded.byteswap()
    return VectorParam(struct.pack(">HH", len(rounded), 0) + rounded.tobytes())


def decode_vector(text: str) -> tuple[float, ...]:
    """The float32 values of pgvector's text form ``[1,2.5,...]``."""
    body = text.strip()[1:-1]
    return tuple(array("f", (float(part) for part in body.split(","))) if body else ())


def rule_problem(memory: Memory) -> str | None:
    """Which of the table's CHECK rules ``memory`` breaks (None: none); checked before the
    insert so the refusal can name the memory."""
    if memory.current_level not in (1, 2, 3, 4):
        return f"level {memory.current_level} is not 1-4"
    if (memory.current_level == 4) != (memory.archived_at is not None):
        return "a memory is archived exactly when its level is 4"
    for name, value in (
        ("emotional_intensity", memory.emotional_intensity),
        ("emotional_arousal", memory.emotional_arousal),
    ):
        if not 0 <= int(value) <= 100:
            return f"{name} {value} is not 0-100"
    if str(memory.emotional_valence) not in _VALENCES:
        return f"emotional_valence {memory.emotional_valence!r} is not known"
    if memory.embedding is not None and not memory.embedding.vector:
        return "an embedding has no values"
    return None


def encode_row(memory: Memory) -> tuple[object, ...]:
    """Column values in :data:`STORED_COLUMNS` order."""
    check_details(memory.kind, memory.details)
    embedding = memory.embedding
    return (
        memory.id,
        encode_ts(memory.created, "created"),
        memory.created.timestamp(),
        float(memory.memory_days),
        bool(memory.recalled_since_last_batch),
        int(memory.recall_count),
        int(memory.emotional_intensity),
        str(memory.emotional_valence),
        int(memory.emotional_arousal),
        list(memory.emotional_tags),
        float(memory.decay_coefficient),
        memory.category,
        list(memory.keywords),
        int(memory.current_level),
        memory.trigger,
        memory.content,
        None if embedding is None else vector_param(embedding.vector),
        None if embedding is None else embedding.model,
        None if embedding is None else len(embedding.vector),
        float(memory.retention_score),
        encode_ts(memory.archived_at, "archived_at"),
        bool(memory.protected),
        bool(memory.revival_requested),
        encode_ts(memory.revival_requested_at, "revival_requested_at"),
        memory.user_id,
        memory.agent_id,
        str(memory.kind),
        memory.session_id,
        list(memory.source_ids),
        [encode_ts(ts, "source_timestamps") for ts in memory.source_timestamps],
        encode_ts(memory.updated_at, "updated_at"),
        details_to_json(memory.details),
        encode_instant(memory.last_access, "last_access"),
        encode_instant(memory.low_activity_since, "low_activity_since"),
    )


def _unreadable(memory_id: str, field: str, detail: str) -> StoreCorruptError:
    return StoreCorruptError(
        f"memory {memory_id!r} has an unreadable {field} ({detail})",
        hint="fix the row with psql or restore a backup",
    )


def _ts(text: object, local: tzinfo, memory_id: str, field: str) -> datetime | None:
    if text is None or text == "":
        return None
    try:
        return parse_ts(str(text), local)
    except ValueError as exc:
        raise _unreadable(memory_id, field, str(exc)) from exc


def _texts(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _instant(value: object, memory_id: str, field: str) -> datetime | None:
    try:
        return decode_instant(value)
    except (ValueError, OverflowError, OSError) as exc:
        raise _unreadable(memory_id, field, str(exc)) from exc


def _details(kind: Kind, text: object, memory_id: str) -> Details | None:
    try:
        return details_from_json(kind, None if text is None else str(text))
    except ValidationError as exc:
        raise _unreadable(memory_id, "details", str(exc)) from exc


def _embedding(row: Sequence[object], memory_id: str) -> Embedding | None:
    text = row[_COLUMN["embedding"]]
    if text is None:
        return None
    try:
        values = decode_vector(str(text))
    except ValueError as exc:
        raise _unreadable(memory_id, "embedding", str(exc)) from exc
    return Embedding(model=str(row[_COLUMN["embedding_model"]]), vector=values)


def decode_memory(
    row: Sequence[object], relations: Mapping[str, Sequence[Relation]], local: tzinfo
) -> Memory:
    """A :class:`Memory` from a row selected with :data:`SELECT_MEMORIES`."""
    col = _COLUMN
    memory_id = str(row[col["id"]])
    created = _ts(row[col["created"]], local, memory_id, "created")
    if created is None:
        raise _unreadable(memory_id, "created", "missing")
    stamps = (
        _ts(text, local, memory_id, "source_timestamps")
        for text in _texts(row[col["source_timestamps"]])
    )
    try:
        valence = Valence(str(row[col["emotional_valence"]]))
        kind = Kind(str(row[col["kind"]]))
    except ValueError as exc:
        raise _unreadable(memory_id, "enum field", str(exc)) from exc
    session = row[col["session_id"]]
    return Memory(
        id=memory_id,
        created=created,
        trigger=str(row[col["trigger"]]),
        content=str(row[col["content"]]),
        emotional_intensity=int(str(row[col["emotional_intensity"]])),
        emotional_valence=valence,
        emotional_arousal=int(str(row[col["emotional_arousal"]])),
        category=str(row[col["category"]]),
        decay_coefficient=float(str(row[col["decay_coefficient"]])),
        memory_days=float(str(row[col["memory_days"]])),
        retention_score=float(str(row[col["retention_score"]])),
        current_level=int(str(row[col["current_level"]])),
        emotional_tags=_texts(row[col["emotional_tags"]]),
        keywords=_texts(row[col["keywords"]]),
        recalled_since_last_batch=bool(row[col["recalled_since_last_batch"]]),
        recall_count=int(str(row[col["recall_count"]])),
        relations=tuple(relations.get(memory_id, ())),
        archived_at=_ts(row[col["archived_at"]], local, memory_id, "archived_at"),
        protected=bool(row[col["protected"]]),
        revival_requested=bool(row[col["revival_requested"]]),
        revival_requested_at=_ts(
            row[col["revival_requested_at"]], local, memory_id, "revival_requested_at"
        ),
        embedding=_embedding(row, memory_id),
        user_id=str(row[col["user_id"]]),
        agent_id=str(row[col["agent_id"]]),
        kind=kind,
        session_id=None if session is None else str(session),
        source_ids=_texts(row[col["source_ids"]]),
        source_timestamps=tuple(ts for ts in stamps if ts is not None),
        updated_at=_ts(row[col["updated_at"]], local, memory_id, "updated_at"),
        details=_details(kind, row[col["details"]], memory_id),
        last_access=_instant(row[col["last_access_utc"]], memory_id, "last_access"),
        low_activity_since=_instant(row[col["low_since_utc"]], memory_id, "low_activity_since"),
    )
