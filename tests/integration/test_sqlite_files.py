"""The SQLite store's files: modes, damage, locks, backups and many processes at once."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import fields
from pathlib import Path

import pytest

from kioku.adapters.store.sqlite import SqliteStore, open_sqlite_store
from kioku.adapters.store.sqlite.migrations import LATEST_VERSION
from kioku.adapters.store.sqlite.queries import PATCH_RELATIONS, PATCH_WHITELIST
from kioku.errors import StoreCorruptError, StoreError, StoreLockedError
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import build_memory


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


# -- files and modes ------------------------------------------------------------------------


def test_new_directory_and_files_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "home" / "kioku" / "memories.db"
    old_umask = os.umask(0o022)
    try:
        store = open_sqlite_store(path)
    finally:
        os.umask(old_umask)
    with store:
        store.add(build_memory(1))
        assert _mode(path.parent) == 0o700
        assert _mode(path) == 0o600
        for side in ("-wal", "-shm"):
            assert _mode(path.with_name(path.name + side)) == 0o600
        assert store.path == path
        report = store.check_integrity()
        assert report.ok, report.problems


def test_loose_modes_are_reported_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "kioku" / "memories.db"
    with open_sqlite_store(path) as store:
        path.chmod(0o644)
        path.parent.chmod(0o755)
        report = store.check_integrity()
    assert not report.ok
    assert any(f"chmod 600 {path}" in p for p in report.problems)
    assert any(f"chmod 700 {path.parent}" in p for p in report.problems)


def test_a_text_file_is_a_corrupt_store(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    path.write_text("this is not a database\n" * 100)
    with pytest.raises(StoreCorruptError) as raised:
        open_sqlite_store(path)
    assert str(path) in raised.value.message
    assert raised.value.hint is not None
    assert "kioku backup" in raised.value.hint
    assert "mv " in raised.value.hint
    assert path.read_text().startswith("this is not a database")  # left as it was


def test_a_damaged_file_is_reported_not_leaked(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    with open_sqlite_store(path) as store:
        store.add_many([build_memory(n, content="x" * 3000) for n in range(200)])
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(page * 2, len(data) - page, page * 3):
        data[offset : offset + 200] = b"\xa5" * 200  # scribble over many pages
    path.write_bytes(bytes(data))
    try:
        store = open_sqlite_store(path)
    except StoreCorruptError:
        return
    with store:
        report = store.check_integrity()
        assert not report.ok
        assert any("kioku backup" in problem for problem in report.problems)
        with pytest.raises(StoreCorruptError):
            store.list(MemoryFilter())


def test_a_held_write_lock_is_a_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    store = open_sqlite_store(path, busy_timeout_ms=200)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreLockedError) as raised:
            store.add(build_memory(1))
        assert str(path) in raised.value.message
        assert "another kioku process" in raised.value.message
        assert raised.value.hint is not None
        assert "busy_timeout_ms" in raised.value.hint
        assert store.count(MemoryFilter()) == 0  # reading still works meanwhile
        with pytest.raises(StoreLockedError):
            store.set_state("k", "v")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.add(build_memory(1))
    assert store.count(MemoryFilter()) == 1
    store.close()


def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    store = open_sqlite_store(tmp_path / "memories.db")
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.get("mem_20250115_143052_00000001")


def test_threads_share_one_store(tmp_path: Path) -> None:
    with open_sqlite_store(tmp_path / "memories.db") as store:

        def work(offset: int) -> None:
            for n in range(offset, offset + 50):
                with store.atomic():
                    store.add(build_memory(n))
                    store.mark_recalled([build_memory(n).id])
                store.list(MemoryFilter(limit=5))

        threads = [threading.Thread(target=work, args=(i * 1000,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.count(MemoryFilter(recalled_since_last_batch=True)) == 200


def test_patch_whitelist_maps_every_patch_field() -> None:
    assert set(PATCH_WHITELIST) | {PATCH_RELATIONS} == {f.name for f in fields(MemoryPatch)}
    assignment = re.compile(r"^[a-z_]+ = \?(, [a-z_]+ = \?)*$")
    assert all(assignment.match(column.sql) for column in PATCH_WHITELIST.values())


# -- backups ------------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from dataclasses import replace
    from pathlib import Path
    from kioku.adapters.store.sqlite import open_sqlite_store
    from kioku.core.model import Relation, RelationType
    from tests.contract.conftest import build_memory

    path, stop = Path(sys.argv[1]), Path(sys.argv[2])
    previous = None
    n = 0
    with open_sqlite_store(path) as store:
        while not stop.exists() and n < 20000:
            n += 1
            memory = build_memory(n, content="x" * 500)
            if previous is not None:
                memory = replace(memory, relations=(Relation(previous, RelationType.CONTINUES),))
            store.add(memory)
            previous = memory.id
    """
)


def _wait_for(condition: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def _check_backup(target: Path) -> int:
    assert _mode(target) == 0o600
    with open_sqlite_store(target) as copy:
        report = copy.check_integrity()
        assert report.details["integrity_check"] == ["ok"]
        assert report.details["foreign_key_violations"] == 0
        count = copy.count(MemoryFilter())
        # Each memory links to the one before it: a torn copy would break the chain.
        links = _raw(target, "SELECT COUNT(*) FROM relations")[0][0]
        assert links == count - 1
        newest = copy.list(MemoryFilter(limit=1))[0]
        assert len(newest.relations) == (1 if count > 1 else 0)
    return count


def test_backup_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "kioku" / "memories.db"
    stop = tmp_path / "stop"
    repo = Path(__file__).resolve().parents[2]
    with open_sqlite_store(path) as store:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(stop)],
            cwd=repo,
            stderr=subprocess.PIPE,
        )
        try:
            _wait_for(lambda: store.count(MemoryFilter()) >= 50)
            (tmp_path / "backups").mkdir()
            counts = []
            for i in range(3):
                before = store.count(MemoryFilter())
                target = tmp_path / "backups" / f"backup-{i}.db"
                store.backup(target)
                after = store.count(MemoryFilter())
                copied = _check_backup(target)
                assert before <= copied <= after
                counts.append(copied)
        finally:
            stop.touch()
            _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
        assert counts == sorted(counts)
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [
        "backup-0.db",
        "backup-1.db",
        "backup-2.db",
    ]


def test_backup_refuses_an_existing_target_and_atomic(tmp_path: Path) -> None:
    with open_sqlite_store(tmp_path / "memories.db") as store:
        store.add(build_memory(1))
        target = tmp_path / "copy.db"
        target.write_text("keep me")
        with pytest.raises(StoreError, match="already exists"):
            store.backup(target)
        assert target.read_text() == "keep me"
        with pytest.raises(StoreError, match="atomic"), store.atomic():
            store.backup(tmp_path / "other.db")
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
        fresh = tmp_path / "new-dir" / "copy.db"
        with pytest.raises(StoreError, match="does not exist"):
            store.backup(fresh)  # no directory is created behind the caller's back
        assert not fresh.parent.exists()
        fresh.parent.mkdir()
        store.backup(fresh)
        assert _check_backup(fresh) == 1


# -- many processes on one brand-new file ---------------------------------------------------

ADDER = textwrap.dedent(
    """
    import secrets, sys, time
    from dataclasses import replace
    from pathlib import Path
    from kioku.adapters.store.sqlite import open_sqlite_store
    from kioku.errors import DuplicateIdError
    from tests.contract.conftest import build_memory

    path, go, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    while not go.exists():
        time.sleep(0.001)
    with open_sqlite_store(path) as store:
        added = 0
        while added < 250:
            memory = build_memory(0, trigger=f"{tag}-{added}")
            memory = replace(memory, id=f"mem_20250115_143052_{secrets.token_hex(4)}")
            try:
                store.add(memory)
            except DuplicateIdError:
                continue
            added += 1
    """
)


def test_four_processes_on_a_brand_new_file(tmp_path: Path) -> None:
    path = tmp_path / "kioku" / "memories.db"
    go = tmp_path / "go"
    repo = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADDER, str(path), str(go), f"p{i}"],
            cwd=repo,
            stderr=subprocess.PIPE,
        )
        for i in range(4)
    ]
    time.sleep(0.5)  # let every interpreter start and wait at the line
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    with open_sqlite_store(path) as store:
        assert store.count(MemoryFilter()) == 1000
        triggers = {m.trigger for m in store.iter(MemoryFilter())}
        assert triggers == {f"p{i}-{n}" for i in range(4) for n in range(250)}
        report = store.check_integrity()
        assert report.ok, report.problems
    versions = [row[0] for row in _raw(path, "SELECT version FROM schema_migrations")]
    assert versions == list(range(1, LATEST_VERSION + 1))


def test_store_is_the_documented_type(tmp_path: Path) -> None:
    with open_sqlite_store(tmp_path / "m.db") as store:
        assert isinstance(store, SqliteStore)
        assert store.stats(None, None).size_bytes >= (tmp_path / "m.db").stat().st_size
