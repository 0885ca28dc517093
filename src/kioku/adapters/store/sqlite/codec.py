"""Conversion between :class:`~kioku.core.model.Memory` and rows of the ``memories`` table.

Lists are JSON arrays (``ensure_ascii=False``), times ISO 8601 with their offset, booleans
0/1, embeddings float32 little-endian BLOBs with their model name and dimension. The access
columns of schema version 9 (:data:`ACCESS_COLUMNS`) are seconds since the epoch, read back
in UTC.
"""

from __future__ import annotations

import json
import sqlite3
import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Final

from kioku.adapters.store.arguments import aware, epoch_seconds
from kioku.core.kinds import Details
from kioku.core.kinds_json import check_details, details_from_json, details_to_json
from kioku.core.model import Embedding, Kind, Memory, Relation, RelationType, Valence
from kioku.core.timefmt import format_ts, parse_ts
from kioku.core.validate import VECTOR_EXPECTED, storable_vector
from kioku.errors import StoreCorruptError, ValidationError

__all__ = [
    "ACCESS_COLUMNS",
    "MEMORY_COLUMNS",
    "STORED_COLUMNS",
    "decode_embedding",
    "decode_instant",
    "decode_memory",
    "decode_relations",
    "decode_text_list",
    "encode_access",
    "encode_embedding",
    "encode_instant",
    "encode_memory",
    "encode_row",
    "encode_text_list",
    "encode_ts",
    "local_zone",
]

#: Columns of ``memories`` in the order :func:`encode_memory` produces values.
MEMORY_COLUMNS: Final = (
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
)
#: Columns schema version 9 added, after :data:`MEMORY_COLUMNS` (whose first columns stay
#: those of older files): when a memory was last accessed and since when it is of low activity.
ACCESS_COLUMNS: Final = ("last_access_utc", "low_since_utc")
#: Every stored column of a memory, in the order :func:`encode_row` produces values.
STORED_COLUMNS: Final = MEMORY_COLUMNS + ACCESS_COLUMNS

#: Parsed details kept for texts read again (see :func:`_parsed_details`).
_DETAILS_CACHE: Final = 128
_FLOAT32: Final = "f"
_BIG_ENDIAN: Final = sys.byteorder == "big"
if array(_FLOAT32).itemsize != 4:  # pragma: no cover - every supported platform has 4
    raise ImportError("kioku's SQLite store needs a platform whose C float is 32 bits")


def local_zone() -> tzinfo:
    """The zone naive legacy timestamps are read in."""
    zone = datetime.now().astimezone().tzinfo
    return zone if zone is not None else UTC


def encode_ts(moment: datetime | None, field: str = "timestamp") -> str | None:
    return None if moment is None else format_ts(aware(field, moment))


def encode_instant(moment: datetime | None, field: str = "timestamp") -> float | None:
    """Seconds since the epoch of a timezone-aware ``moment`` (None stays None)."""
    return None if moment is None else epoch_seconds(field, moment)


#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder for every call.
_to_json: Final = json.JSONEncoder(ensure_ascii=False).encode


def encode_text_list(values: Sequence[str]) -> str:
    return _to_json(list(values)) if values else "[]"


def encode_embedding(embedding: Embedding | None) -> tuple[bytes | None, str | None, int | None]:
    """``(blob, model, dim)``: float32 little-endian whatever the host's byte order."""
    if embedding is None:
        return None, None, None
    vector = embedding.vector
    try:
        blob = _float32_layout(len(vector)).pack(*vector)
    except (TypeError, OverflowError, struct.error) as exc:
        raise ValidationError("embedding", embedding.model, VECTOR_EXPECTED) from exc
    if not storable_vector(vector):
        raise ValidationError("embedding", embedding.model, VECTOR_EXPECTED)
    return blob, embedding.model, len(vector)


@lru_cache(maxsize=64)
def _float32_layout(dim: int) -> struct.Struct:
    """The layout of ``dim`` float32 values, little-endian (packing a tuple with it takes less
    than half the time an ``array`` built from the tuple does)."""
    return struct.Struct(f"<{dim}f")


def decode_embedding(
    blob: bytes | None, model: str | None, dim: int | None, memory_id: str
) -> Embedding | None:
    if blob is None:
        return None
    raw = bytes(blob)
    if len(raw) % 4 != 0 or (dim is not None and dim * 4 != len(raw)):
        raise _unreadable(memory_id, "embedding", f"{len(raw)} bytes for dimension {dim}")
    values = array(_FLOAT32)
    values.frombytes(raw)
    if _BIG_ENDIAN:  # pragma: no cover - exercised only on big-endian hosts
        values.byteswap()
    return Embedding(model=model or "legacy:unknown", vector=tuple(values))


def encode_memory(memory: Memory) -> tuple[object, ...]:
    """Column values in :data:`MEMORY_COLUMNS` order."""
    created = encode_ts(memory.created, "created")
    check_details(memory.kind, memory.details)
    blob, model, dim = encode_embedding(memory.embedding)
    return (
        memory.id,
        created,
        # The full instant: the text keeps whole seconds, but memories made within one
        # second still sort in the order they were made.
        memory.created.timestamp(),
        float(memory.memory_days),
        int(bool(memory.recalled_since_last_batch)),
        int(memory.recall_count),
        int(memory.emotional_intensity),
        str(memory.emotional_valence),
        int(memory.emotional_arousal),
        encode_text_list(memory.emotional_tags),
        float(memory.decay_coefficient),
        memory.category,
        encode_text_list(memory.keywords),
        int(memory.current_level),
        memory.trigger,
        memory.content,
        blob,
        model,
        dim,
        float(memory.retention_score),
        encode_ts(memory.archived_at, "archived_at"),
        int(bool(memory.protected)),
        int(bool(memory.revival_requested)),
        encode_ts(memory.revival_requested_at, "revival_requested_at"),
        memory.user_id,
        memory.agent_id,
        str(memory.kind),
        memory.session_id,
        encode_text_list(memory.source_ids),
        _to_json([encode_ts(ts, "source_timestamps") for ts in memory.source_timestamps]),
        encode_ts(memory.updated_at, "updated_at"),
        details_to_json(memory.details),
    )


def encode_access(memory: Memory) -> tuple[float | None, float | None]:
    """Values of :data:`ACCESS_COLUMNS`."""
    return (
        encode_instant(memory.last_access, "last_access"),
        encode_instant(memory.low_activity_since, "low_activity_since"),
    )


def encode_row(memory: Memory) -> tuple[object, ...]:
    """Column values in :data:`STORED_COLUMNS` order."""
    return encode_memory(memory) + encode_access(memory)


def decode_instant(value: object) -> datetime | None:
    """A time kept as seconds since the epoch, in UTC (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not seconds since the epoch: {value!r}")
    return datetime.fromtimestamp(value, UTC)


def _unreadable(memory_id: str, field: str, detail: str) -> StoreCorruptError:
    return StoreCorruptError(
        f"memory {memory_id!r} has an unreadable {field} ({detail})",
        hint="run `kioku doctor`; fix the row with the sqlite3 shell or restore a backup",
    )


def decode_text_list(text: object, memory_id: str, field: str) -> tuple[str, ...]:
    """A JSON list-of-text column of one memory (tags, keywords, source ids)."""
    return _text_list(text, memory_id, field)


def _text_list(text: object, memory_id: str, field: str) -> tuple[str, ...]:
    if text is None or text in ("", "[]"):
        return ()
    try:
        value = json.loads(str(text))
    except ValueError as exc:
        raise _unreadable(memory_id, field, f"not JSON: {exc}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _unreadable(memory_id, field, "not a JSON array of strings")
    return tuple(value)


def _ts(text: object, local: tzinfo, memory_id: str, field: str) -> datetime | None:
    if text is None or text == "":
        return None
    try:
        return parse_ts(str(text), local)
    except ValueError as exc:
        raise _unreadable(memory_id, field, str(exc)) from exc


def decode_relations(rows: Sequence[sqlite3.Row | tuple[object, ...]]) -> dict[str, list[Relation]]:
    """``source_id -> relations`` from rows of ``(source_id, target_id, type)``."""
    out: dict[str, list[Relation]] = {}
    for source, target, kind in rows:
        try:
            relation = Relation(id=str(target), type=RelationType(str(kind)))
        except ValueError as exc:
            raise _unreadable(str(source), "relation", f"unknown type {kind!r}") from exc
        out.setdefault(str(source), []).append(relation)
    return out


def decode_memory(
    row: sqlite3.Row, relations: Mapping[str, Sequence[Relation]], local: tzinfo
) -> Memory:
    """A :class:`Memory` from a row selected with :data:`STORED_COLUMNS`."""
    memory_id = str(row["id"])
    created = _ts(row["created"], local, memory_id, "created")
    if created is None:
        raise _unreadable(memory_id, "created", "missing")
    stamps = tuple(
        _ts(text, local, memory_id, "source_timestamps")
        for text in _text_list(row["source_timestamps"], memory_id, "source_timestamps")
    )
    try:
        valence = Valence(str(row["emotional_valence"]))
        kind = Kind(str(row["kind"]))
    except ValueError as exc:
        raise _unreadable(memory_id, "enum field", str(exc)) from exc
    return Memory(
        id=memory_id,
        created=created,
        trigger=str(row["trigger"]),
        content=str(row["content"]),
        emotional_intensity=int(row["emotional_intensity"]),
        emotional_valence=valence,
        emotional_arousal=int(row["emotional_arousal"]),
        category=str(row["category"]),
        decay_coefficient=float(row["decay_coefficient"]),
        memory_days=float(row["memory_days"]),
        retention_score=float(row["retention_score"]),
        current_level=int(row["current_level"]),
        emotional_tags=_text_list(row["emotional_tags"], memory_id, "emotional_tags"),
        keywords=_text_list(row["keywords"], memory_id, "keywords"),
        recalled_since_last_batch=bool(row["recalled_since_last_batch"]),
        recall_count=int(row["recall_count"]),
        relations=tuple(relations.get(memory_id, ())),
        archived_at=_ts(row["archived_at"], local, memory_id, "archived_at"),
        protected=bool(row["protected"]),
        revival_requested=bool(row["revival_requested"]),
        revival_requested_at=_ts(
            row["revival_requested_at"], local, memory_id, "revival_requested_at"
        ),
        embedding=decode_embedding(
            row["embedding"], row["embedding_model"], row["embedding_dim"], memory_id
        ),
        user_id=str(row["user_id"]),
        agent_id=str(row["agent_id"]),
        kind=kind,
        session_id=None if row["session_id"] is None else str(row["session_id"]),
        source_ids=_text_list(row["source_ids"], memory_id, "source_ids"),
        source_timestamps=tuple(ts for ts in stamps if ts is not None),
        updated_at=_ts(row["updated_at"], local, memory_id, "updated_at"),
        details=_details(kind, row["details"], memory_id),
        last_access=_instant(row["last_access_utc"], memory_id, "last_access"),
        low_activity_since=_instant(row["low_since_utc"], memory_id, "low_activity_since"),
    )


def _instant(value: object, memory_id: str, field: str) -> datetime | None:
    try:
        return decode_instant(value)
    except (ValueError, OverflowError, OSError) as exc:
        raise _unreadable(memory_id, field, str(exc)) from exc


def _details(kind: Kind, text: object, memory_id: str) -> Details | None:
    if text is None or text == "":
        return None
    try:
        return _parsed_details(kind, str(text))
    except ValidationError as exc:
        raise _unreadable(memory_id, "details", str(exc)) from exc


@lru_cache(maxsize=_DETAILS_CACHE)
def _parsed_details(kind: Kind, text: str) -> Details | None:
    """Details are immutable (frozen records of tuples), so one parse serves every read of the
    same text: a profile or knowledge item read again and again (every remembered turn lists
    the profiles) is parsed once while it stays unchanged."""
    return details_from_json(kind, text)
