"""The PostgreSQL schema, version by version.

Version 1 mirrors the columns of the SQLite store's ``memories`` table (schema 10 there; see
:mod:`kioku.adapters.store.sqlite.codec`), with PostgreSQL's own types where they say more:
booleans for flags, ``text[]`` for lists, ``jsonb`` for a kind's details and a pgvector
``vector`` for embeddings. Times are kept as SQLite keeps them: ISO 8601 text with the offset
they were given (``created``, ``archived_at``...), and seconds since the epoch where the store
compares instants (``created_utc``, ``last_access_utc``, ``low_since_utc``). Ids sort
bytewise (``COLLATE "C"``), as SQLite's BINARY collation does, so every order is the same on
both stores.

``vector_indexes`` lists the HNSW index of each embedding model and dimension (see
:mod:`.vectors`): an index is made when the first vector of a model is written, over the
model's rows only (a partial index), since one index cannot hold vectors of several sizes;
its ``index_name`` is NULL when the dimension is past what pgvector's HNSW can index.
"""

from __future__ import annotations

from typing import Final

__all__ = ["V1_CORE"]

V1_CORE: Final = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    """CREATE TABLE memories (
    id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    created TEXT NOT NULL,
    created_utc DOUBLE PRECISION NOT NULL,
    memory_days DOUBLE PRECISION NOT NULL DEFAULT 0.0,
    recalled_since_last_batch BOOLEAN NOT NULL DEFAULT FALSE,
    recall_count BIGINT NOT NULL DEFAULT 0,
    emotional_intensity INTEGER NOT NULL
        CONSTRAINT intensity_range CHECK (emotional_intensity BETWEEN 0 AND 100),
    emotional_valence TEXT NOT NULL
        CONSTRAINT valence_value CHECK (emotional_valence IN ('positive', 'negative', 'neutral')),
    emotional_arousal INTEGER NOT NULL
        CONSTRAINT arousal_range CHECK (emotional_arousal BETWEEN 0 AND 100),
    emotional_tags TEXT[] NOT NULL DEFAULT '{}',
    decay_coefficient DOUBLE PRECISION NOT NULL,
    category TEXT NOT NULL,
    keywords TEXT[] NOT NULL DEFAULT '{}',
    current_level INTEGER NOT NULL DEFAULT 1
        CONSTRAINT level_range CHECK (current_level IN (1, 2, 3, 4)),
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding vector,
    embedding_model TEXT,
    embedding_dim INTEGER,
    retention_score DOUBLE PRECISION NOT NULL DEFAULT 0.0,
    archived_at TEXT,
    protected BOOLEAN NOT NULL DEFAULT FALSE,
    revival_requested BOOLEAN NOT NULL DEFAULT FALSE,
    revival_requested_at TEXT,
    user_id TEXT NOT NULL DEFAULT 'default',
    agent_id TEXT NOT NULL DEFAULT 'default',
    kind TEXT NOT NULL DEFAULT 'episode',
    session_id TEXT,
    source_ids TEXT[] NOT NULL DEFAULT '{}',
    source_timestamps TEXT[] NOT NULL DEFAULT '{}',
    updated_at TEXT,
    details JSONB,
    last_access_utc DOUBLE PRECISION,
    low_since_utc DOUBLE PRECISION,
    CONSTRAINT archived_iff_level4 CHECK ((current_level = 4) = (archived_at IS NOT NULL)),
    CONSTRAINT embedding_complete CHECK (
        (embedding IS NULL) = (embedding_model IS NULL)
        AND (embedding IS NULL) = (embedding_dim IS NULL)
    ),
    CONSTRAINT embedding_dim_matches CHECK (
        embedding IS NULL OR vector_dims(embedding) = embedding_dim
    )
)""",
    "CREATE INDEX idx_memories_scope ON memories (user_id, agent_id, archived_at)",
    "CREATE INDEX idx_memories_scope_kind ON memories (user_id, agent_id, kind)",
    "CREATE INDEX idx_memories_created_utc ON memories (created_utc, id)",
    "CREATE INDEX idx_memories_retention ON memories (retention_score, id)",
    "CREATE INDEX idx_memories_model ON memories (embedding_model, embedding_dim) "
    "WHERE embedding_model IS NOT NULL",
    """CREATE TABLE relations (
    source_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id),
    CHECK (source_id <> target_id)
)""",
    "CREATE INDEX idx_relations_target ON relations (target_id)",
    """CREATE TABLE state (
    key TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE TABLE tombstones (
    digest TEXT NOT NULL PRIMARY KEY,
    erased_at TEXT NOT NULL
)""",
    """CREATE TABLE vector_indexes (
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    index_name TEXT UNIQUE,
    PRIMARY KEY (model, dim)
)""",
    """CREATE TABLE usage (
    id BIGSERIAL PRIMARY KEY,
    at TEXT NOT NULL,
    at_utc DOUBLE PRECISION NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL
        CHECK (purpose IN ('analyze', 'summarize', 'keywords', 'embed', 'profile', 'consolidate')),
    input_tokens BIGINT NOT NULL CHECK (input_tokens >= 0),
    output_tokens BIGINT NOT NULL CHECK (output_tokens >= 0)
)""",
    "CREATE INDEX idx_usage_at_utc ON usage (at_utc)",
)
