"""Migration 2 (``scope_provenance_relations``): the steps and the schema they build.

The ``memories`` table is rebuilt the SQLite way (new table, copy, drop, rename, indexes)
to add scope, provenance, ``created_utc``, embedding metadata and CHECK constraints, and
the JSON ``relations`` column becomes a real ``relations`` table with foreign keys.

Legacy rows are repaired where the intent is clear (missing flags, an archived row whose
level is not 4, a level-4 row without ``archived_at``); rows that break a rule with no
safe repair stop the migration with a message naming them, leaving the file unchanged.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, tzinfo
from typing import Final

from kioku.core.model import RelationType
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import StoreError
from kioku.logs import LazyLogger

__all__ = [
    "COPY_MEMORIES",
    "CREATE_MEMORIES_NEW",
    "CREATE_RELATIONS",
    "MEMORY_INDEXES",
    "SWAP_MEMORIES",
    "add_missing_legacy_columns",
    "fix_naive_created_utc",
    "move_legacy_relations",
    "refuse_unrepairable_rows",
]

_log = LazyLogger(__name__)

_REQUIRED_LEGACY: Final = (
    "id",
    "created",
    "emotional_intensity",
    "emotional_valence",
    "emotional_arousal",
    "decay_coefficient",
    "category",
    "trigger",
    "content",
)
# Columns earlier revisions of the spec's table may lack, with the spec's declarations.
_OPTIONAL_LEGACY: Final = {
    "memory_days": "ALTER TABLE memories ADD COLUMN memory_days REAL DEFAULT 0.0",
    "recalled_since_last_batch": (
        "ALTER TABLE memories ADD COLUMN recalled_since_last_batch INTEGER DEFAULT 0"
    ),
    "recall_count": "ALTER TABLE memories ADD COLUMN recall_count INTEGER DEFAULT 0",
    "emotional_tags": "ALTER TABLE memories ADD COLUMN emotional_tags TEXT",
    "keywords": "ALTER TABLE memories ADD COLUMN keywords TEXT",
    "current_level": "ALTER TABLE memories ADD COLUMN current_level INTEGER DEFAULT 1",
    "embedding": "ALTER TABLE memories ADD COLUMN embedding BLOB",
    "relations": "ALTER TABLE memories ADD COLUMN relations TEXT",
    "retention_score": "ALTER TABLE memories ADD COLUMN retention_score REAL",
    "archived_at": "ALTER TABLE memories ADD COLUMN archived_at TEXT",
    "protected": "ALTER TABLE memories ADD COLUMN protected INTEGER DEFAULT 0",
    "revival_requested": "ALTER TABLE memories ADD COLUMN revival_requested INTEGER DEFAULT 0",
    "revival_requested_at": "ALTER TABLE memories ADD COLUMN revival_requested_at TEXT",
}

CREATE_MEMORIES_NEW: Final = """CREATE TABLE memories_new (
    id TEXT NOT NULL PRIMARY KEY,
    created TEXT NOT NULL,
    created_utc REAL NOT NULL,
    memory_days REAL NOT NULL DEFAULT 0.0,
    recalled_since_last_batch INTEGER NOT NULL DEFAULT 0
        CONSTRAINT recalled_flag CHECK (recalled_since_last_batch IN (0, 1)),
    recall_count INTEGER NOT NULL DEFAULT 0,
    emotional_intensity INTEGER NOT NULL
        CONSTRAINT intensity_range CHECK (emotional_intensity BETWEEN 0 AND 100),
    emotional_valence TEXT NOT NULL
        CONSTRAINT valence_value CHECK (emotional_valence IN ('positive', 'negative', 'neutral')),
    emotional_arousal INTEGER NOT NULL
        CONSTRAINT arousal_range CHECK (emotional_arousal BETWEEN 0 AND 100),
    emotional_tags TEXT NOT NULL DEFAULT '[]',
    decay_coefficient REAL NOT NULL,
    category TEXT NOT NULL,
    keywords TEXT NOT NULL DEFAULT '[]',
    current_level INTEGER NOT NULL DEFAULT 1
        CONSTRAINT level_range CHECK (current_level IN (1, 2, 3, 4)),
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB,
    embedding_model TEXT,
    embedding_dim INTEGER,
    retention_score REAL NOT NULL DEFAULT 0.0,
    archived_at TEXT,
    protected INTEGER NOT NULL DEFAULT 0
        CONSTRAINT protected_flag CHECK (protected IN (0, 1)),
    revival_requested INTEGER NOT NULL DEFAULT 0
        CONSTRAINT revival_flag CHECK (revival_requested IN (0, 1)),
    revival_requested_at TEXT,
    user_id TEXT NOT NULL DEFAULT 'default',
    agent_id TEXT NOT NULL DEFAULT 'default',
    kind TEXT NOT NULL DEFAULT 'episodic',
    session_id TEXT,
    source_ids TEXT NOT NULL DEFAULT '[]',
    source_timestamps TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT,
    CONSTRAINT archived_iff_level4 CHECK ((current_level = 4) = (archived_at IS NOT NULL)),
    CONSTRAINT embedding_complete CHECK (
        (embedding IS NULL) = (embedding_model IS NULL)
        AND (embedding IS NULL) = (embedding_dim IS NULL)
    )
)"""

# Every value is copied; only missing flags/levels get defaults and the level/archive pair
# is made consistent (archived_at set => level 4; level 4 alone => archived at creation).
COPY_MEMORIES: Final = """INSERT INTO memories_new (
    id, created, created_utc, memory_days, recalled_since_last_batch, recall_count,
    emotional_intensity, emotional_valence, emotional_arousal, emotional_tags,
    decay_coefficient, category, keywords, current_level, trigger, content,
    embedding, embedding_model, embedding_dim, retention_score, archived_at,
    protected, revival_requested, revival_requested_at
)
SELECT
    id, created,
    round((julianday(created) - 2440587.5) * 86400.0, 3),
    COALESCE(memory_days, 0.0),
    CASE WHEN COALESCE(recalled_since_last_batch, 0) <> 0 THEN 1 ELSE 0 END,
    COALESCE(recall_count, 0),
    emotional_intensity, emotional_valence, emotional_arousal,
    COALESCE(NULLIF(TRIM(emotional_tags), ''), '[]'),
    decay_coefficient, category,
    COALESCE(NULLIF(TRIM(keywords), ''), '[]'),
    CASE WHEN NULLIF(TRIM(archived_at), '') IS NOT NULL THEN 4
         ELSE COALESCE(current_level, 1) END,
    trigger, content,
    embedding,
    CASE WHEN embedding IS NULL THEN NULL ELSE 'legacy:unknown' END,
    CASE WHEN embedding IS NULL THEN NULL ELSE length(embedding) / 4 END,
    COALESCE(retention_score, 0.0),
    CASE WHEN NULLIF(TRIM(archived_at), '') IS NOT NULL THEN archived_at
         WHEN current_level = 4 THEN created
         ELSE NULL END,
    CASE WHEN COALESCE(protected, 0) <> 0 THEN 1 ELSE 0 END,
    CASE WHEN COALESCE(revival_requested, 0) <> 0 THEN 1 ELSE 0 END,
    NULLIF(TRIM(revival_requested_at), '')
FROM memories"""

CREATE_RELATIONS: Final = (
    """CREATE TABLE relations (
    source_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id),
    CHECK (source_id <> target_id)
)""",
    "CREATE INDEX idx_relations_target ON relations(target_id)",
)

SWAP_MEMORIES: Final = (
    "DROP TABLE memories",
    "ALTER TABLE memories_new RENAME TO memories",
)

MEMORY_INDEXES: Final = (
    "CREATE INDEX idx_retention_score ON memories(retention_score)",
    "CREATE INDEX idx_current_level ON memories(current_level)",
    "CREATE INDEX idx_archived_at ON memories(archived_at)",
    "CREATE INDEX idx_created ON memories(created)",
    "CREATE INDEX idx_memories_scope ON memories(user_id, agent_id, archived_at)",
    "CREATE INDEX idx_memories_created_utc ON memories(created_utc, id)",
    "CREATE INDEX idx_memories_protected ON memories(protected)",
    "CREATE INDEX idx_memories_category ON memories(category)",
)

# Rules a legacy row must meet because no repair would be safe: (description, condition).
_UNREPAIRABLE: Final = (
    ("has no id", "id IS NULL"),
    (
        "emotional_intensity is not an integer from 0 to 100",
        "emotional_intensity IS NULL OR emotional_intensity NOT BETWEEN 0 AND 100",
    ),
    (
        "emotional_arousal is not an integer from 0 to 100",
        "emotional_arousal IS NULL OR emotional_arousal NOT BETWEEN 0 AND 100",
    ),
    (
        "emotional_valence is not positive, negative or neutral",
        "emotional_valence IS NULL OR emotional_valence NOT IN ('positive', 'negative', 'neutral')",
    ),
    (
        "current_level is not 1, 2, 3 or 4",
        "NULLIF(TRIM(archived_at), '') IS NULL AND COALESCE(current_level, 1) NOT IN (1, 2, 3, 4)",
    ),
    ("created is not an ISO 8601 timestamp", "julianday(created) IS NULL"),
)
_SHOWN: Final = 5
_BATCH: Final = 1000


def _local() -> tzinfo:
    zone = datetime.now().astimezone().tzinfo
    return zone if zone is not None else UTC


def add_missing_legacy_columns(conn: sqlite3.Connection) -> None:
    """Give a table from an older spec revision the optional columns it lacks."""
    present = {str(row[1]) for row in conn.execute("PRAGMA table_info(memories)")}
    missing = [name for name in _REQUIRED_LEGACY if name not in present]
    if missing:
        raise StoreError(
            f"the memories table lacks required columns {', '.join(missing)}: "
            "it was not made by kioku or the spec's MemoryStore",
            hint="open a kioku database, or move this file aside to start with an empty store",
        )
    for name, statement in _OPTIONAL_LEGACY.items():
        if name not in present:
            conn.execute(statement)


def _json_text_list(text: object) -> bool:
    if text is None or (isinstance(text, str) and not text.strip()):
        return True
    try:
        value = json.loads(str(text))
    except ValueError:
        return False
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _timestamp_ok(text: object, local: tzinfo) -> bool:
    if text is None or (isinstance(text, str) and not text.strip()):
        return True
    try:
        parse_ts(str(text), local)
    except ValueError:
        return False
    return True


def refuse_unrepairable_rows(conn: sqlite3.Connection) -> None:
    """Stop the migration, naming the rows, when some legacy row cannot be carried over."""
    problems: list[str] = []
    for description, condition in _UNREPAIRABLE:
        rows = conn.execute(f"SELECT id FROM memories WHERE {condition} LIMIT {_SHOWN}")
        problems.extend(f"{row[0]!s}: {description}" for row in rows)
    local = _local()
    cursor = conn.execute(
        "SELECT id, created, archived_at, revival_requested_at, emotional_tags, keywords "
        "FROM memories"
    )
    while len(problems) < _SHOWN and (batch := cursor.fetchmany(_BATCH)):
        for row in batch:
            for name, index in (("created", 1), ("archived_at", 2), ("revival_requested_at", 3)):
                if not _timestamp_ok(row[index], local):
                    problems.append(f"{row[0]!s}: {name} {row[index]!r} is not ISO 8601")
            for name, index in (("emotional_tags", 4), ("keywords", 5)):
                if not _json_text_list(row[index]):
                    problems.append(f"{row[0]!s}: {name} is not a JSON array of strings")
    cursor.close()
    if problems:
        raise StoreError(
            "cannot upgrade the memories table: some rows break rules that cannot be "
            f"repaired automatically ({'; '.join(problems[:_SHOWN])})",
            hint=(
                "the database was left unchanged at version 1; fix or delete those rows "
                "(e.g. with the sqlite3 shell), or restore a backup, then open it again"
            ),
        )


def fix_naive_created_utc(conn: sqlite3.Connection) -> None:
    """SQLite reads a timestamp without an offset as UTC; kioku reads it as local time."""
    local = _local()
    updates: list[tuple[float, str]] = []
    for row in conn.execute("SELECT id, created, created_utc FROM memories_new"):
        epoch = round(parse_ts(str(row[1]), local).timestamp(), 3)
        if abs(epoch - float(row[2])) > 0.0005:
            updates.append((epoch, str(row[0])))
    conn.executemany("UPDATE memories_new SET created_utc = ? WHERE id = ?", updates)


def _relation_time(created: object, local: tzinfo) -> str:
    try:
        moment = parse_ts(str(created), local)
    except ValueError:
        moment = datetime.now(UTC)
    return format_ts(moment.astimezone(UTC))


def _legacy_links(source: str, text: str) -> list[tuple[str, str]]:
    """``(target, type)`` pairs of a legacy JSON relations value; malformed ones dropped."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    if not isinstance(value, list):
        return []
    known = {t.value for t in RelationType}
    links: list[tuple[str, str]] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        target, kind = item.get("id"), item.get("type")
        if isinstance(target, str) and isinstance(kind, str) and kind in known and target != source:
            links.append((target, kind))
    return links


def move_legacy_relations(conn: sqlite3.Connection) -> None:
    """Copy JSON relations into the table, skipping dangling targets, duplicates, self-links."""
    local = _local()
    insert = (
        "INSERT OR IGNORE INTO relations (source_id, target_id, type, created_at) "
        "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories_new WHERE id = ?)"
    )
    cursor = conn.execute(
        "SELECT id, created, relations FROM memories "
        "WHERE relations IS NOT NULL AND TRIM(relations) NOT IN ('', '[]') ORDER BY rowid"
    )
    seen = moved = 0
    while batch := cursor.fetchmany(_BATCH):
        params: list[tuple[str, str, str, str, str]] = []
        for row in batch:
            source = str(row[0])
            when = _relation_time(row[1], local)
            for target, kind in _legacy_links(source, str(row[2])):
                params.append((source, target, kind, when, target))
        seen += len(params)
        before = conn.total_changes
        conn.executemany(insert, params)
        moved += conn.total_changes - before
    cursor.close()
    if seen != moved:
        _log.info("migration 2: dropped %d dangling or duplicate relations", seen - moved)
