"""Schema version 8: memory kinds, cold storage of original texts and the activity log.

* ``memories.details``: the JSON details of a knowledge item, procedure or profile (see
  :mod:`kioku.core.kinds_json`); NULL for episodes. Kind names become spec 001's
  (``episodic`` → ``episode``, ``semantic`` → ``knowledge``, ``procedural`` →
  ``procedure``) and get an index with the scope, since every listing and search by kind
  filters on both.
* ``originals`` and ``originals_fts``: the original text of an episode once compression has
  rewritten it (spec 003 §8.1 policy B), zlib-compressed, with its own lexical index that
  only deliberate search reads (see :mod:`.originals`). Deleting the memory deletes both.
* ``activity`` and ``activity_memories``: the unified activity log of spec 001, one JSON
  line per event, and which memories each event mentions, so erasing a memory can take its
  text out of every event that quoted it (see :mod:`.activity_rows`).
* ``usage`` accepts the purpose ``profile`` (profile extraction by an LLM).
"""

from __future__ import annotations

from typing import Final

__all__ = ["KINDS_SCHEMA"]

KINDS_SCHEMA: Final = (
    "ALTER TABLE memories ADD COLUMN details TEXT",
    "UPDATE memories SET kind = CASE kind "
    "WHEN 'episodic' THEN 'episode' WHEN 'semantic' THEN 'knowledge' "
    "WHEN 'procedural' THEN 'procedure' ELSE kind END",
    "CREATE INDEX idx_memories_scope_kind ON memories(user_id, agent_id, kind)",
    """CREATE TABLE originals (
    rid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL UNIQUE REFERENCES memories(id) ON DELETE CASCADE,
    saved_at TEXT NOT NULL,
    text_z BLOB NOT NULL
)""",
    "CREATE VIRTUAL TABLE originals_fts USING fts5("
    'memory_id UNINDEXED, terms, tokenize = "unicode61 remove_diacritics 2")',
    """CREATE TABLE activity (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at_utc REAL NOT NULL,
    day TEXT NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    line TEXT NOT NULL
)""",
    "CREATE INDEX idx_activity_scope_time ON activity(user_id, agent_id, at_utc)",
    """CREATE TABLE activity_memories (
    memory_id TEXT NOT NULL,
    seq INTEGER NOT NULL REFERENCES activity(seq) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, seq)
) WITHOUT ROWID""",
    # Token usage gains the purpose of profile extraction by an LLM.
    """CREATE TABLE usage_v8 (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    at_utc REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL
        CHECK (purpose IN ('analyze', 'summarize', 'keywords', 'embed', 'profile')),
    input_tokens INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0)
)""",
    "INSERT INTO usage_v8 (id, at, at_utc, provider, model, purpose, input_tokens, output_tokens) "
    "SELECT id, at, at_utc, provider, model, purpose, input_tokens, output_tokens FROM usage",
    "DROP TABLE usage",
    "ALTER TABLE usage_v8 RENAME TO usage",
    "CREATE INDEX IF NOT EXISTS idx_usage_at_utc ON usage(at_utc)",
)
