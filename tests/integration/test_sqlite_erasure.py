"""Erasure on real SQLite files: the migration that adds it, the append-only audit log, the
write-ahead log under a reader, and salvaging a damaged store."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.store.sqlite import open_sqlite_store
from kioku.adapters.store.sqlite.codec import MEMORY_COLUMNS, encode_memory
from kioku.adapters.store.sqlite.connection import connect
from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, applied_migrations, migrate
from kioku.adapters.store.sqlite.recover import salvage
from kioku.errors import StoreError
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import build_memory


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(r) for r in conn.execute(sql).fetchall()]


def test_version_5_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    memory = build_memory(1, source_ids=("s:1",))
    conn = connect(path, 1000)
    try:
        migrate(conn, target=5)
        # Version 5 has no ``details`` column (version 8 adds it): the last value goes.
        columns = ", ".join(MEMORY_COLUMNS[:-1])
        marks = ", ".join("?" for _ in MEMORY_COLUMNS[:-1])
        conn.execute(
            f"INSERT INTO memories ({columns}) VALUES ({marks})", encode_memory(memory)[:-1]
        )
    finally:
        conn.close()
    assert _raw(path, "PRAGMA user_version") == [(5,)]
    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION >= 6
        assert [m.id for m in store.list(MemoryFilter())] == [memory.id]
        assert "s:1" not in store.tombstones()
        store.add_tombstones(["s:1"], memory.created)
    with closing(sqlite3.connect(path)) as raw:
        assert (6, "erasure") in [(v, n) for v, n, _ in applied_migrations(raw)]
        key = raw.execute("SELECT value FROM state WHERE key = 'erasure_key'").fetchone()[0]
    assert len(bytes.fromhex(key)) == 32
    with open_sqlite_store(path) as store:  # opening again applies nothing, keeps the key
        assert "s:1" in store.tombstones()


def test_the_audit_log_refuses_updates_and_deletes(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    with open_sqlite_store(path) as store:
        store.append_audit(build_memory(1).created, "forget", "digest", 1, {})
    with closing(sqlite3.connect(path)) as raw:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute("UPDATE erasure_audit SET items = 0")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute("DELETE FROM erasure_audit")
    assert _raw(path, "SELECT items FROM erasure_audit") == [(1,)]


def test_a_reader_in_a_transaction_holds_the_log_and_vacuum_finishes_later(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memories.db"
    with open_sqlite_store(path) as store:
        memory = build_memory(1, trigger="the heronquill secret", content="heronquill")
        store.add(memory)
        reader = sqlite3.connect(path, isolation_level=None)
        try:
            reader.execute("BEGIN")
            assert reader.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
            store.delete(memory.id)
            report = store.scrub()
            assert report.index_merged
            assert not report.wal_truncated
            assert "read transaction" in report.wal_detail
            reader.execute("COMMIT")
        finally:
            reader.close()
        _before, _after, vacuumed = store.vacuum()
        assert vacuumed.wal_truncated
        for part in path.parent.iterdir():
            assert b"heronquill" not in part.read_bytes(), part.name


def _filled(home: Path, count: int) -> Path:
    with Kioku.open(home, env={}) as kioku:
        for n in range(count):
            kioku.remember(
                f"salvage test memory {n} " + "lorem ipsum dolor " * 20,
                f"content {n} " + "sit amet " * 30,
                intensity=40,
                category="work",
                source_ids=[f"s:{n}"],
            )
        db = kioku.db_path
        assert db is not None
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def _intact(path: Path) -> bool:
    try:
        return _raw(path, "PRAGMA integrity_check") == [("ok",)]
    except sqlite3.DatabaseError:
        return False


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_recover_salvages_a_store_with_damaged_pages(tmp_path: Path) -> None:
    db = _filled(tmp_path / "home", 120)
    damaged = tmp_path / "damaged.db"
    shutil.copy(db, damaged)
    with closing(sqlite3.connect(damaged)) as conn:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        leaves = [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf' "
                "ORDER BY pageno"
            )
        ]
    middle = len(leaves) // 2
    with open(damaged, "r+b") as file:
        for number in leaves[middle : middle + 3]:  # three leaves of the memories table
            file.seek((number - 1) * page)
            file.write(b"\xa5" * page)
    before = _digest(damaged)
    assert not _intact(damaged)
    target = tmp_path / "out" / "saved.db"
    target.parent.mkdir(mode=0o700)
    report = salvage(damaged, target)
    assert _digest(damaged) == before  # the source is never modified
    assert not damaged.with_name("damaged.db-wal").exists()
    memories = next(t for t in report.tables if t.table == "memories")
    assert 0 < memories.saved < 120
    assert memories.unreadable >= 1
    assert not report.complete
    assert _raw(target, "PRAGMA integrity_check") == [("ok",)]
    with open_sqlite_store(target) as store:
        assert store.check_integrity().ok, store.check_integrity().problems
        assert store.count(MemoryFilter()) == memories.saved
        saved = store.list(MemoryFilter(limit=1))[0]
        assert saved.trigger.startswith("salvage test memory")
        assert store.search_lexical(["salvage"], MemoryFilter(), 5)  # the index was rebuilt


def test_recover_of_an_intact_store_saves_everything(tmp_path: Path) -> None:
    db = _filled(tmp_path / "home", 10)
    with open_sqlite_store(db) as store:
        memory = store.list(MemoryFilter(limit=1))[0]
        store.delete(memory.id)
        store.add_tombstones(list(memory.source_ids), memory.created)
    report = salvage(db, tmp_path / "copy.db")
    assert report.complete
    assert {t.table: t.saved for t in report.tables}["memories"] == 9
    with open_sqlite_store(tmp_path / "copy.db") as copy:
        assert copy.count(MemoryFilter()) == 9
        assert memory.source_ids[0] in copy.tombstones()  # the secret came along
    with pytest.raises(StoreError, match="already exists"):
        salvage(db, tmp_path / "copy.db")


def test_a_memory_row_refused_by_the_rules_is_dropped_and_counted(tmp_path: Path) -> None:
    db = _filled(tmp_path / "home", 3)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute("UPDATE memories SET emotional_intensity = 900 WHERE rowid = 1")
        conn.commit()
    report = salvage(db, tmp_path / "copy.db")
    memories = next(t for t in report.tables if t.table == "memories")
    assert (memories.saved, memories.dropped) == (2, 1)
    assert not report.complete
