"""Statements that change memories, each keeping the lexical index and the vector-cache
counter in step, inside the transaction the store opened for them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from kioku.adapters.store.sqlite import (
    activity_rows,
    erasure,
    originals,
    rows,
    search,
    vector_version,
)
from kioku.adapters.store.sqlite.codec import encode_row
from kioku.adapters.store.sqlite.queries import INSERT_MEMORY, PATCH_RELATIONS, PATCH_WHITELIST
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.model import Memory, Relation
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryPatch

__all__ = [
    "Inserts",
    "Update",
    "VectorDelta",
    "delete_memory",
    "prepare_inserts",
    "prepare_update",
]

_RULES_HINT: Final = (
    "levels are 1-4 and a memory is archived exactly when its level is 4; intensity and "
    "arousal are 0-100; valence is positive, negative or neutral"
)
_LEXICAL_FIELDS: Final = frozenset({"trigger", "content", "keywords"})
#: Patch fields that change what vector search can see (``archived_at`` moves the filter).
_VECTOR_FIELDS: Final = frozenset({"embedding", "archived_at"})


@dataclass(frozen=True, slots=True)
class VectorDelta:
    """What an insert did to vector search: the version before and after, and the new
    memories with vectors (so a cache at ``before`` can be extended to ``after``)."""

    before: int
    after: int
    memories: Sequence[Memory]


@dataclass(frozen=True, slots=True)
class Inserts:
    """New memories with their row values and index terms, computed before any lock."""

    memories: Sequence[Memory]
    values: list[tuple[object, ...]]
    terms: list[tuple[str, str]]

    def run(self, conn: sqlite3.Connection, *, track: bool = True) -> VectorDelta | None:
        """Insert the memories; what it did to vector search (None: nothing, or not
        ``track``-ed: no cache to carry it to)."""
        rows.refuse_taken_ids(conn, [memory.id for memory in self.memories])
        # A turn erased on purpose is never stored again, whoever asks (see .erasure).
        erasure.refuse_erased(conn, [s for memory in self.memories for s in memory.source_ids])
        for memory, values in zip(self.memories, self.values, strict=True):
            try:
                conn.execute(INSERT_MEMORY, values)
            except sqlite3.IntegrityError as exc:
                raise StoreError(
                    f"memory {memory.id!r} was refused by the store's rules ({exc})",
                    hint=_RULES_HINT,
                ) from exc
        for memory in self.memories:
            if memory.relations:
                rows.write_relations(conn, memory.id, memory.relations, replace=False)
        search.put_many(conn, self.terms)
        with_vectors = [memory for memory in self.memories if memory.embedding is not None]
        if not with_vectors:
            return None
        ids = [memory.id for memory in with_vectors]
        if not track:
            vector_version.bump_version(conn, ids)
            return None
        before = vector_version.read_version(conn)
        return VectorDelta(before, vector_version.bump_version(conn, ids), with_vectors)


def prepare_inserts(memories: Sequence[Memory]) -> Inserts:
    # Segmenting text is the slow part: it happens here, before the write lock is taken.
    return Inserts(
        memories=memories,
        values=[encode_row(memory) for memory in memories],
        terms=[(m.id, search.terms_text(m.trigger, m.content, m.keywords)) for m in memories],
    )


@dataclass(frozen=True, slots=True)
class Update:
    """One validated ``UPDATE`` of a memory and what must follow it."""

    sql: str
    params: tuple[object, ...]
    relations: Sequence[Relation] | None
    reindex: bool
    bump_vectors: bool
    #: New details must be of the memory's own kind.
    details_kind: str | None = None

    def run(self, conn: sqlite3.Connection, memory_id: str) -> bool:
        """Apply it; False when no memory has that id."""
        if self.details_kind is not None:
            row = conn.execute("SELECT kind FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is not None and str(row[0]) != self.details_kind:
                raise ValidationError(
                    "details", self.details_kind, f"details of a {row[0]} (the memory's kind)"
                )
        try:
            cursor = conn.execute(self.sql, (*self.params, rows.now_text(), memory_id))
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"the update of memory {memory_id!r} was refused ({exc})", hint=_RULES_HINT
            ) from exc
        if cursor.rowcount == 0:
            return False
        if self.relations is not None:
            rows.write_relations(conn, memory_id, list(self.relations), replace=True)
        if self.reindex:
            search.reindex(conn, memory_id)
        if self.bump_vectors:
            vector_version.bump_version(conn, [memory_id])
        return True


def prepare_update(patch: MemoryPatch) -> Update:
    changes = patch.changed()
    assignments: list[str] = []
    params: list[object] = []
    for name, value in changes.items():
        if name == PATCH_RELATIONS:
            continue
        column = PATCH_WHITELIST.get(name)
        if column is None:
            raise StoreError(
                f"the SQLite store cannot update field {name!r}",
                hint="map the field in PATCH_WHITELIST (adapters/store/sqlite/queries.py)",
            )
        assignments.append(column.sql)
        params.extend(column.encode(name, value))
    relations = changes.get(PATCH_RELATIONS)
    if relations is not None and not isinstance(relations, tuple | list):
        raise ValidationError("relations", relations, "a sequence of Relation")
    assignments.append("updated_at = ?")
    return Update(
        sql="UPDATE memories SET " + ", ".join(assignments) + " WHERE id = ?",
        params=tuple(params),
        relations=relations,
        reindex=bool(_LEXICAL_FIELDS.intersection(changes)),
        bump_vectors=bool(_VECTOR_FIELDS.intersection(changes)),
        details_kind=_details_kind(changes.get("details")),
    )


def _details_kind(details: object) -> str | None:
    from kioku.core.kinds_json import details_kind

    if isinstance(details, KnowledgeDetails | ProcedureDetails | ProfileDetails):
        return details_kind(details).value
    return None


def delete_memory(conn: sqlite3.Connection, memory_id: str) -> bool:
    """Erase the memory (its relations cascade) and its index row; False when absent."""
    row = conn.execute(
        "SELECT embedding IS NOT NULL FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    if row is None:
        return False
    originals.remove(conn, memory_id)
    activity_rows.redact(conn, [memory_id])
    conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    search.remove(conn, memory_id)
    if row[0]:
        vector_version.bump_version(conn, [memory_id])
    return True
