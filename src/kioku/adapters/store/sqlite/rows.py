"""Statements over memory rows and their relations, run inside the store's transactions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Final

from kioku.adapters.store.sqlite.codec import decode_memory, decode_relations, local_zone
from kioku.adapters.store.sqlite.queries import INSERT_RELATION, placeholders
from kioku.core.model import Memory, Relation, Valence
from kioku.core.timefmt import format_ts
from kioku.errors import DuplicateIdError, StoreError
from kioku.ports.store import ScoringFields

__all__ = [
    "chunks",
    "decode_rows",
    "now_text",
    "referencing_many",
    "refuse_taken_ids",
    "scoring_fields",
    "write_relations",
]

CHUNK: Final = 500  # ids per IN (...) list, well under SQLite's parameter limit


def chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def now_text() -> str:
    """The current UTC time as stored in ``updated_at`` and ``relations.created_at``."""
    return format_ts(datetime.now(UTC))


def existing_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for chunk in chunks(ids):
        found.update(
            str(row[0])
            for row in conn.execute(
                f"SELECT id FROM memories WHERE id IN ({placeholders(len(chunk))})", tuple(chunk)
            )
        )
    return found


def refuse_taken_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """DuplicateIdError for an id repeated in ``ids`` or already in the store."""
    seen: set[str] = set()
    for memory_id in ids:
        if memory_id in seen:
            raise DuplicateIdError(memory_id)
        seen.add(memory_id)
    taken = existing_ids(conn, list(seen))
    if taken:
        raise DuplicateIdError(next(i for i in ids if i in taken))


def write_relations(
    conn: sqlite3.Connection, source: str, relations: Sequence[Relation], *, replace: bool
) -> None:
    """Store the outgoing relations of ``source``; ``replace`` drops the ones not listed.

    A relation kept by a replace keeps its ``created_at`` (it only changes type).
    """
    targets = [relation.id for relation in relations]
    if source in targets:
        raise StoreError(f"memory {source!r} cannot relate to itself", hint="drop that relation")
    if len(set(targets)) != len(targets):
        raise StoreError(
            f"memory {source!r} lists the same relation target more than once",
            hint="keep one relation per target memory",
        )
    found = existing_ids(conn, targets)
    missing = [target for target in targets if target not in found]
    if missing:
        raise StoreError(
            f"memory {source!r} relates to memories that do not exist: "
            + ", ".join(repr(m) for m in missing[:5]),
            hint="add the target memories first, or drop those relations",
        )
    if replace:
        keep = set(targets)
        gone = [
            (source, str(row[0]))
            for row in conn.execute(
                "SELECT target_id FROM relations WHERE source_id = ?", (source,)
            )
            if str(row[0]) not in keep
        ]
        conn.executemany("DELETE FROM relations WHERE source_id = ? AND target_id = ?", gone)
    now = now_text()
    conn.executemany(INSERT_RELATION, [(source, r.id, str(r.type), now) for r in relations])


def decode_rows(conn: sqlite3.Connection, rows: Sequence[sqlite3.Row]) -> list[Memory]:
    """Memories for ``rows``, with their relations fetched in one query per page of ids."""
    ids = [str(row["id"]) for row in rows]
    links: list[tuple[object, ...]] = []
    for chunk in chunks(ids):
        links.extend(
            tuple(link)
            for link in conn.execute(
                "SELECT source_id, target_id, type FROM relations "
                f"WHERE source_id IN ({placeholders(len(chunk))}) "
                "ORDER BY source_id, created_at, target_id",
                tuple(chunk),
            )
        )
    relations = decode_relations(links)
    local = local_zone()
    return [decode_memory(row, relations, local) for row in rows]


_SCORING: Final = (
    "SELECT id, created_utc, retention_score, recall_count, category, emotional_valence, "
    "emotional_arousal, emotional_tags, archived_at, kind, emotional_intensity, session_id "
    "FROM memories WHERE id IN ({})"
)
_VALENCES: Final = {valence.value: valence for valence in Valence}


def scoring_fields(conn: sqlite3.Connection, ids: Sequence[str]) -> list[ScoringFields]:
    """The ranking fields of the memories among ``ids`` (each once), in no set order."""
    out: list[ScoringFields] = []
    for chunk in chunks(ids):
        for r in conn.execute(_SCORING.format(placeholders(len(chunk))), tuple(chunk)):
            out.append(
                ScoringFields(
                    id=str(r[0]),
                    created=datetime.fromtimestamp(float(r[1]), UTC),
                    retention_score=float(r[2] or 0.0),
                    recall_count=int(r[3] or 0),
                    category=str(r[4]),
                    valence=_VALENCES.get(r[5]) or Valence(r[5]),
                    arousal=int(r[6]),
                    tags=tuple(json.loads(r[7])) if r[7] and r[7] != "[]" else (),
                    archived=r[8] is not None,
                    kind=str(r[9]),
                    intensity=int(r[10]),
                    session_id=None if r[11] is None else str(r[11]),
                )
            )
    return out


def referencing_many(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, list[str]]:
    """The ids of the memories whose relations point at each of ``ids`` (by source id)."""
    found: dict[str, list[str]] = {}
    for chunk in chunks(ids):
        for target, source in conn.execute(
            "SELECT target_id, source_id FROM relations "
            f"WHERE target_id IN ({placeholders(len(chunk))}) ORDER BY target_id, source_id",
            tuple(chunk),
        ):
            found.setdefault(str(target), []).append(str(source))
    return found
