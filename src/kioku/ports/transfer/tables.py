"""What a migration copies: every table of the store, column by column, in canonical form.

Both adapters keep the same logical tables (SQLite's schema 10 and PostgreSQL's version 7),
with their own types. :data:`TABLES` lists each one that holds data, in an order that
respects the foreign keys, with the type of each column as both sides agree on it. Tables an
adapter derives from these (the lexical indexes, the vector indexes, the migration logs) are
listed in :data:`DERIVED`, each with why it is rebuilt rather than copied: a table present in
a schema but in neither list fails the tests, so a new table is never skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from kioku.records import Record

__all__ = ["DERIVED", "SKIPPED_STATE", "TABLES", "ColumnType", "TableSpec", "table", "uncovered"]

#: How a column's value is compared and carried:
#: ``text``, ``int``, ``real`` (float64), ``bool`` (0 or 1), ``list`` (a list of strings:
#: JSON text on SQLite, ``text[]`` on PostgreSQL), ``json`` (JSON text on SQLite, ``jsonb``
#: on PostgreSQL) and ``vector`` (float32 values: a BLOB on SQLite, pgvector on PostgreSQL).
ColumnType = Literal["text", "int", "real", "bool", "list", "json", "vector"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TableSpec(Record):
    """One table that a migration copies."""

    name: str
    #: ``(column, type)`` in a fixed order: the canonical row's order.
    columns: tuple[tuple[str, ColumnType], ...]
    #: The columns that identify a row (the primary key).
    key: tuple[str, ...]
    #: A column whose values an identity/sequence hands out (continued after the copy).
    serial: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    @property
    def key_index(self) -> tuple[int, ...]:
        names = self.names
        return tuple(names.index(k) for k in self.key)


def _spec(
    name: str, columns: str, key: str, serial: str | None = None, **types: ColumnType
) -> TableSpec:
    """A spec from a column list; columns are ``text`` unless ``types`` says otherwise."""
    cols = tuple((c, types.get(c, "text")) for c in columns.split())
    return TableSpec(name=name, columns=cols, key=tuple(key.split()), serial=serial)


_MEMORY_COLUMNS: Final = """id created created_utc memory_days recalled_since_last_batch
recall_count emotional_intensity emotional_valence emotional_arousal emotional_tags
decay_coefficient category keywords current_level trigger content embedding embedding_model
embedding_dim retention_score archived_at protected revival_requested revival_requested_at
user_id agent_id kind session_id source_ids source_timestamps updated_at details
last_access_utc low_since_utc"""

TABLES: Final[tuple[TableSpec, ...]] = (
    _spec("state", "key value", "key"),
    _spec(
        "memories",
        _MEMORY_COLUMNS,
        "id",
        created_utc="real",
        memory_days="real",
        recalled_since_last_batch="bool",
        recall_count="int",
        emotional_intensity="int",
        emotional_arousal="int",
        emotional_tags="list",
        decay_coefficient="real",
        keywords="list",
        current_level="int",
        embedding="vector",
        embedding_dim="int",
        retention_score="real",
        protected="bool",
        revival_requested="bool",
        source_ids="list",
        source_timestamps="list",
        details="json",
        last_access_utc="real",
        low_since_utc="real",
    ),
    _spec("relations", "source_id target_id type created_at", "source_id target_id"),
    _spec("originals", "memory_id saved_at trigger content", "memory_id"),
    _spec(
        "memory_versions",
        "rid memory_id version kind saved_at saved_utc trigger content details",
        "rid",
        "rid",
        rid="int",
        version="int",
        saved_utc="real",
        details="json",
    ),
    _spec("tombstones", "digest erased_at", "digest"),
    _spec(
        "usage",
        "id at at_utc provider model purpose input_tokens output_tokens",
        "id",
        "id",
        id="int",
        at_utc="real",
        input_tokens="int",
        output_tokens="int",
    ),
    _spec(
        "api_keys",
        "id name secret_hash user_id agent_id rights created_at revoked_at last_used_at",
        "id",
    ),
    _spec(
        "activity",
        "seq at_utc day type user_id agent_id session_id line",
        "seq",
        "seq",
        seq="int",
        at_utc="real",
    ),
    _spec("activity_memories", "memory_id seq", "memory_id seq", seq="int"),
    _spec(
        "consolidation_runs",
        "seq kind period user_id agent_id done_at done_utc report",
        "seq",
        "seq",
        seq="int",
        done_utc="real",
        report="json",
    ),
    _spec(
        "resolutions",
        "seq user_id agent_id session_id at at_utc item source",
        "seq",
        "seq",
        seq="int",
        at_utc="real",
    ),
    _spec(
        "midterm",
        "user_id agent_id thread_id session_id created created_utc hot_until expires "
        "expires_utc summary keywords turns turn_count",
        "user_id agent_id thread_id",
        created_utc="real",
        expires_utc="real",
        keywords="list",
        turns="list",
        turn_count="int",
    ),
    _spec(
        "lifecycle_log",
        "seq event_at event_utc batch_day memory_id user_id agent_id event level_before "
        "level_after score_before score_after details",
        "seq",
        "seq",
        seq="int",
        event_utc="real",
        level_before="int",
        level_after="int",
        score_before="real",
        score_after="real",
        details="json",
    ),
    _spec(
        "erasure_audit",
        "seq at action subject items details",
        "seq",
        "seq",
        seq="int",
        items="int",
        details="json",
    ),
    _spec(
        "backups",
        "seq path made_at memories users",
        "seq",
        "seq",
        seq="int",
        memories="int",
        users="json",
    ),
    _spec(
        "backup_ids", "backup_seq id_hash", "backup_seq id_hash", backup_seq="int", id_hash="int"
    ),
)

#: Tables each adapter rebuilds from the copied ones instead of copying, and why. A name
#: ending in ``*`` covers the tables whose names start with the rest (FTS5's own tables).
DERIVED: Final[dict[str, dict[str, str]]] = {
    "sqlite": {
        "memories_fts*": "the lexical index, rebuilt from each memory's text as it is written",
        "originals_fts*": "the originals' lexical index, rebuilt from their text",
        "schema_migrations": "the target's own migration log",
        "sqlite_sequence": "SQLite's counters, advanced by the copied ids",
        "sqlite_stat*": "the query planner's statistics",
        "vector_log": "the vector cache's change log, this store's own bookkeeping",
    },
    "postgres": {
        "memory_terms": "the lexical index, rebuilt from each memory's text as it is written",
        "term_docs": "document counts kept by triggers on memory_terms and originals",
        "lexical_totals": "totals kept by the same triggers",
        "vector_indexes": "the HNSW index of each embedding model, made with its first vector",
        "memory_vectors": "the copy of each memory's vector under the HNSW indexes, kept by "
        "triggers on memories",
        "schema_version": "the target's own migration log",
    },
}

#: ``state`` rows that are one store's own bookkeeping: SQLite's vector-cache version and the
#: log its in-process copies of the lexical index follow.
SKIPPED_STATE: Final = frozenset({"vectors_version", "lexical_version"})


def table(name: str) -> TableSpec:
    """The spec of the table ``name``."""
    for spec in TABLES:
        if spec.name == name:
            return spec
    raise KeyError(name)


def uncovered(backend: str, names: set[str]) -> set[str]:
    """The tables of ``names`` that are neither copied nor derived on ``backend``."""
    copied = {spec.name for spec in TABLES}
    derived = DERIVED[backend]
    exact = {d for d in derived if not d.endswith("*")}
    prefixes = tuple(d[:-1] for d in derived if d.endswith("*"))
    return {n for n in names if n not in copied and n not in exact and not n.startswith(prefixes)}
