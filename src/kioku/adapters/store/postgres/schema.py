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
its ``index_name`` is NULL when the dimension is past what pgvector's HNSW can index. The
indexes are on ``memory_vectors``, a copy of each memory's vector that triggers on ``memories``
keep (on insert, and on an update of the embedding's columns): updating any other column of a
memory (scores, recall marks) then writes no new entry into the HNSW graph, which costs
milliseconds a row.

Version 2 adds lexical search (see :mod:`.lexical`): ``memory_terms`` holds each memory's terms
as a ``text[]`` (kioku's own terms, as SQLite's FTS table holds them) under a GIN index, and
``originals`` the first text of a compressed episode with its terms. A statement-level trigger
on both keeps ``term_docs`` (in how many documents of each corpus a term occurs) and
``lexical_totals`` (documents and terms per corpus) in step with every insert, update and
delete, so BM25's counts are lookups rather than scans.

Version 3 adds ``api_keys``, as SQLite's schema 10 has it.

Version 4 adds the activity log (see :mod:`.activity`), as SQLite's schema 8 has it:
``activity`` keeps one JSON line per event with the columns readers filter on, its ``seq`` an
identity that only grows; ``activity_memories`` says which memories each event mentions, so
erasing a memory can take its text out of those events. The columns forgetting reads
(``memories.last_access_utc``, ``low_since_utc``) are in version 1 already.

Version 5 adds what consolidation keeps (see :mod:`.consolidation`), as SQLite's schema 9
has it: ``consolidation_runs`` (unique per kind, period and scope; the report as ``jsonb``),
``memory_versions`` (deleting the memory deletes them), ``resolutions`` and ``midterm`` (one
row per thread of a scope; keywords and turns as ``text[]``). Times are ISO 8601 text with
their offset beside seconds since the epoch (``*_utc``), which is what is compared.

Version 6 adds the lifecycle log (see :mod:`.lifecycle`), as SQLite's schema 5 has it: one
row per transition of the nightly batch (and of consolidation and forgetting), its ``seq`` an
identity that only grows, its details ``jsonb``.

Version 7 adds erasure's append-only audit log and the backups manifest (see :mod:`.erasure`),
as SQLite's schema 6 has them. (Version 8, the row security policies, is made in
:mod:`.migrations`.)

Version 9 gives each row of ``memory_terms`` a ``slot``, a 64-bit hash of its memory id that
PostgreSQL computes (a stored generated column) under a B-tree index: a query whose terms are
in more memories than the postings budget ranks the matches in a window of slots only, an
unbiased sample, as SQLite's index does with its rowids (see :mod:`.lexical`).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "V1_CORE",
    "V2_LEXICAL",
    "V3_KEYS",
    "V4_ACTIVITY",
    "V5_CONSOLIDATION",
    "V6_LIFECYCLE",
    "V7_ERASURE",
    "V9_LEXICAL_SLOTS",
    "V10_ARCHIVE_INDEXES",
    "V11_SESSION_INDEX",
]

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
    """CREATE TABLE memory_vectors (
    memory_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    embedding vector NOT NULL
)""",
    "CREATE FUNCTION kioku_vectors_inserted() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
    "BEGIN\n"
    "    INSERT INTO memory_vectors (memory_id, model, dim, embedding)\n"
    "    SELECT id, embedding_model, embedding_dim, embedding FROM inserted\n"
    "    WHERE embedding IS NOT NULL;\n"
    "    RETURN NULL;\n"
    "END\n"
    "$body$",
    "CREATE TRIGGER memories_vectors_insert AFTER INSERT ON memories "
    "REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT "
    "EXECUTE FUNCTION kioku_vectors_inserted()",
    "CREATE FUNCTION kioku_vector_updated() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
    "BEGIN\n"
    "    IF NEW.embedding IS NULL THEN\n"
    "        DELETE FROM memory_vectors WHERE memory_id = NEW.id;\n"
    "    ELSE\n"
    "        INSERT INTO memory_vectors (memory_id, model, dim, embedding)\n"
    "        VALUES (NEW.id, NEW.embedding_model, NEW.embedding_dim, NEW.embedding)\n"
    "        ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model,\n"
    "            dim = excluded.dim, embedding = excluded.embedding;\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END\n"
    "$body$",
    "CREATE TRIGGER memories_vector_update "
    "AFTER UPDATE OF embedding, embedding_model, embedding_dim ON memories "
    "FOR EACH ROW EXECUTE FUNCTION kioku_vector_updated()",
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

#: The trigger function's body for one transition: ``{changed}`` is a fixed query of
#: ``(memory_id, terms, sign)`` rows over the statement's transition tables.
_COUNT_CHANGES: Final = """
    WITH changed AS ({changed})
    INSERT INTO term_docs (corpus, term, docs)
    SELECT which, d.term, SUM(d.sign) FROM (
        SELECT DISTINCT c.memory_id, t.term, c.sign
        FROM changed AS c CROSS JOIN LATERAL unnest(c.terms) AS t(term)
    ) AS d GROUP BY d.term HAVING SUM(d.sign) <> 0
    ON CONFLICT (corpus, term) DO UPDATE SET docs = term_docs.docs + excluded.docs;
    WITH changed AS ({changed})
    DELETE FROM term_docs WHERE corpus = which AND docs <= 0
        AND term IN (SELECT unnest(c.terms) FROM changed AS c);
    WITH changed AS ({changed})
    INSERT INTO lexical_totals (corpus, docs, tokens)
    SELECT which, SUM(c.sign), SUM(c.sign * cardinality(c.terms)) FROM changed AS c
    HAVING COUNT(*) > 0
    ON CONFLICT (corpus) DO UPDATE SET docs = lexical_totals.docs + excluded.docs,
        tokens = lexical_totals.tokens + excluded.tokens;
"""
_NEW: Final = "SELECT memory_id, terms, 1 AS sign FROM new_rows"
_OLD: Final = "SELECT memory_id, terms, -1 AS sign FROM old_rows"

_COUNT_FUNCTION: Final = (
    "CREATE FUNCTION kioku_count_terms() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
    "DECLARE which TEXT := TG_ARGV[0];\n"
    "BEGIN\n"
    "IF TG_OP = 'INSERT' THEN"
    + _COUNT_CHANGES.format(changed=_NEW)
    + "ELSIF TG_OP = 'DELETE' THEN"
    + _COUNT_CHANGES.format(changed=_OLD)
    + "ELSE"
    + _COUNT_CHANGES.format(changed=f"{_NEW} UNION ALL {_OLD}")
    + "END IF;\nRETURN NULL;\nEND\n$body$"
)


def _count_triggers(table: str) -> tuple[str, ...]:
    """The three statement triggers that count ``table``'s terms (a fixed table name)."""
    return (
        f"CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} "
        "REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION kioku_count_terms('{table}')",
        f"CREATE TRIGGER {table}_count_update AFTER UPDATE ON {table} "
        "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION kioku_count_terms('{table}')",
        f"CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} "
        "REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION kioku_count_terms('{table}')",
    )


V2_LEXICAL: Final = (
    """CREATE TABLE memory_terms (
    memory_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    terms TEXT[] NOT NULL
)""",
    "CREATE INDEX idx_memory_terms ON memory_terms USING gin (terms) WITH (fastupdate = off)",
    """CREATE TABLE originals (
    memory_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    saved_at TEXT NOT NULL,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    terms TEXT[] NOT NULL
)""",
    "CREATE INDEX idx_originals_terms ON originals USING gin (terms) WITH (fastupdate = off)",
    """CREATE TABLE term_docs (
    corpus TEXT NOT NULL,
    term TEXT NOT NULL,
    docs BIGINT NOT NULL,
    PRIMARY KEY (corpus, term)
)""",
    """CREATE TABLE lexical_totals (
    corpus TEXT NOT NULL PRIMARY KEY,
    docs BIGINT NOT NULL,
    tokens BIGINT NOT NULL
)""",
    _COUNT_FUNCTION,
    *_count_triggers("memory_terms"),
    *_count_triggers("originals"),
)

V3_KEYS: Final = (
    """CREATE TABLE api_keys (
    id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    rights TEXT NOT NULL CHECK (rights IN ('read', 'read-write')),
    created_at TEXT COLLATE "C" NOT NULL,
    revoked_at TEXT,
    last_used_at TEXT
)""",
    "CREATE INDEX idx_api_keys_user ON api_keys (user_id)",
)

V4_ACTIVITY: Final = (
    """CREATE TABLE activity (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at_utc DOUBLE PRECISION NOT NULL,
    day TEXT NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    line TEXT NOT NULL
)""",
    "CREATE INDEX idx_activity_scope_time ON activity (user_id, agent_id, at_utc)",
    """CREATE TABLE activity_memories (
    memory_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL REFERENCES activity (seq) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, seq)
)""",
    # The cascade from ``activity`` looks events up by seq.
    "CREATE INDEX idx_activity_memories_seq ON activity_memories (seq)",
)

V5_CONSOLIDATION: Final = (
    """CREATE TABLE consolidation_runs (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind TEXT NOT NULL CHECK (length(kind) > 0),
    period TEXT NOT NULL CHECK (length(period) > 0),
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    done_at TEXT NOT NULL,
    done_utc DOUBLE PRECISION NOT NULL,
    report JSONB NOT NULL DEFAULT '{}',
    UNIQUE (user_id, agent_id, kind, period)
)""",
    "CREATE INDEX idx_consolidation_runs_time ON consolidation_runs (user_id, agent_id, done_utc)",
    """CREATE TABLE memory_versions (
    rid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    saved_utc DOUBLE PRECISION NOT NULL,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    details JSONB
)""",
    "CREATE INDEX idx_memory_versions_memory ON memory_versions (memory_id, version)",
    """CREATE TABLE resolutions (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    at TEXT NOT NULL,
    at_utc DOUBLE PRECISION NOT NULL,
    item TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT ''
)""",
    "CREATE INDEX idx_resolutions_user_time ON resolutions (user_id, at_utc)",
    "CREATE INDEX idx_resolutions_source ON resolutions (source)",
    """CREATE TABLE midterm (
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    session_id TEXT,
    created TEXT NOT NULL,
    created_utc DOUBLE PRECISION NOT NULL,
    hot_until TEXT NOT NULL,
    expires TEXT NOT NULL,
    expires_utc DOUBLE PRECISION NOT NULL,
    summary TEXT NOT NULL,
    keywords TEXT[] NOT NULL DEFAULT '{}',
    turns TEXT[] NOT NULL DEFAULT '{}',
    turn_count INTEGER NOT NULL CHECK (turn_count >= 0),
    PRIMARY KEY (user_id, agent_id, thread_id)
)""",
    "CREATE INDEX idx_midterm_expires ON midterm (expires_utc)",
)

V6_LIFECYCLE: Final = (
    """CREATE TABLE lifecycle_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_at TEXT NOT NULL,
    event_utc DOUBLE PRECISION NOT NULL,
    batch_day TEXT,
    memory_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    event TEXT NOT NULL,
    level_before INTEGER,
    level_after INTEGER,
    score_before DOUBLE PRECISION,
    score_after DOUBLE PRECISION,
    details JSONB NOT NULL DEFAULT '{}'
)""",
    "CREATE INDEX idx_lifecycle_memory ON lifecycle_log (memory_id, seq)",
    "CREATE INDEX idx_lifecycle_time ON lifecycle_log (event_utc)",
    "CREATE INDEX idx_lifecycle_scope ON lifecycle_log (user_id, agent_id, event_utc)",
)

V7_ERASURE: Final = (
    """CREATE TABLE erasure_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    items INTEGER NOT NULL,
    details JSONB NOT NULL DEFAULT '{}'
)""",
    """CREATE FUNCTION erasure_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the erasure audit log is append-only';
END
$$""",
    """CREATE TRIGGER erasure_audit_no_change BEFORE UPDATE OR DELETE ON erasure_audit
FOR EACH ROW EXECUTE FUNCTION erasure_audit_append_only()""",
    """CREATE TRIGGER erasure_audit_no_truncate BEFORE TRUNCATE ON erasure_audit
FOR EACH STATEMENT EXECUTE FUNCTION erasure_audit_append_only()""",
    """CREATE TABLE backups (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path TEXT NOT NULL,
    made_at TEXT NOT NULL,
    memories INTEGER NOT NULL,
    users JSONB NOT NULL DEFAULT '{}'
)""",
    """CREATE TABLE backup_ids (
    backup_seq BIGINT NOT NULL REFERENCES backups (seq) ON DELETE CASCADE,
    id_hash BIGINT NOT NULL,
    PRIMARY KEY (id_hash, backup_seq)
)""",
)

V9_LEXICAL_SLOTS: Final = (
    "ALTER TABLE memory_terms ADD COLUMN slot BIGINT "
    "GENERATED ALWAYS AS (hashtextextended(memory_id, 0)) STORED",
    "CREATE INDEX idx_memory_terms_slot ON memory_terms (slot)",
)

#: The batch counts the archive per scope from a covering partial index and finds revival
#: requests in another, so its reads grow with the active memories (SQLite's schema 12).
V10_ARCHIVE_INDEXES: Final = (
    "CREATE INDEX idx_archive_scope ON memories (user_id, agent_id, kind, protected, created_utc) "
    "WHERE archived_at IS NOT NULL",
    "CREATE INDEX idx_revival_requested ON memories (id) WHERE revival_requested",
)

#: The turns of a session in order, which recall reads around its best matches.
V11_SESSION_INDEX: Final = (
    "CREATE INDEX idx_memories_session ON memories (session_id, created_utc)",
)
