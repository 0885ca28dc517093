"""Statements over memory rows and their relations, run inside the store's transactions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

import psycopg

from kioku.adapters.store.postgres import activity, lexical, vectors
from kioku.adapters.store.postgres.codec import (
    INSERT_MEMORY,
    decode_memory,
    encode_row,
    rule_problem,
)
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.migrations import KEY_STATE
from kioku.adapters.store.postgres.queries import PATCH_RELATIONS, PATCH_WHITELIST
from kioku.adapters.store.sqlite.codec import local_zone
from kioku.adapters.store.sqlite.search import terms_text
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.model import Embedding, Memory, Relation, RelationType
from kioku.core.timefmt import format_ts
from kioku.errors import DuplicateIdError, StoreCorruptError, StoreError, ValidationError
from kioku.ports.erasure import ErasedSourceError, keyed_digest
from kioku.ports.store import MemoryPatch

__all__ = [
    "Conn",
    "Update",
    "decode_rows",
    "delete_memories",
    "insert_memories",
    "now_text",
    "prepare_update",
    "read_key",
]

_RULES_HINT: Final = (
    "levels are 1-4 and a memory is archived exactly when its level is 4; intensity and "
    "arousal are 0-100; valence is positive, negative or neutral"
)


def now_text() -> str:
    """The current UTC time as stored in ``updated_at`` and ``relations.created_at``."""
    return format_ts(datetime.now(UTC))


def read_key(conn: Conn) -> bytes:
    """The store's secret for keyed digests (made again if its row was deleted by hand)."""
    row = conn.execute("SELECT value FROM state WHERE key = %s", (KEY_STATE,)).fetchone()
    if row is None:
        import os

        conn.execute(
            "INSERT INTO state (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
            (KEY_STATE, os.urandom(32).hex()),
        )
        return read_key(conn)
    return bytes.fromhex(str(row[0]))


def existing_ids(conn: Conn, ids: Sequence[str]) -> set[str]:
    if not ids:
        return set()
    found = conn.execute("SELECT id FROM memories WHERE id = ANY(%s::text[])", (list(ids),))
    return {str(row[0]) for row in found}


def insert_memories(
    conn: Conn, memories: Sequence[Memory], hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW
) -> None:
    """Insert ``memories`` with their relations; refuse taken ids, erased sources and rows
    breaking the table's rules, naming the memory."""
    seen: set[str] = set()
    for memory in memories:
        if memory.id in seen:
            raise DuplicateIdError(memory.id)
        seen.add(memory.id)
        problem = rule_problem(memory)
        if problem is not None:
            raise StoreError(
                f"memory {memory.id!r} was refused by the store's rules ({problem})",
                hint=_RULES_HINT,
            )
    values = [encode_row(memory) for memory in memories]
    taken = existing_ids(conn, list(seen))
    if taken:
        raise DuplicateIdError(next(m.id for m in memories if m.id in taken))
    sources = [source for memory in memories for source in memory.source_ids]
    if sources:
        key = read_key(conn)
        digests = {keyed_digest(key, source): source for source in sources}
        erased = conn.execute(
            "SELECT digest FROM tombstones WHERE digest = ANY(%s::text[])", (list(digests),)
        ).fetchone()
        if erased is not None:
            raise ErasedSourceError(digests[str(erased[0])])
    counts = Counter((m.embedding.model, m.embedding.dim) for m in memories if m.embedding)
    dropped = vectors.drop_for_bulk(conn, counts)
    with conn.cursor() as cursor:
        cursor.executemany(INSERT_MEMORY, values)
    vectors.rebuild(conn, dropped, len(values), hnsw)
    lexical.index_memories(
        conn, [(m.id, terms_text(m.trigger, m.content, m.keywords)) for m in memories]
    )
    for memory in memories:
        if memory.relations:
            write_relations(conn, memory.id, memory.relations, replace=False)
    vectors.ensure_indexes(conn, counts, hnsw)


def write_relations(
    conn: Conn, source: str, relations: Sequence[Relation], *, replace: bool
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
        conn.execute(
            "DELETE FROM relations WHERE source_id = %s AND NOT target_id = ANY(%s::text[])",
            (source, targets),
        )
    if relations:
        now = now_text()
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO relations (source_id, target_id, type, created_at) "
                "VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (source_id, target_id) DO UPDATE SET type = excluded.type",
                [(source, r.id, str(r.type), now) for r in relations],
            )


def decode_rows(conn: Conn, rows: Sequence[tuple[object, ...]]) -> list[Memory]:
    """Memories for ``rows``, with their relations fetched in one query."""
    ids = [str(row[0]) for row in rows]
    relations: dict[str, list[Relation]] = {}
    if ids:
        for source, target, kind in conn.execute(
            "SELECT source_id, target_id, type FROM relations "
            "WHERE source_id = ANY(%s::text[]) ORDER BY source_id, created_at, target_id",
            (ids,),
        ):
            try:
                relation = Relation(id=str(target), type=RelationType(str(kind)))
            except ValueError as exc:
                raise StoreCorruptError(
                    f"memory {source!r} has a relation of unknown type {kind!r}",
                    hint="fix the row with psql or restore a backup",
                ) from exc
            relations.setdefault(str(source), []).append(relation)
    local = local_zone()
    return [decode_memory(row, relations, local) for row in rows]


@dataclass(frozen=True, slots=True)
class Update:
    """One validated ``UPDATE`` of a memory and what must follow it."""

    sql: str
    params: tuple[object, ...]
    relations: Sequence[Relation] | None
    #: New details must be of the memory's own kind.
    details_kind: str | None
    #: The model and dimension of a new embedding, whose index must exist.
    vector_index: tuple[str, int] | None
    #: The trigger, content or keywords change: the memory's terms are indexed again.
    text_changed: bool = False

    def run(
        self, conn: Conn, memory_id: str, hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW
    ) -> bool:
        """Apply it; False when no memory has that id (a new model's index is built as
        ``hnsw`` says)."""
        if self.details_kind is not None:
            row = conn.execute("SELECT kind FROM memories WHERE id = %s", (memory_id,)).fetchone()
            if row is not None and str(row[0]) != self.details_kind:
                raise ValidationError(
                    "details", self.details_kind, f"details of a {row[0]} (the memory's kind)"
                )
        try:
            cursor = conn.execute(
                self.sql,
                (*self.params, now_text(), memory_id),
            )
        except psycopg.IntegrityError as exc:
            raise StoreError(
                f"the update of memory {memory_id!r} was refused ({exc})", hint=_RULES_HINT
            ) from exc
        if cursor.rowcount == 0:
            return False
        if self.text_changed:
            lexical.reindex(conn, [memory_id])
        if self.relations is not None:
            write_relations(conn, memory_id, list(self.relations), replace=True)
        if self.vector_index is not None:
            vectors.ensure_indexes(conn, {self.vector_index}, hnsw)
        return True


#: The fields the lexical index is made of.
_TEXT_FIELDS: Final = frozenset({"trigger", "content", "keywords"})


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
                f"the PostgreSQL store cannot update field {name!r}",
                hint="map the field in PATCH_WHITELIST (adapters/store/postgres/queries.py)",
            )
        assignments.append(column.sql)
        params.extend(column.encode(name, value))
    relations = changes.get(PATCH_RELATIONS)
    if relations is not None and not isinstance(relations, tuple | list):
        raise ValidationError("relations", relations, "a sequence of Relation")
    assignments.append("updated_at = %s")
    embedding = changes.get("embedding")
    details = changes.get("details")
    details_kind: str | None = None
    if isinstance(details, KnowledgeDetails | ProcedureDetails | ProfileDetails):
        from kioku.core.kinds_json import details_kind as kind_of

        details_kind = kind_of(details).value
    return Update(
        sql="UPDATE memories SET " + ", ".join(assignments) + " WHERE id = %s",
        params=tuple(params),
        relations=relations,
        details_kind=details_kind,
        vector_index=(
            (embedding.model, embedding.dim) if isinstance(embedding, Embedding) else None
        ),
        text_changed=bool(_TEXT_FIELDS & changes.keys()),
    )


def delete_memories(conn: Conn, memory_ids: Sequence[str]) -> int:
    """Erase these memories with their terms and originals (their relations both ways
    cascade), and take their text out of the activity events that mention them; how many
    existed."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return 0
    lexical.remove(conn, ids)
    gone = conn.execute(
        "DELETE FROM memories WHERE id = ANY(%s::text[]) RETURNING id", (ids,)
    ).fetchall()
    activity.redact(conn, [str(row[0]) for row in gone])
    return len(gone)
