"""Schema migrations of the SQLite store, on real files: from the spec's schema to the latest."""

from __future__ import annotations

import json
import sqlite3
import struct
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kioku.adapters.store.sqlite import fts_rows, migrations, open_sqlite_store, search
from kioku.adapters.store.sqlite.codec import MEMORY_COLUMNS, encode_memory
from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, migrate
from kioku.adapters.text.lexical import index_terms
from kioku.core.model import Kind, Memory, Relation, RelationType, Valence
from kioku.errors import StoreError
from kioku.ports.store import MemoryFilter, Order

JST = timezone(timedelta(hours=9))

# The spec's reference MemoryStore (spec 000, MemoryStore クラス), verbatim.
SPEC_SCRIPT = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    memory_days REAL DEFAULT 0.0,
    recalled_since_last_batch INTEGER DEFAULT 0,
    recall_count INTEGER DEFAULT 0,
    emotional_intensity INTEGER NOT NULL,
    emotional_valence TEXT NOT NULL,
    emotional_arousal INTEGER NOT NULL,
    emotional_tags TEXT,
    decay_coefficient REAL NOT NULL,
    category TEXT NOT NULL,
    keywords TEXT,
    current_level INTEGER DEFAULT 1,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB,
    relations TEXT,
    retention_score REAL,
    archived_at TEXT,
    protected INTEGER DEFAULT 0,
    revival_requested INTEGER DEFAULT 0,
    revival_requested_at TEXT
);

CREATE INDEX IF NOT EXISTS idx_retention_score ON memories(retention_score);
CREATE INDEX IF NOT EXISTS idx_current_level ON memories(current_level);
CREATE INDEX IF NOT EXISTS idx_archived_at ON memories(archived_at);
CREATE INDEX IF NOT EXISTS idx_created ON memories(created);

CREATE TABLE IF NOT EXISTS state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

# The spec's add_memory statement, plus the revival columns its update_memory writes.
SPEC_INSERT = """
INSERT INTO memories (
    id, created, memory_days, recalled_since_last_batch, recall_count,
    emotional_intensity, emotional_valence, emotional_arousal, emotional_tags,
    decay_coefficient, category, keywords, current_level, trigger, content,
    embedding, relations, retention_score, archived_at, protected,
    revival_requested, revival_requested_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

A, B, C, D = "mem_20260120_001", "mem_20260120_002", "mem_20260120_003", "mem_20260120_004"
VECTOR = (0.123, -0.456, 0.5)

#: Rows as stores before version 8 took them (no ``details`` column).
INSERT_V7 = (
    "INSERT INTO memories ("
    + ", ".join(MEMORY_COLUMNS[:-1])
    + ") VALUES ("
    + ", ".join("?" for _ in MEMORY_COLUMNS[:-1])
    + ")"
)


def _row(memory_id: str, created: str, **kw: object) -> tuple[object, ...]:
    values: dict[str, object] = {
        "memory_days": 0.0,
        "recalled": 0,
        "recall_count": 0,
        "intensity": 45,
        "valence": "positive",
        "arousal": 30,
        "tags": json.dumps([], ensure_ascii=False),
        "decay": 0.92,
        "category": "work",
        "keywords": json.dumps([], ensure_ascii=False),
        "level": 1,
        "trigger": f"{memory_id}のきっかけ",
        "content": f"{memory_id}の内容",
        "embedding": None,
        "relations": json.dumps([], ensure_ascii=False),
        "score": None,
        "archived_at": None,
        "protected": 0,
        "revival": 0,
        "revival_at": None,
    }
    values.update(kw)
    return (memory_id, created, *values.values())


def _legacy_rows() -> list[tuple[object, ...]]:
    relations_of_a = [
        {"id": B, "type": "continues"},
        {"id": "mem_20250101_999", "type": "references"},  # dangling
        {"id": A, "type": "same_topic"},  # self-link
        {"id": B, "type": "references"},  # duplicate target
        {"id": C, "type": "derived_from"},
    ]
    return [
        _row(
            A,
            "2026-01-20T14:30:00+09:00",
            memory_days=2.5,
            recalled=1,
            recall_count=3,
            intensity=80,
            valence="negative",
            arousal=65,
            tags=json.dumps(["anxiety", "determination"], ensure_ascii=False),
            decay=0.987,
            category="decision",
            keywords=json.dumps(["SQLite", "移行"], ensure_ascii=False),
            embedding=struct.pack("<3f", *VECTOR),
            relations=json.dumps(relations_of_a, ensure_ascii=False),
            score=42.5,
            protected=1,
        ),
        # Level 4 without archived_at; created with a Z offset (14:00 JST).
        _row(B, "2026-01-20T05:00:00Z", level=4, score=3.0),
        # Archived at level 2: the archive time wins. No tags/keywords/relations at all.
        _row(
            C,
            "2026-01-20T14:45:00+09:00",
            level=2,
            archived_at="2026-02-01T03:00:00+09:00",
            revival=1,
            revival_at="2026-02-03T10:00:00+09:00",
            tags=None,
            keywords="",
            relations=None,
        ),
        # No offset: local time (the test runs in Asia/Tokyo), so 14:10 JST.
        _row(D, "2026-01-20T14:10:00", score=10.0),
    ]


@pytest.fixture
def tokyo_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in Asia/Tokyo, so naive legacy timestamps mean JST."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _version_1_db(path: Path, rows: list[tuple[object, ...]]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(conn, target=1) == [1]
        conn.execute("BEGIN")
        conn.executemany(SPEC_INSERT, rows)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def test_upgrade_from_version_1_keeps_every_row_and_field(tmp_path: Path, tokyo_time: None) -> None:
    path = tmp_path / "kioku" / "memories.db"
    _version_1_db(path, _legacy_rows())
    assert _raw(path, "PRAGMA user_version") == [(1,)]

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION
        a, b, c, d = (store.get(i) for i in (A, B, C, D))
        assert a is not None
        assert b is not None
        assert c is not None
        assert d is not None

        assert a.created == datetime(2026, 1, 20, 14, 30, tzinfo=JST)
        assert a.created.utcoffset() == timedelta(hours=9)
        assert (a.memory_days, a.recall_count, a.recalled_since_last_batch) == (2.5, 3, True)
        assert (a.emotional_intensity, a.emotional_valence, a.emotional_arousal) == (
            80,
            Valence.NEGATIVE,
            65,
        )
        assert a.emotional_tags == ("anxiety", "determination")
        assert a.keywords == ("SQLite", "移行")
        assert (a.decay_coefficient, a.category, a.retention_score) == (0.987, "decision", 42.5)
        assert (a.trigger, a.content) == (f"{A}のきっかけ", f"{A}の内容")
        assert a.protected is True
        assert a.current_level == 1
        assert a.archived_at is None
        assert a.embedding is not None
        assert a.embedding.model == "legacy:unknown"
        assert a.embedding.vector == pytest.approx(VECTOR, rel=1e-6)
        # Relations moved to the table minus the dangling, self and duplicate ones.
        assert sorted(a.relations, key=lambda r: r.id) == [
            Relation(B, RelationType.CONTINUES),
            Relation(C, RelationType.DERIVED_FROM),
        ]
        assert store.referencing(B) == [A]
        # Scope and provenance get their defaults.
        assert (a.user_id, a.agent_id, a.kind, a.session_id) == (
            "default",
            "default",
            Kind.EPISODIC,
            None,
        )
        assert (a.source_ids, a.source_timestamps) == ((), ())

        assert b.created == datetime(2026, 1, 20, 14, 0, tzinfo=JST)
        assert b.current_level == 4
        assert b.archived_at == b.created
        assert b.retention_score == 3.0

        assert c.current_level == 4
        assert c.archived_at == datetime(2026, 2, 1, 3, 0, tzinfo=JST)
        assert c.revival_requested is True
        assert c.revival_requested_at == datetime(2026, 2, 3, 10, 0, tzinfo=JST)
        assert (c.emotional_tags, c.keywords, c.relations, c.retention_score) == ((), (), (), 0.0)

        assert d.created == datetime(2026, 1, 20, 14, 10, tzinfo=JST)

        ordered = [m.id for m in store.list(MemoryFilter(order=Order.CREATED_ASC))]
        assert ordered == [B, D, A, C]
        assert store.count(MemoryFilter(archived=True)) == 2
        report = store.check_integrity()
        # The legacy file was made with the default umask: only its modes are reported.
        assert report.problems
        assert all("chmod 600" in problem for problem in report.problems)
        assert report.details["integrity_check"] == ["ok"]
        assert report.details["foreign_key_violations"] == 0

    columns = {row[1] for row in _raw(path, "PRAGMA table_info(memories)")}
    assert "relations" not in columns
    assert {"user_id", "agent_id", "kind", "created_utc", "embedding_model"} <= columns
    assert [r[:2] for r in _raw(path, "SELECT version, name FROM schema_migrations")] == [
        (1, "spec_000_initial"),
        (2, "scope_provenance_relations"),
        (3, "token_usage"),
        (4, "lexical_index"),
        (5, "lifecycle_log"),
        (6, "erasure"),
        (7, "lexical_proper_nouns"),
        (8, "memory_kinds"),
        (9, "consolidation"),
        (10, "api_keys"),
        (11, "vector_log"),
        (12, "batch_archive_indexes"),
        (13, "session_index"),
        (14, "kind_index"),
    ]
    indexes = {row[0] for row in _raw(path, "SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"idx_retention_score", "idx_current_level", "idx_archived_at", "idx_created"} <= indexes
    assert {"idx_memories_scope", "idx_memories_created_utc", "idx_relations_target"} <= indexes


def test_a_file_made_by_the_spec_memory_store_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SPEC_SCRIPT)
    conn.execute(SPEC_INSERT, _row(A, "2026-01-20T14:30:00+09:00", score=12.0))
    conn.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", ("last_run", "x"))
    conn.commit()
    conn.close()
    assert _raw(path, "PRAGMA user_version") == [(0,)]

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION
        got = store.get(A)
        assert got is not None
        assert got.retention_score == 12.0
        assert store.get_state("last_run") == "x"
    assert [r[0] for r in _raw(path, "SELECT version FROM schema_migrations")] == list(
        range(1, LATEST_VERSION + 1)
    )


def test_a_table_from_an_older_spec_revision_gains_the_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        SPEC_SCRIPT.replace("    revival_requested INTEGER DEFAULT 0,\n", "").replace(
            ",\n    revival_requested_at TEXT", ""
        )
    )
    conn.execute(
        "INSERT INTO memories (id, created, emotional_intensity, emotional_valence, "
        "emotional_arousal, decay_coefficient, category, trigger, content) "
        "VALUES (?, ?, 10, 'neutral', 10, 0.9, 'casual', 't', 'c')",
        (A, "2026-01-20T14:30:00+09:00"),
    )
    conn.commit()
    conn.close()
    with open_sqlite_store(path) as store:
        got = store.get(A)
        assert got is not None
        assert (got.revival_requested, got.revival_requested_at, got.current_level) == (
            False,
            None,
            1,
        )


def test_opening_twice_applies_nothing_the_second_time(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    open_sqlite_store(path).close()
    first = _raw(path, "SELECT version, name, applied_at FROM schema_migrations")
    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION
    assert _raw(path, "SELECT version, name, applied_at FROM schema_migrations") == first
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(conn) == []
        assert migrate(conn, target=0) == []
        with pytest.raises(ValueError, match="target schema version"):
            migrate(conn, target=LATEST_VERSION + 1)
    finally:
        conn.close()


def test_an_unrepairable_row_stops_the_upgrade_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    rows = [*_legacy_rows(), _row("mem_bad", "2026-01-21T09:00:00+09:00", intensity=150)]
    _version_1_db(path, rows)
    before = _raw(path, "SELECT * FROM memories ORDER BY id")

    with pytest.raises(StoreError) as raised:
        open_sqlite_store(path)
    assert "mem_bad" in raised.value.message
    assert "emotional_intensity" in raised.value.message
    assert raised.value.hint is not None
    assert "unchanged at version 1" in raised.value.hint

    assert _raw(path, "PRAGMA user_version") == [(1,)]
    assert _raw(path, "SELECT * FROM memories ORDER BY id") == before
    tables = {r[0] for r in _raw(path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert "memories_new" not in tables
    assert "relations" not in tables

    fix = sqlite3.connect(path)
    fix.execute("UPDATE memories SET emotional_intensity = 100 WHERE id = 'mem_bad'")
    fix.commit()
    fix.close()
    with open_sqlite_store(path) as store:
        assert store.count(MemoryFilter()) == 5


def test_a_step_failing_midway_rolls_the_whole_migration_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memories.db"
    _version_1_db(path, _legacy_rows())
    before = _raw(path, "SELECT * FROM memories ORDER BY id")

    def explode(conn: sqlite3.Connection) -> None:
        assert _raw_count(conn, "relations") > 0  # the earlier steps did run
        raise RuntimeError("disk gremlin")

    first, second, *_later = migrations.MIGRATIONS
    # Fail after the tables were swapped and indexed: the worst moment to stop.
    broken = replace(second, steps=(*second.steps, explode))
    monkeypatch.setattr(migrations, "MIGRATIONS", (first, broken))

    with pytest.raises(StoreError, match="disk gremlin"):
        open_sqlite_store(path)
    assert _raw(path, "PRAGMA user_version") == [(1,)]
    assert _raw(path, "SELECT * FROM memories ORDER BY id") == before
    assert [r[0] for r in _raw(path, "SELECT version FROM schema_migrations")] == [1]

    monkeypatch.undo()
    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION
        assert store.count(MemoryFilter()) == 4


def _raw_count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    open_sqlite_store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="newer") as raised:
        open_sqlite_store(path)
    assert raised.value.hint is not None
    assert "upgrade kioku" in raised.value.hint


def test_foreign_keys_are_on_after_migrating(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    _version_1_db(path, _legacy_rows())
    with open_sqlite_store(path) as store:
        # Deleting a target cascades: proof the foreign keys are enforced again.
        assert store.delete(B)
        a = store.get(A)
        assert a is not None
        assert [r.id for r in a.relations] == [C]


def _version_3_db(path: Path, memories: list[Memory]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(conn, target=3) == [1, 2, 3]
        conn.execute("BEGIN")
        conn.executemany(INSERT_V7, [encode_memory(m)[:-1] for m in memories])
        conn.execute("COMMIT")
    finally:
        conn.close()


def _memory(n: int, trigger: str, content: str, keywords: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id=f"mem_20260120_{n:03d}",
        created=datetime(2026, 1, 20, 14, n % 60, tzinfo=JST),
        trigger=trigger,
        content=content,
        emotional_intensity=40,
        emotional_valence=Valence.NEUTRAL,
        emotional_arousal=30,
        category="casual",
        decay_coefficient=0.92,
        keywords=keywords,
    )


def test_upgrade_from_version_3_fills_the_lexical_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kioku" / "memories.db"
    monkeypatch.setattr(fts_rows, "BACKFILL_BATCH", 7)  # several batches
    memories = [
        _memory(1, "夕食", "昨日お寿司を食べた"),
        _memory(2, "weekend", "painting the fence", keywords=("diy",)),
        *(_memory(n, f"note {n}", f"filler text number {n}") for n in range(3, 40)),
    ]
    _version_3_db(path, memories)
    assert _raw(path, "PRAGMA user_version") == [(3,)]

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION

        def find(query: str) -> list[str]:
            return [i for i, _ in store.search_lexical(index_terms(query), MemoryFilter(), 50)]

        assert find("寿司") == [memories[0].id]
        assert find("paint") == [memories[1].id]
        assert find("diy") == [memories[1].id]
        assert len(find("filler")) == 37
        report = store.check_integrity()
        # The file was made with the default umask: only its modes are reported.
        assert all("chmod 600" in problem for problem in report.problems)
        assert report.details["lexical_index_rows"] == 39
    assert _raw(path, "SELECT COUNT(*) FROM memories_fts") == [(39,)]


def test_without_fts5_the_upgrade_stops_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kioku" / "memories.db"
    _version_3_db(path, [_memory(1, "t", "c")])
    monkeypatch.setattr(fts_rows, "CREATE_FTS", "CREATE VIRTUAL TABLE memories_fts USING fts0(x)")
    with pytest.raises(StoreError, match="without FTS5") as raised:
        open_sqlite_store(path)
    assert raised.value.hint is not None
    assert "left unchanged" in raised.value.hint
    assert _raw(path, "PRAGMA user_version") == [(3,)]


def test_integrity_check_reports_a_lexical_index_out_of_step(tmp_path: Path) -> None:
    path = tmp_path / "kioku" / "memories.db"
    with open_sqlite_store(path) as store:
        store.add_many([_memory(1, "a", "alpha"), _memory(2, "b", "beta")])
        assert store.check_integrity().ok
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM memories_fts WHERE memory_id = ?", ("mem_20260120_001",))
    conn.commit()
    conn.close()
    with open_sqlite_store(path) as store:
        report = store.check_integrity()
    assert not report.ok
    assert any("lexical index has 1 rows for 2 memories" in p for p in report.problems)
    assert any("restore from backup" in p for p in report.problems)


def test_version_7_indexes_japanese_proper_nouns_of_existing_memories(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite.connection import connect
    from tests.contract.conftest import build_memory

    path = tmp_path / "memories.db"
    memory = build_memory(1, trigger="旅行", content="田中さんと東京へ行った")
    conn = connect(path, 1000)
    try:
        migrate(conn, target=6)
        conn.execute("BEGIN")
        conn.execute(INSERT_V7, encode_memory(memory)[:-1])
        search.put_many(conn, [(memory.id, "旅行 行")])  # the terms version 6 made
        conn.execute("COMMIT")
    finally:
        conn.close()
    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION >= 7
        assert store.indexed_terms([memory.id])[memory.id] >= {"田中", "東京", "旅行"}
        assert [i for i, _ in store.search_lexical(["東京"], MemoryFilter(), 5)] == [memory.id]
